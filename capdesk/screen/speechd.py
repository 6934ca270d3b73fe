"""Saying a description through speech-dispatcher, the speech service the screen reader (Orca) uses, so
that it comes in the user's own voice and rate.

The Speech Synthesis Interface Protocol is spoken directly on speech-dispatcher's socket (as its own
``spd-say`` and Python client do), started the way they start it when it is not running. The text goes
at priority ``message``: it waits for what the screen reader marks important, cuts short nothing
urgent, and is not dropped by the screen reader's next chatter. It stays interruptible: the process
keeps its connection until the text is spoken, and a newer ``capdesk screen --speak`` (the same key
pressed again), Ctrl-C or SIGTERM cancels it there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path

CLIENT_NAME = "user:capdesk:screen"
SPAWN_TIMEOUT_S = 5.0
REPLY_TIMEOUT_S = 5.0
PID_FILE = "capdesk-screen-speaking.pid"  # in the user's runtime folder: the speaker a new key press stops


class SpeechdUnavailable(Exception):
    """speech-dispatcher cannot be reached here (and why), so another voice must speak."""


def socket_path(env: Mapping[str, str]) -> Path:
    """Where speech-dispatcher listens: SPEECHD_ADDRESS (unix_socket:PATH), else its default."""
    address = env.get("SPEECHD_ADDRESS", "")
    if address.startswith("unix_socket:") and address.partition(":")[2]:
        return Path(address.partition(":")[2])
    runtime = env.get("XDG_RUNTIME_DIR") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(runtime) / "speech-dispatcher" / "speechd.sock"


class Dispatcher:
    """One SSIP connection; ``say`` queues a text and ``wait`` blocks until it was spoken or cancelled."""

    def __init__(self, env: Mapping[str, str] | None = None, spawn: bool = True) -> None:
        env = os.environ if env is None else env
        path = socket_path(env)
        sock = _try_connect(path)
        if sock is None and not spawn:
            raise SpeechdUnavailable(f"speech-dispatcher is not running (no socket at {path})")
        self.sock = sock or self._connect(path, env)
        self._buf = b""
        self._done: set[str] = set()
        for cmd in (f"SET self CLIENT_NAME {CLIENT_NAME}", "SET self PRIORITY message",
                    "SET self NOTIFICATION end on", "SET self NOTIFICATION cancel on"):
            self._command(cmd)

    @staticmethod
    def _connect(path: Path, env: Mapping[str, str]) -> socket.socket:
        sock = _try_connect(path)
        if sock is not None:
            return sock
        exe = shutil.which("speech-dispatcher", path=env.get("PATH"))
        if exe is None:
            raise SpeechdUnavailable("speech-dispatcher is not running and not installed")
        # Started as its own clients start it: it forks into the background and exits once listening.
        try:
            subprocess.run([exe, "--spawn", "--communication-method", "unix_socket", "--socket-path", str(path)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=SPAWN_TIMEOUT_S, env=dict(env), check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SpeechdUnavailable(f"speech-dispatcher could not be started ({exc})") from None
        deadline = time.monotonic() + SPAWN_TIMEOUT_S
        while time.monotonic() < deadline:
            sock = _try_connect(path)
            if sock is not None:
                return sock
            time.sleep(0.05)
        raise SpeechdUnavailable(f"speech-dispatcher was started but does not listen at {path}")

    def _line(self) -> str:
        while b"\r\n" not in self._buf:
            data = self.sock.recv(4096)
            if not data:
                raise SpeechdUnavailable("speech-dispatcher closed the connection")
            self._buf += data
        line, _, self._buf = self._buf.partition(b"\r\n")
        return line.decode("utf-8", "replace")

    def _reply(self, event_ok: bool = False) -> tuple[str, list[str]]:
        """The next reply ('NNN-text' lines, then 'NNN text'): its code and lines. Events (7NN: the
        message id, the client id, the event's name) are noted as they pass; with ``event_ok`` the first
        one is returned too."""
        lines = []
        while True:
            line = self._line()
            lines.append(line[4:])
            if line[3:4] == "-":
                continue
            code = line[:3]
            if not code.startswith("7"):
                return code, lines
            if code in ("702", "703"):  # END or CANCELED of the message whose id comes first
                self._done.add(lines[0])
            if event_ok:
                return code, lines
            lines = []

    def _command(self, text: str) -> list[str]:
        self.sock.sendall(text.encode("utf-8") + b"\r\n")
        code, lines = self._reply()
        if not code.startswith("2"):
            raise SpeechdUnavailable(f"speech-dispatcher refused {text.split()[0]} ({code} {' '.join(lines)})")
        return lines

    def say(self, text: str) -> str:
        """Queue ``text``; its message id."""
        self._command("SPEAK")
        # A line holding only "." ends the text, so a leading dot is doubled (SSIP's escaping).
        body = "\r\n".join("." + ln if ln.startswith(".") else ln for ln in text.splitlines() or [""])
        self.sock.sendall(body.encode("utf-8") + b"\r\n.\r\n")
        code, lines = self._reply()
        if code != "225":
            raise SpeechdUnavailable(f"speech-dispatcher did not take the text ({code} {' '.join(lines)})")
        return lines[0]

    def wait(self, msg_id: str, timeout: float) -> bool:
        """True once the message was spoken (or cancelled); False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while msg_id not in self._done:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                self._reply(event_ok=True)
            except TimeoutError:
                return False
            finally:
                self.sock.settimeout(REPLY_TIMEOUT_S)
        return True

    def cancel(self) -> None:
        """Stop this connection's speech, only it: the screen reader's goes on."""
        with contextlib.suppress(OSError, SpeechdUnavailable):
            self._command("CANCEL self")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall(b"QUIT\r\n")
        self.sock.close()


def _try_connect(path: Path) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(REPLY_TIMEOUT_S)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    return s


def runtime_dir(env: Mapping[str, str]) -> Path | None:
    folder = env.get("XDG_RUNTIME_DIR")
    return Path(folder) if folder and Path(folder).is_dir() else None


def stop_previous(env: Mapping[str, str]) -> None:
    """Ask the ``capdesk screen --speak`` still speaking (if any) to stop: the user pressed the key again.

    Only the very process that claimed the record is signalled: the record holds its pid and its start
    time, and a pid the kernel gave to another process since (a killed speaker's record left behind) has
    another start time. A record another user could have planted (not ours, a link) is left alone."""
    folder = runtime_dir(env)
    if folder is None:
        return
    record = _read_record(folder / PID_FILE)
    if record is None or record[0] == os.getpid() or _start_time(record[0]) != record[1]:
        return
    with contextlib.suppress(OSError):
        os.kill(record[0], signal.SIGTERM)


def claim(env: Mapping[str, str]) -> Path | None:
    """Record this process as the one speaking, so that the next key press can stop it; the file written.

    Written to a new private file and renamed over the record: a link planted at the record's name is
    replaced, never written through."""
    folder = runtime_dir(env)
    start = _start_time(os.getpid())
    if folder is None or start is None:
        return None
    path = folder / PID_FILE
    tmp = folder / f".{PID_FILE}.{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()} {start}\n")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return path


def release(path: Path | None) -> None:
    """Forget the record, if it is still this process's."""
    if path is None:
        return
    record = _read_record(path)
    if record is not None and record[0] == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()


def _read_record(path: Path) -> tuple[int, int] | None:
    """(pid, start time) from a record this user wrote, or None (absent, someone else's, a link, garbled)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or not stat.S_ISREG(st.st_mode):
            return None
        pid, start = os.read(fd, 64).decode("ascii").split()
        return int(pid), int(start)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _start_time(pid: int) -> int | None:
    """When the process started, in clock ticks since boot (/proc/PID/stat, field 22), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
    fields = raw[raw.rindex(b")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


class Background:
    """Speech that goes on after the request that asked for it was answered (``capdesk service``): one
    text at a time, each new one (a new key press) cancelling the one before, as a new
    ``capdesk screen --speak`` stops the old process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Dispatcher | None = None

    def speak(self, conn: Dispatcher, text: str, timeout: float) -> None:
        """Hand ``text`` to speech-dispatcher on ``conn`` (which this then owns) and return once it was
        queued; SpeechdUnavailable or OSError when it did not take the text."""
        self.stop()
        try:
            msg = conn.say(text)
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._current = conn
        threading.Thread(target=self._until_spoken, args=(conn, msg, timeout), daemon=True,
                         name="capdesk-speechd").start()

    def _until_spoken(self, conn: Dispatcher, msg: str, timeout: float) -> None:
        with contextlib.suppress(OSError, SpeechdUnavailable):
            conn.wait(msg, timeout)
        with self._lock:
            if self._current is conn:
                self._current = None
            conn.close()

    def stop(self) -> None:
        """Cancel what is being said, if anything (only CapDesk's: the screen reader's goes on)."""
        with self._lock:
            conn, self._current = self._current, None
            if conn is not None:
                # Sent raw: the thread waiting for the end reads the replies on this connection.
                with contextlib.suppress(OSError):
                    conn.sock.sendall(b"CANCEL self\r\n")

    @property
    def speaking(self) -> bool:
        with self._lock:
            return self._current is not None
