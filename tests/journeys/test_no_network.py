"""No network at run time: ``capdesk watch`` and ``capdesk gui`` run for ~30 s each under strace,
with ONNX Runtime loaded and captioning, and make no socket call to anything but a local
(AF_UNIX) socket, and write nothing under ~/.cache/Microsoft (ONNX Runtime's telemetry store).

ONNX Runtime 1.31's official builds look up a telemetry host about 9 s after start; a shorter
run could miss it, so the default is 30 s (``CAPDESK_NO_NETWORK_SECONDS`` shortens it locally).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

SECONDS = float(os.environ.get("CAPDESK_NO_NETWORK_SECONDS", "30"))
STRACE = shutil.which("strace")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(STRACE is None, reason="needs strace (Debian: apt-get install strace)"),
]

# connect/sendto/sendmsg with an address: the family is the first field of the address.
_ADDRESSED = re.compile(r"\b(connect|sendto|sendmsg|sendmmsg|bind)\((\d+), \{sa_family=(AF_\w+)")
_SOCKET = re.compile(r"\bsocket\((AF_\w+|PF_\w+)")


def _home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    env = dict(os.environ)
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local/share"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
               QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("ORT_DISABLE_TELEMETRY", None)  # CapDesk must switch it off itself
    env.pop("CAPDESK_MODELS", None)
    home.mkdir()
    return env


def _traced(tmp_path: Path, args: list[str], env: dict[str, str], during=None) -> tuple[str, str]:
    """Run ``python -m capdesk ARGS`` under strace for SECONDS, then SIGTERM it; (trace, its stderr)."""
    trace = tmp_path / f"trace-{args[0]}.txt"
    err = tmp_path / f"stderr-{args[0]}.txt"
    with open(err, "w") as err_fh:
        proc = subprocess.Popen([STRACE, "-f", "-qq", "-e", "trace=network,openat", "-o", str(trace),
                                 sys.executable, "-m", "capdesk", *args],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err_fh)
    t0 = time.monotonic()
    if during:
        during(t0)
    time.sleep(max(0.0, SECONDS - (time.monotonic() - t0)))
    child = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    for pid in child:  # the traced python; strace ends when it does
        os.kill(int(pid), signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return trace.read_text(errors="replace"), err.read_text(errors="replace")


def _assert_offline(text: str, env: dict[str, str], what: str) -> None:
    assert "libonnxruntime" in text, f"{what}: ONNX Runtime was never loaded, so the test proves nothing"
    remote = [ln for ln in text.splitlines() if (m := _ADDRESSED.search(ln)) and m.group(3) != "AF_UNIX"]
    assert not remote, f"{what} made network calls:\n" + "\n".join(remote[:10])
    inet = [ln for ln in text.splitlines() if (m := _SOCKET.search(ln)) and m.group(1) in
            ("AF_INET", "AF_INET6", "PF_INET", "PF_INET6")]
    assert not inet, f"{what} opened internet sockets:\n" + "\n".join(inet[:10])
    home = Path(env["HOME"])
    assert not (home / ".cache" / "Microsoft").exists(), f"{what} wrote ONNX Runtime telemetry files"
    assert not list(home.rglob("*deviceid*")), f"{what} wrote a device id"


def test_watch_sends_nothing_and_writes_no_telemetry(tmp_path):
    env = _home(tmp_path)
    folder = tmp_path / "watched"
    folder.mkdir()

    def drop_image(t0: float) -> None:
        time.sleep(min(8.0, SECONDS / 3))  # the model is loaded by now (or soon): the watcher captions it
        shutil.copy(SAMPLES / "rocket.jpg", folder / "rocket.jpg")

    text, stderr = _traced(tmp_path, ["watch", "--beam", "1", str(folder)], env, drop_image)
    assert "Traceback" not in stderr, stderr
    assert (folder / "rocket.txt").exists(), f"the watcher never captioned the image: {stderr}"
    _assert_offline(text, env, "capdesk watch")
    _assert_only_own_files(env)


def _assert_only_own_files(env: dict[str, str]) -> None:
    """Files written in the home folder outside CapDesk's own folders: none."""
    home = Path(env["HOME"])
    stray = [p for p in home.rglob("*") if p.is_file() and "capdesk" not in p.relative_to(home).parts]
    assert not stray, f"files written outside CapDesk's folders: {stray[:10]}"


def test_gui_sends_nothing_and_writes_no_telemetry(tmp_path):
    pytest.importorskip("PySide6")
    env = _home(tmp_path)
    folder = tmp_path / "pictures"
    folder.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", folder / "chelsea.png")  # selected and captioned at once
    text, stderr = _traced(tmp_path, ["gui", str(folder)], env)
    assert "Traceback" not in stderr, stderr
    _assert_offline(text, env, "capdesk gui")
    _assert_only_own_files(env)
