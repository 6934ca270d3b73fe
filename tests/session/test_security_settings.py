"""A FIFO (or anything else that is not a plain file) at settings.json never holds CapDesk up: it is opened
without waiting for a writer, refused in one line, and the defaults are used. Real FIFOs, real processes
(``capdesk service`` and ``capdesk gui`` read the settings this way before anything else)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from conftest import ROOT

from capdesk.session.settings import Settings

LOAD = ("from capdesk.session.settings import Settings\n"
        "s, problem = Settings.load()\n"
        "print('DEFAULTS', s == Settings())\n"
        "print('PROBLEM', problem)\n")


def _fifo(tmp_path) -> str:
    p = tmp_path / "settings.json"
    os.mkfifo(p)
    return str(p)


def test_a_fifo_at_settings_json_is_refused_in_one_line(tmp_path):
    cfg = _fifo(tmp_path)
    r = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, CAPDESK_SETTINGS=cfg))
    assert r.returncode == 0, r.stderr
    assert "DEFAULTS True" in r.stdout
    (problem,) = [line for line in r.stdout.splitlines() if line.startswith("PROBLEM")]
    assert cfg in problem and "not a regular file" in problem and "FIFO" in problem


def test_the_window_opens_with_a_fifo_at_settings_json(tmp_path):
    pytest.importorskip("PySide6")
    cfg = _fifo(tmp_path)
    code = ("from PySide6.QtWidgets import QApplication\n"
            "from capdesk.session.settings import Settings\n"
            "from capdesk.gui.main_window import MainWindow\n"
            "app = QApplication([])\n"
            "s, problem = Settings.load()\n"
            "w = MainWindow(s, problem)\n"
            "w.show(); app.processEvents()\n"
            "print('UP', w.isVisible())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env=dict(os.environ, CAPDESK_SETTINGS=cfg, QT_QPA_PLATFORM="offscreen"))
    assert r.returncode == 0, r.stderr
    assert "UP True" in r.stdout


@pytest.mark.slow  # 4.7 s measured on two busy cores
def test_the_service_starts_and_stops_with_a_fifo_at_settings_json(tmp_path):
    """The service reads the settings (their screen shortcut) as it starts; SIGTERM then stops it."""
    cfg = _fifo(tmp_path)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, CAPDESK_SETTINGS=cfg, XDG_RUNTIME_DIR=str(runtime))
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "service", "--verbose"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    ready = threading.Event()

    def read_err() -> None:
        for line in proc.stderr:
            said.append(line)
            if "service ready" in line:
                ready.set()

    threading.Thread(target=read_err, daemon=True).start()
    try:
        assert ready.wait(120), f"the service never got ready: {''.join(said)[-2000:]}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("SIGTERM did not stop the service") from None



def test_settings_larger_than_the_bound_are_not_read_whole(tmp_path):
    p = tmp_path / "settings.json"
    with open(p, "wb") as fh:
        fh.truncate(8 << 30)  # sparse
    s, problem = Settings.load(p)
    assert s == Settings() and "larger than" in problem

