"""What a fill is asked to do (``AltFillOptions``, the choices of ``capdesk alt-fill`` and of the window's
dialog) and how its changes are put in place (``Writing``, the same for every file of one run or review).
Both are passed whole, from the command line and the window down to each format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AltFillOptions:
    """What alt-fill does besides describing (how it describes is the describer's)."""

    paths: tuple[str, ...] = ()  # pages, documents and folders
    recursive: bool = False
    include_empty: bool = False  # alt="" and its kin (decorative pictures) filled too
    dry_run: bool = False  # the diffs only, nothing written
    allow_roots: tuple[str, ...] = ()  # folders whose pictures may be described besides those given
    epub_metadata: bool = False
    write: str = "facts"  # which texts are written: facts | probably | all (capdesk.altfill.rows.WRITE_CHOICES)
    previews: bool = False  # documents' pictures kept, small, for an HTML report
    allow_signed: bool = False  # a signed PDF updated after its signature (never one certified against changes)


@dataclass(frozen=True)
class Writing:
    """How changed files are put in place: on a dry run not at all; else each original kept in
    ``backup_dir`` first. ``before_write(path)`` is called just before a file is replaced (tests use it
    to change the file at the worst moment)."""

    dry_run: bool = False
    backup_dir: Path | None = None
    before_write: Callable[[Path], None] | None = None
    epub_metadata: bool = False
