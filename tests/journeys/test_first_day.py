"""What a new user meets on a first day: clear one-line messages instead of tracebacks and aborts,
a watcher that stops however it was started, and a user service that runs it."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, needs_torch, run_cli

from capdesk.gui.app import display_problem

UNIT = ROOT / "resources" / "capdesk-watch@.service"

# Makes "import torch" fail in a fresh interpreter, as on a machine without PyTorch.
HIDE_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _NoTorch())
for m in [m for m in sys.modules if m.split(".")[0] == "torch"]:
    del sys.modules[m]
"""


def _python(code: str, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("argv", [["train", "finetune", "--help"], ["train", "release", "--help"],
                                  ["train", "fit", "data"]])
def test_training_without_torch_says_what_to_install(argv):
    r = _python(HIDE_TORCH + "import sys\nfrom capdesk.cli.main import main\nsys.exit(main(sys.argv[1:]))", *argv)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "PyTorch" in r.stderr and "download.pytorch.org/whl/cpu" in r.stderr and "capdesk[train]" in r.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_train_help_without_torch_lists_the_commands_and_what_to_install(flag):
    """Help is help: the training commands are listed (exit 0), with what installing PyTorch gives."""
    r = _python(HIDE_TORCH + "import sys\nfrom capdesk.cli.main import main\nsys.exit(main(sys.argv[1:]))",
                "train", flag)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("usage: capdesk train")
    for command in ("prepare", "fit", "evaluate", "export", "finetune", "release", "scst", "ensemble", "shrink"):
        assert f"\n  {command} " in r.stdout, command
    assert "PyTorch" in r.stdout and "capdesk[train]" in r.stdout


@needs_torch
def test_train_commands_listed_without_torch_are_training_s_own():
    from capdesk.cli.main import TRAIN_COMMANDS
    from training.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    own = [(a.metavar or a.dest, a.help) for a in sub._choices_actions]
    assert own == list(TRAIN_COMMANDS)


def test_python_m_training_without_torch_says_what_to_install():
    r = _python(HIDE_TORCH + "import runpy, sys\nsys.argv = ['training', '--help']\n"
                "runpy.run_module('training', run_name='__main__')")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "PyTorch" in r.stderr, r.stderr


def test_gui_without_a_display_says_so_and_exits_2():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    r = subprocess.run([sys.executable, "-m", "capdesk", "gui"], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)  # not Qt's abort (134)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "DISPLAY" in lines[0] and "xcb" not in lines[0]


def test_display_problem_rules():
    assert display_problem({}, "linux") and "DISPLAY" in display_problem({}, "linux")
    assert display_problem({"DISPLAY": ":0"}, "linux") is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert "DISPLAY" in display_problem({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, "linux")
    assert display_problem({}, "win32") is None and display_problem({}, "darwin") is None


def test_beam_and_provider_errors_speak_the_help_s_language():
    r = run_cli("caption", "--beam", "x", str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 2 and "--beam: expected a whole number from 1 to 20, got 'x'" in r.stderr
    assert "_beam" not in r.stderr
    assert "got '0'" in run_cli("batch", "--beam", "0", "x").stderr
    r = run_cli("caption", "--provider", "gpu", str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 2 and "'gpu' is not available" in r.stderr
    offered = r.stderr.split("offers:")[1].strip()
    assert "cpu" in offered.split(", ") and "ExecutionProvider" not in offered


# -- the watcher stops on SIGINT and SIGTERM, whatever it inherited --------------------------------
def _start_watch(cmd: list[str], env: dict | None = None, ignore_sigint: bool = False
                 ) -> tuple[subprocess.Popen, threading.Event, list[str]]:
    def preexec() -> None:  # as nohup, '&' in a script or a service manager leave it
        if ignore_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=preexec)
    ready, err = threading.Event(), []

    def read_err() -> None:
        for line in proc.stderr:
            err.append(line)
            if "capdesk: watching" in line:
                ready.set()

    threading.Thread(target=read_err, daemon=True).start()
    return proc, ready, err


def _wait_ready(proc: subprocess.Popen, ready: threading.Event, err: list[str]) -> None:
    for _ in range(240):  # the readiness line, or the process ending early: whichever comes first
        if ready.wait(0.5) or proc.poll() is not None:
            break
    assert ready.is_set(), "".join(err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_watch_stops_on_signal_even_when_sigint_was_ignored(tmp_path, sig):
    folder = tmp_path / "w"
    folder.mkdir()
    proc, ready, err = _start_watch([sys.executable, "-m", "capdesk", "watch", str(folder), "--beam", "1"],
                                    ignore_sigint=True)
    try:
        _wait_ready(proc, ready, err)
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 0, "".join(err)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc.stderr.close()
    assert any("stopped watching" in line for line in err)


# -- the systemd user unit -------------------------------------------------------------------
def _unit_service_section() -> dict[str, str]:
    values: dict[str, str] = {}
    section = ""
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            values[key] = value
    return values


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_service_unit_verifies(tmp_path):
    """systemd's own checker: syntax, known keys, and that ExecStart's program exists."""
    instance = tmp_path / "capdesk-watch@-tmp-pictures.service"  # the instance for /tmp/pictures
    shutil.copy(UNIT, tmp_path / UNIT.name)
    instance.symlink_to(UNIT.name)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    r = subprocess.run(["systemd-analyze", "verify", "--user", str(instance)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


def test_service_unit_command_starts_watch_and_stops_on_sigterm(tmp_path):
    """The unit's exact ExecStart line, specifiers filled in as systemd does, started and then
    stopped the way systemctl stop does it (KillSignal, SIGTERM)."""
    svc = _unit_service_section()
    assert svc["KillSignal"] == "SIGTERM" and svc["Type"] == "exec"
    folder = tmp_path / "My Pictures"  # a space: the instance argument must stay one argument
    folder.mkdir()
    home = str(Path.home())
    argv = shlex.split(svc["ExecStart"].replace("%I", str(folder)).replace("%h", home))
    assert argv[:3] == ["/usr/bin/env", "capdesk", "watch"] and argv[3] == str(folder)
    env_line = svc["Environment"]
    assert env_line.startswith("PATH=")
    # The unit's PATH, with this interpreter's scripts folder first (what 'systemctl --user edit'
    # does for a virtual environment), so that the capdesk under test is the one started.
    scripts = Path(sys.executable).parent
    if not (scripts / "capdesk").exists():
        pytest.skip(f"no capdesk script next to {sys.executable}")
    path = f"{scripts}:{env_line[len('PATH='):].replace('%h', home)}"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = path
    proc, ready, err = _start_watch(argv + ["--beam", "1"], env=env)
    try:
        _wait_ready(proc, ready, err)
        shutil.copy(SAMPLES / "chelsea.png", folder / "chelsea.png")
        line = proc.stdout.readline()
        assert line.startswith(str(folder / "chelsea.png") + "\t") and "cat" in line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=int(svc["TimeoutStopSec"])) == 0, "".join(err)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc.stderr.close()
    assert (folder / "chelsea.txt").exists() and (folder / "chelsea.png.xmp").exists()
    assert any("stopped watching" in line for line in err)
    assert int(svc["RestartPreventExitStatus"]) == 2  # usage errors are not retried
    r = subprocess.run([*argv[:3], str(tmp_path / "no such folder")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and re.search(r"not a folder", r.stderr)


def _sound_device_present() -> bool:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    return Path("/dev/snd").exists() or bool(os.environ.get("PULSE_SERVER")) or (
        bool(runtime) and (Path(runtime) / "pulse" / "native").exists())


@pytest.mark.skipif(_sound_device_present(), reason="this machine can play sound: the failure cannot happen")
def test_speak_without_a_sound_device_says_so_and_exits_1():
    """No player program, or a player with no sound card behind it (ALSA's dozen lines): one line
    on stderr saying the speech could not be played, and exit status 1; the captions still print."""
    r = run_cli("caption", "--speak", "--beam", "1", str(SAMPLES / "chelsea.png"))
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith(str(SAMPLES / "chelsea.png") + "\t")
    speech = [line for line in r.stderr.splitlines() if not line.startswith(f"capdesk: {SAMPLES}")]
    assert len(speech) == 1 and speech[0].startswith("capdesk: error:"), r.stderr
    assert "ALSA lib" not in r.stderr and ("audio player" in speech[0] or "sound device" in speech[0])
