"""Which temporary files this user's CapDesk made: a private note per temporary file, written before the file
is created and dropped once its name is gone.

A temporary file's name (``.NAME.PID.TOKEN.tmp``) proves nothing: anyone who may write in a shared folder
can make a file, or a hard link to someone else's file, under such a name. What a process killed mid-write
left behind is moved to the user's private ``recovered`` folder only when a note says CapDesk made it there
(``safe_files``), and the notes live in the user's own state folder (0700), where no other user can put one.

A note is named by the sha256 of the temporary file's full path (the folder's real path and the name) and
holds that path, so a note of one folder never stands for another. Notes whose file is gone (a write that
ended in a way that did not drop its note) are pruned once per process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from pathlib import Path

PRUNE_AFTER_S = 60  # a note whose file is gone for longer than a write takes to start is left over
_pruned = False
_prune_lock = threading.Lock()


def journal_folder() -> Path:
    """Where the notes are: private (0700), in the user's state folder, beside ``recovered``."""
    import platformdirs

    return Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "writing"


def _full_path(tmp: str | os.PathLike[str]) -> bytes:
    folder, name = os.path.split(os.fsencode(tmp))
    return os.path.join(os.path.realpath(folder or b"."), name)


def _note(tmp: str | os.PathLike[str]) -> Path:
    return journal_folder() / hashlib.sha256(_full_path(tmp)).hexdigest()


def _private_folder() -> Path:
    j = journal_folder()
    if not j.is_dir():
        j.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(j, 0o700)  # the umask may have taken bits away; never added any
    return j


def note(tmp: str | os.PathLike[str]) -> bool:
    """Record that this process is about to create ``tmp``; False when the note cannot be written (then
    a file left there by a killed write stays where it is, as any file not known to be CapDesk's)."""
    _prune_once()
    try:
        _private_folder()
        fd = os.open(_note(tmp), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_full_path(tmp))
    except OSError:
        return False
    return True


def noted(tmp: str | os.PathLike[str]) -> bool:
    """Whether this user's CapDesk noted ``tmp`` (its full path) before creating it."""
    try:
        with open(_note(tmp), "rb") as fh:
            return fh.read(len(_full_path(tmp)) + 1) == _full_path(tmp)
    except OSError:
        return False


def forget(tmp: str | os.PathLike[str]) -> None:
    """Drop ``tmp``'s note once no file has that name any more (replaced into place, or removed); a name
    still there (a swap undone half-way holds a person's file under it) keeps its note."""
    if os.path.lexists(tmp):
        return
    with contextlib.suppress(OSError):
        os.unlink(_note(tmp))


def drop(tmp: str | os.PathLike[str]) -> None:
    """Drop ``tmp``'s note whatever is there: the name turned out to be taken by a file this process did
    not make."""
    with contextlib.suppress(OSError):
        os.unlink(_note(tmp))


def _prune_once() -> None:
    global _pruned
    with _prune_lock:
        if _pruned:
            return
        _pruned = True
    try:
        entries = list(os.scandir(journal_folder()))
    except OSError:
        return
    now = time.time()
    for e in entries:
        with contextlib.suppress(OSError):
            if now - e.stat(follow_symlinks=False).st_mtime < PRUNE_AFTER_S:
                continue  # a write that may still be starting
            with open(e.path, "rb") as fh:
                where = fh.read(8192)
            if not where or not os.path.lexists(where):
                os.unlink(e.path)
