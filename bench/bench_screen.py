"""Key press to speech-dispatcher receiving the description, for ``capdesk screen ... --speak``: started cold
(a new process loading the model, as a desktop shortcut starts it without a service), and answered by a
running ``capdesk service`` (a new client process each press, as a key binding starts one; the first press
after the service started, then the ones after it), and through the service's own X key grab (xdotool
presses the key), against ``capdesk --version`` (the interpreter and the CLI alone), all in the same run.

    python bench/bench_screen.py [--runs 5] [--picture resources/samples/page.png]

On a virtual display (Xvfb) with its own D-Bus session and accessibility bus, a Qt window shows
resources/samples/chelsea.png in a focused button. The time counted runs from starting the process (or
xdotool) to speech-dispatcher receiving the text, measured by a stand-in speech-dispatcher on a socket of
its own (SPEECHD_ADDRESS) that answers as the real one does and notes when the text came. What the real
speech-dispatcher adds before the first sound (espeak-ng starting on the text) is measured apart when it
is installed, on one of the bench's own: the time from handing it a text to its BEGIN event. The service's
memory is its resident set (VmRSS) idle after the runs, and its peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
KEY = "<Super>d"
WINDOW = (  # the photo in a focused button, as a web page's linked picture; prints where it is once focused
    "import sys, json\nfrom PySide6.QtCore import QTimer\nfrom PySide6.QtGui import QIcon, QPixmap\n"
    "from PySide6.QtWidgets import QApplication, QPushButton\n"
    "app = QApplication(sys.argv[:1])\npm = QPixmap(sys.argv[1])\nb = QPushButton()\nb.setIcon(QIcon(pm))\n"
    "b.setIconSize(pm.size())\nb.setAccessibleName('Photo of the day')\nb.move(0, 0)\nb.show()\n"
    "def report():\n    if not b.hasFocus():\n        b.activateWindow(); b.setFocus(); QTimer.singleShot(50, report)\n"
    "        return\n    tl = b.mapToGlobal(b.rect().topLeft())\n"
    "    print(json.dumps([tl.x(), tl.y(), b.width(), b.height()]), flush=True)\n"
    "QTimer.singleShot(0, report)\napp.exec()\n")


class FakeSpeechd:
    """Answers SSIP as speech-dispatcher does and notes when each text arrives (time.monotonic)."""

    def __init__(self, path: Path) -> None:
        self.arrived: list[float] = []
        self._cond = threading.Condition()
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
        receiving, first = False, True
        for raw in f:
            line = raw.decode().rstrip("\r\n")
            if receiving:
                if line == ".":
                    receiving = False
                    conn.sendall(b"225-1\r\n225 OK MESSAGE QUEUED\r\n702-1\r\n702-1\r\n702 END\r\n")
                elif first:
                    first = False
                    with self._cond:
                        self.arrived.append(time.monotonic())
                        self._cond.notify_all()
                continue
            if line == "SPEAK":
                receiving, first = True, True
                conn.sendall(b"230 OK RECEIVING DATA\r\n")
            elif line == "QUIT":
                break  # the client closes without reading the goodbye
            else:
                conn.sendall(b"200 OK\r\n")
        conn.close()

    def next_after(self, count: int, timeout: float = 120.0) -> float:
        """When text number ``count + 1`` arrived (waiting for it)."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.arrived) > count, timeout):
                raise SystemExit("speech-dispatcher was told nothing: the command failed")
            return self.arrived[count]


def press(cmd: list[str], env: dict[str, str], fake: FakeSpeechd) -> tuple[float, float]:
    """(start to text at speech-dispatcher, start to the process's end), in seconds."""
    count = len(fake.arrived)
    t = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() - t
    return fake.next_after(count) - t, end


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def speechd_begin_s(tmp: Path) -> float | None:
    """A real speech-dispatcher of the bench's own (espeak-ng, sound to ALSA's null device): the median
    time from handing it a text to its BEGIN event (the first sound), over 5 texts; None without one."""
    from capdesk.screen.speechd import Dispatcher, _try_connect

    exe = shutil.which("speech-dispatcher")
    if exe is None or not Path("/usr/lib/speech-dispatcher-modules/sd_espeak-ng").exists():
        return None
    home, sock = tmp / "speechd-home", tmp / "speechd-real.sock"
    (home / ".config" / "speech-dispatcher").mkdir(parents=True)
    (home / ".asoundrc").write_text("pcm.!default {\n  type null\n}\n")
    (home / ".config" / "speech-dispatcher" / "speechd.conf").write_text(
        f'LogDir "{home}"\nAudioOutputMethod "alsa"\nDefaultModule espeak-ng\n')
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_RUNTIME_DIR=str(tmp))
    proc = subprocess.Popen([exe, "-s", "-t", "0", "-c", "unix_socket", "-S", str(sock)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while (s := _try_connect(sock)) is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                return None
            time.sleep(0.05)
        s.close()
        d = Dispatcher({"SPEECHD_ADDRESS": f"unix_socket:{sock}"}, spawn=False)
        times = []
        try:
            d._command("SET self NOTIFICATION begin on")
            for _ in range(6):  # the first starts the espeak-ng module: not what a user meets
                t = time.monotonic()
                msg = d.say("A tabby cat lying on a rug.")
                while True:
                    code, _ = d._reply(event_ok=True)
                    if code == "701":
                        times.append(time.monotonic() - t)
                        break
                d.wait(msg, 30)
        finally:
            d.close()
        return statistics.median(times[1:])
    finally:
        proc.terminate()
        proc.wait(10)


def _line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"{proc.args[0]} ended without saying where it is")
    return line.strip()


def session(tmp: Path, procs: list[subprocess.Popen]) -> dict[str, str]:
    """A virtual display, a D-Bus session with the accessibility bus, and a runtime folder: the environment."""
    r, w = os.pipe()
    procs.append(subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                                  pass_fds=(w,), stderr=subprocess.DEVNULL))
    os.close(w)
    display = ":" + os.fdopen(r).readline().strip()
    env = {k: v for k, v in os.environ.items()
           if k not in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "AT_SPI_BUS_ADDRESS", "SPEECHD_ADDRESS")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", QT_ACCESSIBILITY="1", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
               SPEECHD_ADDRESS=f"unix_socket:{tmp / 'speechd.sock'}", XDG_RUNTIME_DIR=str(tmp),
               CAPDESK_SETTINGS=str(tmp / "settings.json"))
    launcher = next((p for p in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher")
                     if Path(p).exists()), None)
    if shutil.which("dbus-daemon") and launcher:
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        procs.append(bus)
        env["DBUS_SESSION_BUS_ADDRESS"] = _line(bus)
        procs.append(subprocess.Popen([launcher, "--launch-immediately"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    return env


def wait_for_service(env: dict[str, str], proc: subprocess.Popen) -> float:
    from capdesk.screen import client

    t = time.monotonic()
    while client.ask({"op": "ping"}, env, timeout=5) is None:
        if proc.poll() is not None:
            raise SystemExit(f"the service ended: {proc.stderr.read()}")
        time.sleep(0.02)
    return time.monotonic() - t


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def client_imports(cmd: list[str], env: dict[str, str]) -> str:
    """What the client process imports (python -X importtime): the time in all, capdesk's part, and
    whether anything heavy came in."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-m", "capdesk", *cmd], env=env, text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True).stderr
    total = ours = 0
    names = set()
    for line in err.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not cumulative.strip().isdigit():
            continue  # the header
        names.add(name.strip().split(".")[0])
        if not name.startswith("  "):  # top level: its cumulative time holds what it imported
            total += int(cumulative)
            ours += int(cumulative) if name.strip().startswith("capdesk") else 0
    heavy = sorted(names & {"numpy", "onnxruntime", "PIL", "PySide6", "argparse", "rapidocr_onnxruntime"})
    return (f"client imports (python -X importtime -m capdesk {' '.join(cmd[:2])} ...): {total / 1000:.1f} ms in "
            f"all, capdesk's {ours / 1000:.1f} ms; heavy modules: {', '.join(heavy) or 'none'}")


def fmt(name: str, values: list[float]) -> str:
    return (f"{name:<58} median {1000 * statistics.median(values):6.0f} ms  (all: "
            f"{', '.join(f'{1000 * v:.0f}' for v in values)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--picture", type=Path, default=PHOTO,
                    help="the picture shown in the focused button (default: the cat photo, no text in it; "
                         "resources/samples/page.png is one full of text)")
    args = ap.parse_args()
    load = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="capdesk-bench-screen-"))
    tmp.chmod(0o700)
    procs: list[subprocess.Popen] = []
    script = Path(sys.executable).parent / "capdesk"  # the console script a shortcut runs
    capdesk = [str(script)] if script.exists() else [sys.executable, "-m", "capdesk"]
    rows: list[str] = []
    begin = None
    try:
        env = session(tmp, procs)
        fake = FakeSpeechd(tmp / "speechd.sock")
        win = subprocess.Popen([sys.executable, "-c", WINDOW, str(args.picture)], env=env, stdout=subprocess.PIPE,
                               text=True)
        procs.append(win)
        x, y, wd, ht = json.loads(_line(win))
        region = [*capdesk, "screen", "--region", f"{x},{y},{wd},{ht}", "--speak"]
        version = [*capdesk, "--version"]
        # Without a service: the same session, but a runtime folder where none listens.
        alone = dict(env, XDG_RUNTIME_DIR=str(tmp / "alone"))
        (tmp / "alone").mkdir(mode=0o700)
        press(region, alone, fake)  # the first run fills the page cache: every run after it is what a user meets
        base, cold, cold_end, first, started, warm, warm_end, focus, key = ([] for _ in range(9))
        imports = ""
        mem: dict[str, int] = {}
        grab = shutil.which("xdotool") is not None and "DBUS_SESSION_BUS_ADDRESS" in env
        for n in range(args.runs):
            t = time.monotonic()
            svc = subprocess.Popen([*capdesk, "service", "--key", KEY], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
            wait_for_service(env, svc)
            started.append(time.monotonic() - t)
            first.append(press(region, env, fake)[0])
            if n == 0:  # one service serves the repeated presses, taken in turn with the cold ones (same load)
                for _ in range(args.runs):
                    base.append(timed(version, env))
                    word, end = press(region, alone, fake)
                    cold.append(word)
                    cold_end.append(end)
                    word, end = press(region, env, fake)
                    warm.append(word)
                    warm_end.append(end)
                    focus.append(press([*capdesk, "screen", "--focus", "--speak"], env, fake)[0])
                    if grab:
                        key.append(press(["xdotool", "key", "super+d"], env, fake)[0])
                time.sleep(2)  # idle: the service has handed back what the last request freed
                mem = memory_kb(svc.pid)
                imports = client_imports(region[len(capdesk):], env)
            subprocess.run([*capdesk, "service", "--stop"], env=env, stdout=subprocess.DEVNULL, check=True)
            svc.wait(60)
        rows += [fmt("capdesk --version (baseline)", base),
                 fmt("(a) cold, no service: --region --speak, to the text", cold),
                 fmt("    the same, until the process ended (speech ended)", cold_end),
                 fmt("(b) service started until it answers", started),
                 fmt("(b) service: first press after it started, to the text", first),
                 fmt("(b) service: repeated presses --region --speak, to the text", warm),
                 fmt("    the same, until the client process ended", warm_end),
                 fmt("(b) service: repeated presses --focus --speak, to the text", focus)]
        rows.append(fmt(f"(c) key grab: xdotool key super+d ({KEY}) to the text", key) if key else
                    "(c) key grab: not measured (needs xdotool and the accessibility bus)")
        rows.append(imports)
        begin = speechd_begin_s(tmp)
        rows.append(f"service memory: resident when idle {mem.get('VmRSS', 0) / 1024:.0f} MB, peak "
                    f"{mem.get('VmHWM', 0) / 1024:.0f} MB")
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cores: {os.cpu_count()}, load average before: {' '.join(f'{v:.2f}' for v in load)}, after: "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}, "
          f"runs: {args.runs}, picture {wd}x{ht}, command: {' '.join(capdesk)}")
    print("\n".join(rows))
    print("real speech-dispatcher, text to BEGIN (first sound), espeak-ng: " + (
        "not measured (needs speech-dispatcher and speech-dispatcher-espeak-ng)" if begin is None
        else f"median {1000 * begin:.0f} ms"))


if __name__ == "__main__":
    main()
