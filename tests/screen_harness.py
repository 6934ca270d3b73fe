"""What the screen tests share: a virtual X display of their own, a session bus with the accessibility bus on
it, a real Qt window showing a sample photo (or words), and ``capdesk screen`` run against them. Used by the
screen room's tests and by the journeys that drive the screen key under Orca and in Firefox."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "resources" / "samples"

PHOTO = SAMPLES / "chelsea.png"  # a tabby cat
START_TIMEOUT_S = 60.0  # programs starting on two busy cores

# The window under test: the photo in a label ("label"), or in a focused push button beside another
# button ("button"), or two lines of words in a label instead of the photo ("words"). It prints its
# geometry, in screen pixels, once it is active and the focus is set.
SIGN = "Gate seven departures delayed\nMeeting moved to room twelve"
WINDOW = f"WORDS = {SIGN!r}\n" + r"""
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget
app = QApplication(sys.argv[:1])
pic, mode = sys.argv[1], sys.argv[2]
w = QWidget()
w.setWindowTitle("Screen test window")
lay = QVBoxLayout(w)
pm = QPixmap(pic)
if mode == "label":
    focus = QLabel()
    focus.setPixmap(pm)
elif mode == "words":
    focus = QLabel(WORDS)
    font = focus.font()
    font.setPixelSize(15)
    focus.setFont(font)
    focus.setStyleSheet("background: white; color: black; padding: 12px")
else:
    lay.addWidget(QPushButton("Other button"))
    focus = QPushButton()
    focus.setIcon(QIcon(pm))
    focus.setIconSize(pm.size())
    focus.setAccessibleName("Photo of the day")
lay.addWidget(focus)
w.move(40, 30)
w.show()
w.activateWindow()
focus.setFocus()

def report():
    if not w.isActiveWindow() or (mode == "button" and not focus.hasFocus()):
        w.activateWindow()
        focus.setFocus()
        QTimer.singleShot(50, report)
        return
    g, tl = w.geometry(), focus.mapToGlobal(focus.rect().topLeft())
    print(json.dumps({"window": [g.x(), g.y(), g.width(), g.height()],
                      "focus": [tl.x(), tl.y(), focus.width(), focus.height()]}), flush=True)

QTimer.singleShot(0, report)
app.exec()
"""


def _read_line(proc: subprocess.Popen, stream, timeout: float) -> str:
    """One line from ``stream`` within ``timeout`` seconds (the process must still run)."""
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise AssertionError(f"{proc.args[0]} gave no line in {timeout:.0f} s (exit status {proc.poll()})")
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno(), 1)
            if not chunk:
                continue
            buf += chunk
    return buf.decode().strip()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def display():
    with _xvfb() as number:
        yield number


@contextlib.contextmanager
def _xvfb():
    """A virtual X display of its own: its name (":N")."""
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        with os.fdopen(r, "rb", buffering=0) as f:
            number = _read_line(proc, f, START_TIMEOUT_S)
        yield f":{number}"
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def session_bus(display):
    """A D-Bus session bus of the test's own, with the accessibility bus started on it; its address, or a
    skip saying why it cannot be had."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("needs dbus-daemon (Debian package dbus-daemon)")
    launcher = next((p for p in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher",
                                 shutil.which("at-spi-bus-launcher")) if p and Path(p).exists()), None)
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env=dict(os.environ, DISPLAY=display))
    procs = [bus]
    try:
        address = _read_line(bus, bus.stdout, START_TIMEOUT_S)
        env = dict(os.environ, DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address)
        if launcher is None:
            pytest.skip("needs at-spi2-core's at-spi-bus-launcher (Debian package at-spi2-core)")
        procs.append(subprocess.Popen([launcher, "--launch-immediately"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)


def _env(display: str, bus: str | None = None, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "AT_SPI_BUS_ADDRESS", "SPEECHD_ADDRESS")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", QT_ACCESSIBILITY="1", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1")
    if bus:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    else:
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.update(more)
    return env


class Window:
    def __init__(self, env: dict[str, str], mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", WINDOW, str(PHOTO), mode], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        geo = json.loads(_read_line(self.proc, self.proc.stdout, START_TIMEOUT_S))
        self.window, self.focus = geo["window"], geo["focus"]

    def close(self) -> None:
        _stop(self.proc)


@pytest.fixture(scope="module")
def label_window(display):
    w = Window(_env(display), "label")
    yield w
    w.close()


def screen(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "capdesk", "screen", *args], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _rect(r: list[int]) -> dict:
    return dict(zip(("x", "y", "width", "height"), r))
