"""Asking a running ``capdesk service`` to do a ``capdesk screen``, so that a key press is answered by a
process that has the model loaded already.

This module is what a key press costs before the answer, so it imports only the standard library's
cheapest modules (no numpy, Pillow, ONNX Runtime or Qt, not even argparse): the command line goes to the
service as it was typed and the service parses it. When no service answers, nothing was sent and the
caller does the work itself, exactly as it would without one.

Only the same user's service is trusted: its folder must be the user's own and closed to others
(0700), and the process listening must run as the user (SO_PEERCRED).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from collections.abc import Mapping, Sequence

FOLDER = "capdesk"  # in XDG_RUNTIME_DIR
SOCKET = "service.sock"
LOCK = "service.lock"
CONNECT_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 300.0  # a whole screen read on two busy cores, the model loading for a new option first
MAX_MESSAGE = 16 << 20
PROTOCOL = 1
EXIT_BROKEN_PIPE = 128 + 13


def folder(env: Mapping[str, str] | None = None) -> str:
    """The service's folder: XDG_RUNTIME_DIR/capdesk, else a folder of the user's own in /tmp."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, FOLDER)
    return os.path.join(env.get("TMPDIR") or "/tmp", f"capdesk-{os.getuid()}")


def socket_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(folder(env), SOCKET)


def trusted_folder(path: str) -> bool:
    """Whether ``path`` is a real folder of this user's that nobody else may enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.getuid() and not st.st_mode & 0o077


def peer_credentials(sock: socket.socket) -> dict:
    """Who is at the other end of a Unix socket: pid, uid, gid (SO_PEERCRED) and its supplementary groups
    (read from /proc; None where they cannot be, which is never taken to match anyone's)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", creds)
    groups = None
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Groups:"):
                    groups = sorted(int(g) for g in line.split()[1:])
                    break
    except (OSError, ValueError):
        pass
    return {"pid": pid, "uid": uid, "gid": gid, "groups": groups}


def acts_as(peer: dict | None) -> bool:
    """Whether this process has the access ``peer`` has to files (same user, group and groups): only then
    may it read or write a path for it."""
    return (isinstance(peer, dict) and peer.get("uid") == os.getuid() and peer.get("gid") == os.getgid()
            and peer.get("groups") == sorted(set(os.getgroups())))


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (Linux's SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def ask(request: dict, env: Mapping[str, str] | None = None, timeout: float = REPLY_TIMEOUT_S) -> dict | None:
    """The service's reply to ``request``, or None when no service of this user's answered it (nothing
    was done: the caller does the work itself)."""
    where = folder(env)
    if not trusted_folder(where):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(os.path.join(where, SOCKET))
        if peer_uid(sock) != os.getuid():
            return None
        sock.sendall(json.dumps(dict(request, v=PROTOCOL)).encode("utf-8") + b"\n")
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(timeout)
        data = read_all(sock)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    try:
        reply = json.loads(data) if data else None
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def read_all(sock: socket.socket, limit: int = MAX_MESSAGE, deadline: float | None = None) -> bytes:
    """Everything until the other end closes; ValueError past ``limit`` bytes, TimeoutError past
    ``deadline`` (a ``time.monotonic()`` value: a peer sending a byte now and then is not waited for
    for ever, as a timeout on each read alone would)."""
    import time

    chunks, size = [], 0
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the message took too long to come")
            sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise ValueError("message too long")
        chunks.append(chunk)


def forward_screen(argv: Sequence[str]) -> int | None:
    """``capdesk screen ...`` done by the running service: its output written here and its exit status,
    or None when there is no service to do it (or it left this command to the caller)."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None  # relative paths would mean nothing to the service
    from capdesk import __version__

    mask = os.umask(0o022)
    os.umask(mask)
    reply = ask({"op": "screen", "argv": list(argv), "env": dict(os.environ), "cwd": cwd, "umask": mask,
                 "version": __version__})
    if reply is None or "status" not in reply:
        return None
    try:
        for stream, text in reply.get("output", []):
            _write(sys.stdout if stream == 1 else sys.stderr, str(text))
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    return int(reply["status"])


def _write(stream, text: str) -> None:
    if not text:
        return
    try:
        stream.write(text)
    except UnicodeEncodeError:
        # A file name's bytes that are not UTF-8 go out as those bytes, as they do without the service.
        stream.flush()
        enc = stream.encoding or "utf-8"
        try:
            data = text.encode(enc, "surrogateescape")
        except UnicodeEncodeError:
            data = text.encode(enc, "backslashreplace")
        stream.buffer.write(data)
    stream.flush()


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
