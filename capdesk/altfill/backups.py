"""The originals of the pages alt-fill changes: kept in CapDesk's state folder, private to the user,
until pruned.

Each run keeps its originals in a folder of its own (``alt-fill-backups/TIME-PID/`` and the page's
full path under it). A page may be private (mode 0600, a draft not yet published): its copy gets
the page's own permissions, and every folder on the way is the user's only (0700), so a backup is
never more readable than the page it keeps. Nothing is removed by itself; ``prune`` removes the
runs older than a number of days.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.safe_files import folder_lock, swap_in, write_temp

if TYPE_CHECKING:  # the report's rows; importing them would load the describer for a prune
    from capdesk.altfill.rows import ImageRow, PageRow

RUN_NAME = re.compile(r"(\d{8}-\d{6})-\d+")  # TIME-PID, as ``default_backup_dir`` names a run


def backups_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "alt-fill-backups"


def default_backup_dir() -> Path:
    """Where a run keeps the originals of the pages it changes: the user's state folder, never the
    site (a backup beside each page would be published with it)."""
    return backups_root() / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def _private_dirs(folder: Path) -> None:
    """``folder`` and every missing folder above it, made the user's only (0700)."""
    missing = []
    p = folder
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(d, 0o700)
    for d in missing:
        os.chmod(d, 0o700)  # the umask may have taken bits away; never added any


def keep_original(backup_dir: Path, page: Path, raw: bytes) -> Path:
    """A copy of ``raw`` (the page's bytes as read) under ``backup_dir`` at the page's full path,
    with the page's permissions; the folders it needs are made private. Returns where it is."""
    keep = Path(backup_dir) / page.relative_to(page.anchor)
    _private_dirs(keep.parent)
    tmp = write_temp(keep, raw, like=page)  # the page's mode, set before the copy is in place
    try:
        os.chmod(tmp, stat.S_IMODE(os.stat(page).st_mode) & 0o777)
        os.replace(tmp, keep)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return keep


def read_only(page: Path) -> str | None:
    """Why a page must not be replaced though its folder could take a new file: its mode says no one
    may write it (0444: a person made it read-only, and running as root does not change that), or
    this user may not. None when it may be written."""
    try:
        mode = os.stat(page).st_mode
    except OSError as exc:
        return f"cannot write it ({exc.strerror or exc})"
    if not mode & 0o222 or not os.access(page, os.W_OK):
        return (f"it is read-only (mode {stat.S_IMODE(mode):04o}), so it was left as it is; "
                "make it writable to have its alt text filled")
    return None


@dataclass
class Pruned:
    removed: list[Path] = field(default_factory=list)
    freed_bytes: int = 0
    problems: list[str] = field(default_factory=list)

    def message(self, days: float) -> str:
        n = len(self.removed)
        return (f"removed {n} alt-fill backup run{'s' * (n != 1)} older than {days:g} days "
                f"({self.freed_bytes / (1 << 20):.1f} MiB)")


def replace_document(path: str | Path, raw: bytes, digest: str, data: bytes, backup_dir: Path | None,
                     before_write: Callable[[str | Path], None] | None = None) -> tuple[str | None, str | None]:
    """Put ``data`` in place of the document at ``path`` in one step, its original kept in ``backup_dir``
    first: (the backup's path or None, why it was not written or None). A document that is read-only, or
    that changed since it was read (its sha256 is no longer ``digest``), is left as it is."""
    target = Path(os.path.realpath(path))
    locked = read_only(target)
    if locked:
        return None, locked
    backup = None
    try:
        if backup_dir is not None:
            backup = str(keep_original(Path(backup_dir), target, raw))
        with folder_lock(target.parent):
            tmp = write_temp(target, data, like=target)
            if before_write is not None:
                before_write(path)
            done = swap_in(tmp, target, digest)
    except OSError as exc:
        return backup, f"cannot write it ({exc.strerror or exc})"
    if not done:
        return backup, "it changed while CapDesk was working, so it was left as it is; run again"
    return backup, None


def write_change(row: PageRow, rows: list[ImageRow], path: str | Path, raw: bytes, digest: str, data: bytes,
                 dry_run: bool, backup_dir: Path | None,
                 before_write: Callable[[str | Path], None] | None = None) -> str | None:
    """A document's new bytes put in place (``replace_document``) and its report rows updated: its
    ``row`` (a ``PageRow``) says "would change" on a dry run, else "changed" with the new sha256, and each
    of ``rows`` (its ``ImageRow``s) is written. Why it was not written, or None."""
    row.filled = len(rows)
    if dry_run:
        row.status = "would change"
        return None
    backup, why = replace_document(path, raw, digest, data, backup_dir, before_write)
    if backup is not None:
        row.backup = backup
    if why:
        return why
    row.status, row.sha256 = "changed", hashlib.sha256(data).hexdigest()
    for r in rows:
        r.written = True
    return None


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total


def prune(days: float, root: Path | None = None, now: float | None = None) -> Pruned:
    """Remove the backup runs made more than ``days`` days ago (by the time in their name). Only
    folders named as a run names them are touched; links and anything else there are left alone."""
    root = backups_root() if root is None else Path(root)
    cutoff = (time.time() if now is None else now) - days * 86400
    out = Pruned()
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        return out
    except OSError as exc:
        out.problems.append(f"{root}: cannot be listed ({exc.strerror or exc})")
        return out
    for e in entries:
        m = RUN_NAME.fullmatch(e.name)
        if not m or not e.is_dir(follow_symlinks=False):
            continue
        try:
            made = time.mktime(time.strptime(m.group(1), "%Y%m%d-%H%M%S"))
        except (ValueError, OverflowError):  # a name that only looks like a run's
            continue
        if made >= cutoff:
            continue
        size = _size(Path(e.path))
        try:
            shutil.rmtree(e.path)  # never follows a link inside: removes the link itself
        except OSError as exc:
            out.problems.append(f"{e.path}: cannot be removed ({exc.strerror or exc})")
            continue
        out.removed.append(Path(e.path))
        out.freed_bytes += size
    return out
