"""Alt text filled in as ``capdesk alt-fill`` fills it: the originals kept in the backup folder (none on
a dry run), Ctrl-C in two stages. Nothing here prints. (The window's run is ``altfill_job.AltFillJob``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.altfill.fill import ProgressFn, default_backup_dir, run_alt_fill
from capdesk.session.stopping import ctrl_c_in_two_stages

if TYPE_CHECKING:
    from capdesk.altfill.fill import AltFillResult
    from capdesk.describe.describer import Describer


@dataclass(frozen=True)
class AltFillOptions:
    """What alt-fill does besides describing (how it describes is the describer's)."""

    paths: tuple[str, ...]  # pages, documents and folders
    recursive: bool = False
    include_empty: bool = False  # alt="" and its kin (decorative pictures) filled too
    dry_run: bool = False  # the diffs only, nothing written
    allow_roots: tuple[str, ...] = ()  # folders whose pictures may be described besides those given
    epub_metadata: bool = False
    write: str = "facts"  # which texts are written: facts | probably | all (capdesk.altfill.rows.WRITE_CHOICES)
    previews: bool = False  # documents' pictures kept, small, for an HTML report
    allow_signed: bool = False  # a signed PDF updated after its signature (never one certified against changes)


def fill_alt_text(options: AltFillOptions, describer: Describer, progress: ProgressFn | None,
                  stopping: Callable[[], None]) -> tuple[AltFillResult, Path | None]:
    """The run's result and the folder keeping the changed pages' originals (None on a dry run);
    ``stopping()`` is told of the first Ctrl-C, which stops after the current pictures."""
    backups = None if options.dry_run else default_backup_dir()
    with ctrl_c_in_two_stages(stopping) as cancel:
        result = run_alt_fill(list(options.paths), describer, recursive=options.recursive,
                              include_empty=options.include_empty, dry_run=options.dry_run, backup_dir=backups,
                              progress=progress, cancelled=cancel.is_set, allow_roots=list(options.allow_roots),
                              epub_metadata=options.epub_metadata, write=options.write,
                              previews=options.previews, allow_signed=options.allow_signed)
    return result, backups


def apply_reviewed(review: Path, dry_run: bool = False,
                   epub_metadata: bool = False) -> tuple[AltFillResult, Path | None]:
    """The texts a person marked ``yes`` in a review file, written into their pages and documents; the
    folder keeping the changed ones' originals (None on a dry run). ``ReviewError`` for a file that is
    no review file. ``epub_metadata`` as for a fill: a book whose every picture then has a text
    alternative says so."""
    from capdesk.altfill.review import apply_review

    backups = None if dry_run else default_backup_dir()
    return apply_review(review, dry_run=dry_run, backup_dir=backups, epub_metadata=epub_metadata), backups
