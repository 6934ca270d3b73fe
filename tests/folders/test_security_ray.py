"""Issue 34, item 2: a Ray that ``capdesk batch --ray`` starts listens on the loopback address only and
uses a token of its own (0600, in CapDesk's state folder, never ``~/.ray/auth_token``), removed with
its session folder when the batch ends. One test, since starting Ray takes seconds.

What listens is read from the kernel (/proc/net/tcp and tcp6, and each process's open sockets) for
this process and every process it started: Ray's head, its raylet and the workers."""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import shutil
import socket
import stat
import sys

import pytest
from conftest import SAMPLES

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray: pip install -e '.[ray]'"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads listening sockets from /proc"),
]


def _address(hexaddr: str, v6: bool) -> tuple[str, int]:
    ip, port = hexaddr.split(":")
    raw = bytes.fromhex(ip)
    if v6:  # four little-endian 32-bit words
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
        return socket.inet_ntop(socket.AF_INET6, raw), int(port, 16)
    return socket.inet_ntop(socket.AF_INET, raw[::-1]), int(port, 16)


def _listening() -> dict[str, tuple[str, int]]:
    """Every listening TCP socket of the machine, by inode."""
    out = {}
    for name, v6 in (("tcp", False), ("tcp6", True)):
        with open(f"/proc/net/{name}") as fh:
            for line in fh.read().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A":  # LISTEN
                    out[f[9]] = _address(f[1], v6)
    return out


def _tree(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(d))
    seen, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += children.get(p, [])
    return seen


def listening_here() -> list[tuple[str, int]]:
    """What this process and every process under it listen on."""
    inodes = set()
    for pid in _tree(os.getpid()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    lis = _listening()
    return sorted({lis[i] for i in inodes if i in lis})


def _loopback(addr: str) -> bool:
    ip = ipaddress.ip_address(addr)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback


@pytest.mark.slow  # 16 s measured on two busy cores
def test_a_ray_capdesk_starts_listens_on_loopback_only_with_a_private_token(tmp_path, monkeypatch):
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.folders.ray_batch import AUTH_MODE, RayPlan, RayRun, ray_state_dir

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # where Ray would write ~/.ray/auth_token
    env_before = {k: os.environ.get(k) for k in (AUTH_MODE, "RAY_AUTH_TOKEN_PATH")}
    pics = []
    for name in ("chelsea.png", "coffee.png", "astronaut.png"):
        shutil.copy(SAMPLES / name, tmp_path / name)
        pics.append(str(tmp_path / name))
    describer = Describer(provider="cpu", beam=1, options=DescribeOptions(ocr="never"))
    run = RayRun(describer, RayPlan(workers=1), batch_size=1)
    try:
        assert "local Ray" in run.start()
        token, session = run.private.token_path, run.private.temp_dir
        assert token is not None and token.parent == ray_state_dir()
        assert str(token).startswith(os.environ["XDG_STATE_HOME"])
        assert stat.S_IMODE(token.stat().st_mode) == 0o600 and len(token.read_text()) >= 32
        assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(session.stat().st_mode) == 0o700
        stream = run.stream(pics)
        first = next(stream)  # the worker is up: Ray's head, raylet and a worker all listen now
        listening = listening_here()
        done = [first, *stream]
    finally:
        run.close()
    assert [d.ok for d in done] == [True] * 3, [d.error for d in done]  # token authentication works end to end
    assert len(listening) >= 3, f"too few listening sockets found for the test to prove anything: {listening}"
    assert all(_loopback(a) for a, _ in listening), f"listening beyond this machine: {listening}"
    assert not (home / ".ray").exists()  # no token in the home folder, neither read nor written
    assert not token.exists() and not session.exists()  # gone with the batch
    assert {k: os.environ.get(k) for k in env_before} == env_before
