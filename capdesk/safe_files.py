"""Writing next to a person's files without ever losing theirs.

* ``atomic_write``: a temporary file in the same folder, then one rename: readers see the old
  file or the new one, never half; a new file's mode follows the umask (like any program's), a
  replacement keeps the mode of the file it replaces, or a private one's (0600) where that file was
  someone else's (``private_or_like``).
* reading what others may have put there (``open_regular``, ``read_limited``): from one descriptor,
  opened without following a link and without waiting on a FIFO, judged on the descriptor (a
  regular file, of at most the size its kind may have), never on the path a moment before.
* ``folder_lock``: CapDesk processes writing in one folder take turns (``flock`` on the folder).
* ``swap_in``: the rename that replaces a file, done so that what it displaced can be checked:
  on Linux ``renameat2(RENAME_EXCHANGE)`` swaps the two names in one step, so the file that was
  there a moment ago is still at hand (under the temporary name) and can be put back if it is not
  the one the caller checked; a file that did not exist is created with ``RENAME_NOREPLACE``, so
  one made meanwhile is never replaced. Elsewhere it falls back to ``os.replace``.
* temporary names: ``.NAME.PID.XXXXXXXX.tmp`` beside the file, NAME shortened when the whole would
  not fit in a file name (255 bytes), so any name that fits can be written. An empty one left by a
  process that is gone (killed before it wrote a byte) is removed the next time CapDesk writes in
  that folder. One with content (a document of 157 MB, killed mid-write) is never deleted, since after
  a swap it may hold a person's file: it is moved out of the folder (others may read a shared one) into
  the user's private ``recovered`` folder (``recovery_folder``), bytes intact. Only one this user's
  CapDesk is known to have made (``temp_journal``: a private note written before the file), a regular
  file of the user's own with no other name (one link), judged on the descriptor; its bytes are copied
  into a new private file there and the name is removed, so no file's mode is ever changed. Anything
  else named like a temporary file (another user's, a hard link to a shared file) is left where it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from capdesk import temp_journal

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

NAME_MAX = 255  # bytes in one file name on Linux, macOS and Windows file systems alike
# CapDesk's temporary names, as write_temp makes them; older versions wrote them without the PID.
_TEMP_NAME = re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d{1,10})\.)?[0-9a-f]{8}\.tmp$", re.DOTALL)
LEGACY_TEMP_STALE_S = 3600  # a temp name without a PID: left over once older than this
_swept: set[str] = set()
_swept_lock = threading.Lock()


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO's open returns at once instead of waiting for a writer
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_KINDS = {stat.S_IFLNK: "a link", stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}


class RefusedFile(OSError):
    """A file CapDesk will not read: a link where none is followed, not a regular file, or larger than its
    kind allows. ``kind``: "link", "not-a-file" or "too-large"; ``str()`` and ``strerror`` say why in words."""

    def __init__(self, path: str | os.PathLike[str], kind: str, why: str) -> None:
        super().__init__(errno.ELOOP if kind == "link" else errno.EFBIG if kind == "too-large" else errno.EINVAL,
                         why, os.fspath(path))
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _refuse_kind(path: str | os.PathLike[str], st: os.stat_result) -> RefusedFile:
    what = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
    if stat.S_ISLNK(st.st_mode):
        return RefusedFile(path, "link", "a link, not followed")
    return RefusedFile(path, "not-a-file", f"not a regular file ({what})")


def open_regular(path: str | os.PathLike[str], *, follow: bool = False) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on the regular file at ``path``, and its ``fstat``.

    Unless ``follow``, a link there is refused rather than followed (``O_NOFOLLOW``). A FIFO never
    holds the open up (``O_NONBLOCK``), and whatever the path showed a moment before, the kind is
    judged on the descriptor itself: what is read is what was checked. Raises ``RefusedFile`` for
    anything but a regular file (a folder, a FIFO, a socket, a device), ``OSError`` as ``open`` does."""
    try:  # looked at first, so that a device is never opened at all
        pre = os.stat(path) if follow else os.lstat(path)
    except OSError:
        pre = None  # the open below says why
    if pre is not None and not stat.S_ISREG(pre.st_mode):
        raise _refuse_kind(path, pre)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and not follow and os.path.islink(path):
            raise RefusedFile(path, "link", "a link, not followed") from None
        if exc.errno == errno.ENXIO:  # a socket swapped in since the look
            raise RefusedFile(path, "not-a-file", "not a regular file (a socket)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse_kind(path, st)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _too_large(path: str | os.PathLike[str], size: int, limit: int) -> RefusedFile:
    return RefusedFile(path, "too-large", f"larger than {_amount(limit)} ({_amount(size)})")


def _amount(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.0f} GiB"
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{max(1, n // 1024)} KiB"


def read_limited(path: str | os.PathLike[str], limit: int, *, follow: bool = False) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` and its ``fstat``, read from one descriptor
    (``open_regular``); ``RefusedFile`` when it holds more than ``limit`` bytes, even one that grows
    while it is read: never more than ``limit`` + 1 bytes are read."""
    fd, st = open_regular(path, follow=follow)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > limit:
            raise _too_large(path, st.st_size, limit)
        # What the file says it holds, and a byte more to see it grow: read(limit + 1) would take
        # the whole bound in memory first (512 MiB for a 10 kB document).
        raw = fh.read(st.st_size + 1)
        if len(raw) > st.st_size:  # grown since the fstat: the rest, no further than the bound
            raw += fh.read(limit + 1 - len(raw))
    if len(raw) > limit:
        raise _too_large(path, len(raw), limit)
    return raw, st


def private_or_like(st: os.stat_result | None) -> int | None:
    """The mode a new file standing for the one ``st`` describes gets: that file's, when it is the user's
    own; a new private file's (0600) when it is someone else's, so that nothing the user writes in a
    shared folder becomes readable to others through another person's mode; None (the umask) without one."""
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return 0o600
    return stat.S_IMODE(st.st_mode)


def snapshot(path: Path, limit: int | None = None) -> str | None:
    """What is at ``path`` now: None (nothing), 'not-a-file:<kind>' (a link, which is not followed, a
    folder, a FIFO...), 'too-large:<bytes>' (over ``limit``, not read), or the sha256 of its bytes,
    read in chunks from the descriptor whose kind was checked."""
    try:
        fd, st = open_regular(path)
    except FileNotFoundError:
        return None
    except RefusedFile as exc:
        if exc.kind == "link":
            return "not-a-file:link"
        return f"not-a-file:{exc.strerror}"
    with os.fdopen(fd, "rb") as fh:
        if limit is not None and st.st_size > limit:
            return f"too-large:{st.st_size}"
        h = hashlib.sha256()
        seen = 0
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            seen += len(chunk)
            if limit is not None and seen > limit:  # grown since the fstat
                return f"too-large:{seen}"
            h.update(chunk)
    return h.hexdigest()


def temp_name(name: str, pid: int, token: str) -> str:
    """``.NAME.PID.TOKEN.tmp``, NAME cut (at a character) so that the whole fits in ``NAME_MAX`` bytes."""
    tail = f".{pid}.{token}.tmp"
    room = NAME_MAX - 1 - len(tail)
    short = name
    while len(os.fsencode(short)) > room:
        short = short[:-1]
    return f".{short}{tail}"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process (or no way to tell): treated as alive
    return True


def is_stale_temp(entry: os.DirEntry | Path) -> bool:
    """An empty CapDesk temporary file whose writer is gone (see the module's notes)."""
    m = _TEMP_NAME.match(entry.name)
    if m is None:
        return False
    try:
        st = os.lstat(entry)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != 0:
        return False
    if m.group("pid") is not None:
        return not _pid_alive(int(m.group("pid")))
    return time.time() - st.st_mtime > LEGACY_TEMP_STALE_S


def _own_abandoned(path: str | os.PathLike[str], st: os.stat_result) -> bool:
    """``st`` (of the file at ``path``) is a temporary file this user's CapDesk made, with content, and
    nothing else: a regular file of the user's with one link (a hard link to another file has two)."""
    return (stat.S_ISREG(st.st_mode) and st.st_size > 0 and st.st_nlink == 1
            and st.st_uid == _euid() and temp_journal.noted(path))


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else 0


def is_abandoned_temp(entry: os.DirEntry | Path) -> bool:
    """A CapDesk temporary file with content, made by this user's CapDesk (``_own_abandoned``), whose
    writer (named by its pid) is gone. A first look, by name; ``_recover`` judges the file it opens."""
    m = _TEMP_NAME.match(entry.name)
    if m is None or m.group("pid") is None:
        return False
    try:
        st = os.lstat(entry)
    except OSError:
        return False
    return _own_abandoned(entry, st) and not _pid_alive(int(m.group("pid")))


def recovery_folder() -> Path:
    """Where abandoned temporary files go: private (0700), in the user's state folder."""
    import platformdirs

    return Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "recovered"


_OPEN_TO_JUDGE = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                  | getattr(os, "O_CLOEXEC", 0))


def _recover(path: Path) -> Path | None:
    """Copy an abandoned temporary file into ``recovery_folder``, its bytes intact, and remove its name;
    where the copy is. The file is judged on the descriptor its bytes are read from (opened without
    following a link or waiting on a FIFO); the mode set is the new copy's, never the original's."""
    try:
        src = os.open(path, _OPEN_TO_JUDGE)
    except OSError:
        return None
    dest = None
    try:
        st = os.fstat(src)
        if not _own_abandoned(path, st):
            return None  # someone else's file, a hard link, a FIFO...: left where it is
        dest_dir = recovery_folder()
        dest_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        dest = dest_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}-{path.name.lstrip('.')}"
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                      | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(out, "wb") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o600)  # the new copy, whatever the umask
            with os.fdopen(os.dup(src), "rb") as inp:
                shutil.copyfileobj(inp, fh, 1 << 20)
            fh.flush()
            os.fsync(fh.fileno())
        # The name is removed only while it still names the file that was judged and copied.
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            os.unlink(dest)
            return None
        os.unlink(path)
        temp_journal.forget(path)
        return dest
    except OSError:
        if dest is not None:
            with contextlib.suppress(OSError):
                os.unlink(dest)
        return None  # left where it is: never lost
    finally:
        os.close(src)


def sweep_stale_temps(folder: Path) -> list[Path]:
    """Clear the stale temporary files out of ``folder`` (once per folder and process): empty ones removed,
    abandoned ones with content moved to ``recovery_folder``; what was cleared."""
    key = os.path.abspath(folder)
    with _swept_lock:
        if key in _swept:
            return []
        _swept.add(key)
    removed = []
    try:
        with os.scandir(folder) as it:
            entries = [e for e in it if e.name.startswith(".") and e.name.endswith(".tmp")]
    except OSError:
        return []
    for e in entries:
        if is_stale_temp(e):
            with contextlib.suppress(OSError):
                os.unlink(e.path)
                removed.append(Path(e.path))
        elif is_abandoned_temp(e) and _recover(Path(e.path)) is not None:
            removed.append(Path(e.path))
    return removed


def write_temp(path: Path, data: bytes, like: Path | None = None) -> Path:
    """A new hidden file beside ``path`` holding ``data``, flushed to disk; its mode ``like``'s (see
    ``private_or_like``: 0600 when that file is someone else's), or the umask's."""
    path = Path(path)
    sweep_stale_temps(path.parent)
    for _ in range(100):
        tmp = path.with_name(temp_name(path.name, os.getpid(), secrets.token_hex(4)))
        temp_journal.note(tmp)  # before the file exists: what a killed write leaves is known to be CapDesk's
        try:
            # 0o666 and the umask decide the mode, as for any new file (mkstemp would force 0600).
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
            break
        except FileExistsError:
            temp_journal.drop(tmp)  # a file this process did not make: never vouched for
            continue
        except BaseException:
            temp_journal.forget(tmp)
            raise
    else:
        raise FileExistsError(f"{path.parent}: cannot create a temporary file")
    try:
        mode = None
        if like is not None:
            with contextlib.suppress(OSError):
                mode = private_or_like(os.stat(like))
        with os.fdopen(fd, "wb") as fh:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)  # before a byte is written: never readable by more than it should
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None and not hasattr(os, "fchmod"):
            with contextlib.suppress(OSError):
                os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        temp_journal.forget(tmp)
        raise
    return tmp


def cannot_write_in(folder: Path) -> str | None:
    """Why no file can be made in ``folder`` ('Permission denied', 'Read-only file system'), or None.

    Asked by making (and at once removing) an empty temporary file, since only trying tells: root
    ignores permission bits, a read-only mount shows in none of them. A folder that is yet to be made
    is judged by its nearest existing parent."""
    f = Path(os.path.abspath(folder))
    while not os.path.lexists(f) and f.parent != f:
        f = f.parent
    if not f.is_dir():
        return "not a folder"
    probe = f / temp_name("capdesk-probe", os.getpid(), secrets.token_hex(4))
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except OSError as exc:
        return exc.strerror or str(exc)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return None


def swap_in(tmp: Path, path: Path, expected: str | None) -> bool:
    """Put ``tmp`` at ``path`` if what is there is still ``expected`` (a ``snapshot``); True when done.

    When it is not (a person saved their edit a moment ago), everything is left as it was and
    ``tmp`` is removed. The check and the swap are one step where the kernel allows it.
    """
    try:
        return _swap_in(tmp, path, expected)
    finally:
        temp_journal.forget(tmp)  # only once the name is gone: a swap undone half-way keeps its note


def _swap_in(tmp: Path, path: Path, expected: str | None) -> bool:
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
    finally:
        temp_journal.forget(tmp)


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
