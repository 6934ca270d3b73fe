"""Writing next to a person's files without ever losing theirs.

* ``atomic_write``: a temporary file in the same folder, then one rename: readers see the old
  file or the new one, never half; the new file's mode follows the umask (like any program's).
* ``folder_lock``: CapDesk processes writing in one folder take turns (``flock`` on the folder).
* ``swap_in``: the rename that replaces a file, done so that what it displaced can be checked:
  on Linux ``renameat2(RENAME_EXCHANGE)`` swaps the two names in one step, so the file that was
  there a moment ago is still at hand (under the temporary name) and can be put back if it is not
  the one the caller checked; a file that did not exist is created with ``RENAME_NOREPLACE``, so
  one made meanwhile is never replaced. Elsewhere it falls back to ``os.replace``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

_AT_FDCWD = -100
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM)


def _load_renameat2():
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _load_renameat2()


def snapshot(path: Path) -> str | None:
    """What is at ``path`` now: None (nothing), 'not-a-file:<kind>', or the sha256 of its bytes."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return f"not-a-file:{stat.S_IFMT(st.st_mode)}"
        h = hashlib.sha256()
        with open(path, "rb") as fh:  # in chunks: a huge file where a sidecar goes must not fill memory
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except FileNotFoundError:
        return None


def write_temp(path: Path, data: bytes, like: Path | None = None) -> Path:
    """A new hidden file beside ``path`` holding ``data``, flushed to disk; mode from ``like`` or the umask."""
    path = Path(path)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 and the umask decide the mode, as for any new file (mkstemp would force 0600).
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{path.parent}: cannot create a temporary file")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if like is not None:
            with contextlib.suppress(OSError):
                if os.path.isfile(like):
                    shutil.copymode(like, tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def swap_in(tmp: Path, path: Path, expected: str | None) -> bool:
    """Put ``tmp`` at ``path`` if what is there is still ``expected`` (a ``snapshot``); True when done.

    When it is not (a person saved their edit a moment ago), everything is left as it was and
    ``tmp`` is removed. The check and the swap are one step where the kernel allows it.
    """
    if _renameat2 is not None:
        flags = _RENAME_NOREPLACE if expected is None else _RENAME_EXCHANGE
        if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), flags) == 0:
            if expected is None:
                return True
            if snapshot(tmp) == expected:  # tmp now holds what was displaced: it is what was checked
                os.unlink(tmp)
                return True
            # Someone wrote between the check and the swap: put their file back.
            if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE) != 0:
                raise OSError(ctypes.get_errno(), f"could not restore {path.name}; the other version is in {tmp}")
            os.unlink(tmp)
            return False
        err = ctypes.get_errno()
        if err in (errno.EEXIST, errno.ENOENT):  # created, or removed, since the check
            os.unlink(tmp)
            return False
        if err not in _UNSUPPORTED:
            raise OSError(err, os.strerror(err), str(path))
    # No atomic exchange on this system or file system: check once more, as late as possible.
    if snapshot(path) != expected:
        os.unlink(tmp)
        return False
    os.replace(tmp, path)
    return True


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half."""
    path = Path(path)
    tmp = write_temp(path, data, like=path)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Exclusive among CapDesk processes for ``folder`` (a no-op where flock does not exist)."""
    try:
        import fcntl
    except ImportError:  # Windows: renames are still atomic; only the turn-taking is lost
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # the write itself will report why the folder cannot be used
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
