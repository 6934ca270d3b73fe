"""Key press to first spoken word of ``capdesk screen --region ... --speak``, started cold (a new process,
as a desktop shortcut starts it), against ``capdesk --version`` (the interpreter and the CLI alone) in the
same run.

    python bench/bench_screen.py [--runs 5]

On a virtual display (Xvfb) a Qt window shows resources/samples/chelsea.png. The time counted runs from
starting the process to speech-dispatcher receiving the text, measured by a stand-in speech-dispatcher
on a socket of its own (SPEECHD_ADDRESS) that answers as the real one does and notes when the text came.
What the real speech-dispatcher adds before the first sound (espeak-ng starting on the text) is measured
apart when it is installed: the time from handing it a text to its BEGIN event.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHOTO = ROOT / "resources" / "samples" / "chelsea.png"
WINDOW = (
    "import sys, json\nfrom PySide6.QtGui import QPixmap\nfrom PySide6.QtWidgets import QApplication, QLabel\n"
    "app = QApplication([])\nw = QLabel()\nw.setPixmap(QPixmap(sys.argv[1]))\nw.move(0, 0)\nw.show()\n"
    "from PySide6.QtCore import QTimer\n"
    "QTimer.singleShot(300, lambda: print(json.dumps([w.x(), w.y(), w.width(), w.height()]), flush=True))\n"
    "app.exec()\n")


class FakeSpeechd:
    """Answers SSIP as speech-dispatcher does and notes when each text arrives (time.monotonic)."""

    def __init__(self, path: Path) -> None:
        self.arrived: list[float] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.server.accept()
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        f = conn.makefile("rb")
        receiving = False
        for raw in f:
            line = raw.decode().rstrip("\r\n")
            if receiving:
                if line == ".":
                    receiving = False
                    conn.sendall(b"225-1\r\n225 OK MESSAGE QUEUED\r\n702-1\r\n702-1\r\n702 END\r\n")
                elif not self.arrived or self.arrived[-1] < 0:
                    self.arrived.append(time.monotonic())
                continue
            if line == "SPEAK":
                receiving = True
                conn.sendall(b"230 OK RECEIVING DATA\r\n")
            elif line == "QUIT":
                break  # the client closes without reading the goodbye
            else:
                conn.sendall(b"200 OK\r\n")
        conn.close()


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def speechd_begin_s() -> float | None:
    """Real speech-dispatcher (already running for this user): text handed over to its BEGIN event."""
    from capdesk.screen.speechd import Dispatcher, SpeechdUnavailable

    try:
        d = Dispatcher(spawn=False)
    except SpeechdUnavailable:
        return None
    try:
        d._command("SET self NOTIFICATION begin on")
        t = time.monotonic()
        d.say("A tabby cat lying on a rug.")
        while True:
            code, _ = d._reply(event_ok=True)
            if code == "701":
                return time.monotonic() - t
    finally:
        d.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="capdesk-bench-screen-"))
    r, w = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stderr=subprocess.DEVNULL)
    os.close(w)
    display = ":" + os.fdopen(r).readline().strip()
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", SPEECHD_ADDRESS=f"unix_socket:{tmp / 'speechd.sock'}",
               XDG_RUNTIME_DIR=str(tmp))
    fake = FakeSpeechd(tmp / "speechd.sock")
    win = subprocess.Popen([sys.executable, "-c", WINDOW, str(PHOTO)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        x, y, wd, ht = json.loads(win.stdout.readline())
        screen = [sys.executable, "-m", "capdesk", "screen", "--region", f"{x},{y},{wd},{ht}", "--speak"]
        version = [sys.executable, "-m", "capdesk", "--version"]
        timed(screen, env)  # the first run fills the page cache: every run after it is what a user meets
        base, to_word, total = [], [], []
        for _ in range(args.runs):
            base.append(timed(version, env))
            fake.arrived.append(-1.0)
            t = time.monotonic()
            subprocess.run(screen, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            total.append(time.monotonic() - t)
            to_word.append(fake.arrived[-1] - t)
    finally:
        win.terminate()
        xvfb.terminate()
    begin = speechd_begin_s()
    med = statistics.median
    print(f"cores: {os.cpu_count()}, runs: {args.runs}, picture {wd}x{ht}")
    print(f"capdesk --version (baseline):               median {med(base):.3f} s  (all: "
          f"{', '.join(f'{v:.2f}' for v in base)})")
    print(f"capdesk screen --region --speak, text out:  median {med(to_word):.3f} s  (all: "
          f"{', '.join(f'{v:.2f}' for v in to_word)})")
    print(f"  the same, over the baseline:              median {med(to_word) - med(base):.3f} s")
    print(f"  whole process (until speech ended):       median {med(total):.3f} s")
    print("speech-dispatcher text to BEGIN (first sound): " + ("not measured (none running for this user)"
                                                                 if begin is None else f"{begin:.3f} s"))


if __name__ == "__main__":
    main()
