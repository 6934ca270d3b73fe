"""The listening end of ``capdesk service``: one per user, on a Unix socket only that user can reach.

The socket lives in the user's runtime folder (XDG_RUNTIME_DIR/capdesk, made 0700; the socket 0600),
and every connection is asked who made it (SO_PEERCRED): another user's is closed unread, even where
the folder's modes were loosened. A lock file held for the service's life makes it one per user (a
socket file alone can be left behind by a service that was killed). One JSON request comes in per
connection, one JSON reply goes out, and the connection is closed. Each connection is read in a thread
of its own, within a deadline and a size bound, so that a client that trickles its request (or sends
nothing) holds no other; the requests themselves are handled one at a time. Nothing about them is
written anywhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from capdesk.screen import client

REQUEST_TIMEOUT_S = 5.0  # a client that connects and says nothing must not hold the next key press
ACCEPT_POLL_S = 0.5
MAX_REQUEST = 1 << 20  # a request is a command line and an environment: a megabyte is far more
MAX_READERS = 16  # connections being read at once; more are closed unread (a flood holds nothing)

Handler = Callable[[dict], dict]


class ServiceError(Exception):
    """Why the service cannot start, in one line for the user."""


class AlreadyRunning(ServiceError):
    def __init__(self, pid: int | None) -> None:
        super().__init__(f"a CapDesk service is already running for this user{f' (pid {pid})' if pid else ''}")
        self.pid = pid


def prepare_folder(env: Mapping[str, str]) -> Path:
    """The service's folder, made (0700) when missing; ServiceError when it is not the user's own."""
    path = Path(client.folder(env))
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid():
            raise ServiceError(f"{path} is not a folder of this user's; remove it or set XDG_RUNTIME_DIR")
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError as exc:
        raise ServiceError(f"{path}: cannot make the service's folder ({exc.strerror or exc})") from None
    return path


class Listener:
    """Takes the user's one service lock, then listens; ``serve`` answers each request with ``handle``."""

    def __init__(self, env: Mapping[str, str], handle: Handler) -> None:
        self.handle = handle
        self.folder = prepare_folder(env)
        self.path = self.folder / client.SOCKET
        self._stop = threading.Event()
        self._handling = threading.Lock()  # one request at a time: one model, one voice
        self._readers = threading.BoundedSemaphore(MAX_READERS)
        self._lock_file = self._take_lock()
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # left by a service that was killed: the lock says none runs
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)  # the socket is never reachable by others, not even for an instant
            try:
                self.sock.bind(str(self.path))
            finally:
                os.umask(old)
            os.chmod(self.path, 0o600)
            self.sock.listen(16)
            self.sock.settimeout(ACCEPT_POLL_S)
        except OSError as exc:
            self._release_lock()
            raise ServiceError(f"{self.path}: cannot listen ({exc.strerror or exc})") from None

    def _take_lock(self):
        path = self.folder / client.LOCK
        try:
            f = open(path, "a+", encoding="ascii")  # noqa: SIM115 - held open for the service's life
        except OSError as exc:
            raise ServiceError(f"{path}: cannot open the service's lock ({exc.strerror or exc})") from None
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            text = f.read().strip()
            f.close()
            raise AlreadyRunning(int(text) if text.isdigit() else None) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        return f

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                self._lock_file.truncate(0)
            self._lock_file.close()  # closing drops the flock
            self._lock_file = None

    def serve(self) -> None:
        """Answer requests until ``stop`` is called."""
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                raise
            if not self._readers.acquire(blocking=False):
                conn.close()  # too many at once: the client does this one itself
                continue
            threading.Thread(target=self._serve_one, args=(conn,), name="capdesk-request", daemon=True).start()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._answer(conn)
        finally:
            self._readers.release()

    def _answer(self, conn: socket.socket) -> None:
        try:
            if client.peer_uid(conn) != os.getuid():
                return  # another user's: closed unread
            data = client.read_all(conn, MAX_REQUEST, time.monotonic() + REQUEST_TIMEOUT_S)
            request = json.loads(data)
            if not isinstance(request, dict):
                raise ValueError("not an object")
            request["peer"] = client.peer_credentials(conn)  # the kernel's word, never the client's
        except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
            return  # a broken request gets no answer: the client falls back to doing it itself
        with self._handling:
            if self._stop.is_set():
                return
            try:
                reply = self.handle(request)
            except Exception as exc:  # the service stays up; the client does this one itself
                reply = {"decline": f"the service failed ({type(exc).__name__}: {str(exc)[:200]})"}
        with contextlib.suppress(OSError):
            conn.settimeout(REQUEST_TIMEOUT_S)
            conn.sendall(json.dumps(reply).encode("ascii"))  # lone surrogates (file names) escaped

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._release_lock()
