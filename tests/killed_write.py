"""A write of CapDesk's killed before its temporary file took the file's place, for the tests of what the
next write in that folder does with what it left."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from capdesk.safe_files import write_temp
path = Path(sys.argv[1])
tmp = write_temp(path, sys.stdin.buffer.read(), like=path if path.exists() else None)  # as atomic_write does
print(tmp, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # before the rename: the temporary file stays, its writer gone
"""


def left_by_a_killed_write(path: Path, data: bytes) -> Path:
    """The temporary file a CapDesk process writing ``data`` to ``path`` left when it was killed (kill -9)
    after writing the bytes and before putting them in place; that process is gone when this returns."""
    r = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(path)], input=data, capture_output=True,
                       timeout=60)
    assert r.returncode == -9, r.stderr.decode(errors="replace")
    tmp = Path(r.stdout.decode().strip())
    assert tmp.parent == path.parent and tmp.read_bytes() == data
    return tmp
