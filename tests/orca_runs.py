"""The real-Orca runs, started in the background as soon as the tests are collected.

A run of the shared harness (``../shared/tools/orca_speech.sh``) is minutes of waiting by the clock: the
harness only offers fixed waits. One after another, in the foreground, the three runs were a quarter of
the suite. Started once the tests are collected, one at a time (Orca refuses a second Orca of the same
user), they wait while the rest of the suite works; each module's fixture then waits for its own run.

The rest of the suite runs at a lower priority (nice 10) from then on, so that the window and Orca under
the harness answer as fast as they would alone: the harness's waits do not stretch when they do not.
Each run is prepared from the environment and folder the suite started in, taken before any test ran: the
tests change ``os.environ`` (their own model and settings folders) while the runs are prepared.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

RUN_TIMEOUT_S = 900  # the harness's own limit
SUITE_NICE = 10


@dataclass
class Harness:
    """One run of the harness: its command line, environment and working folder (None: the suite's)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    base: Path  # the folder the run was prepared in: its steps, pictures, settings and the harness's out/


@dataclass
class _Run:
    name: str
    prepare: Callable[[Path, dict[str, str]], Harness]
    why_not: Callable[[], str | None]
    queued: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Outcome | None = None
    error: BaseException | None = None
    proc: subprocess.Popen | None = None

    def run(self, environ: dict[str, str], cwd: str) -> None:
        try:
            base = Path(tempfile.mkdtemp(prefix=f"capdesk-{self.name}-"))
            _folders.append(base)
            h = self.prepare(base, dict(environ))
            # A session of its own: an interrupted suite can stop everything the harness started.
            self.proc = subprocess.Popen(h.argv, env=h.env, cwd=h.cwd or cwd, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, start_new_session=True)
            try:
                out, err = self.proc.communicate(timeout=RUN_TIMEOUT_S + 60)
            except subprocess.TimeoutExpired:
                _stop_session(self.proc.pid)
                out, err = self.proc.communicate()
            self.outcome = Outcome(self.proc.returncode, out, err, base)
        except BaseException as exc:  # handed to the fixture that waits for this run, in the test's thread
            self.error = exc
        finally:
            self.done.set()


_runs: dict[str, _Run] = {}
_folders: list[Path] = []
_lock = threading.Lock()


def register(module_file: str, prepare: Callable[[Path, dict[str, str]], Harness],
             why_not: Callable[[], str | None]) -> None:
    """Name a test module's harness run: ``prepare(folder, environ)`` writes what it needs into a new folder
    and says how to run it (``environ``: the suite's environment as it started, a copy to change);
    ``why_not()`` says why it cannot run here, or None."""
    name = Path(module_file).stem
    _runs.setdefault(name, _Run(name, prepare, why_not))


def start(module_files: Iterable[str]) -> bool:
    """Start, in the background, the runs of these modules (the order given), those that can run here;
    then lower the priority of this (the suite's) thread. Whether any was started."""
    order = [_runs[name] for name in dict.fromkeys(Path(f).stem for f in module_files) if name in _runs]
    todo = [r for r in order if r.why_not() is None]
    if not todo:
        return False
    for r in todo:
        r.queued = True
    environ, cwd = dict(os.environ), os.getcwd()

    def one_after_another() -> None:
        for r in todo:
            r.run(environ, cwd)

    threading.Thread(target=one_after_another, name="orca-runs", daemon=True).start()
    # Only this thread: the one above keeps the priority it was started with, and so do the runs it starts.
    with contextlib.suppress(OSError):
        os.nice(SUITE_NICE)
    return True


def outcome(module_file: str) -> Outcome:
    """The harness run of this module: waited for if it runs in the background, run here if it was not
    started (a module imported outside a collected suite)."""
    r = _runs[Path(module_file).stem]
    with _lock:
        inline = not r.queued
        r.queued = True
    if inline:
        r.run(dict(os.environ), os.getcwd())
    r.done.wait()
    if r.error is not None:
        raise r.error
    assert r.outcome is not None
    return r.outcome


def stop_all() -> None:
    """At the end of the suite: stop a run still going (the suite was interrupted) and remove the folders."""
    for r in _runs.values():
        if r.proc is not None and r.proc.poll() is None:
            _stop_session(r.proc.pid)
    for base in _folders:
        shutil.rmtree(base, ignore_errors=True)


def _stop_session(sid: int) -> None:
    """SIGTERM to every process of the session ``sid``: ``timeout`` and the harness put their children into
    process groups of their own, but not into sessions of their own."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command name is in parentheses and may hold spaces: the fields after it are plain.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == sid:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGTERM)
