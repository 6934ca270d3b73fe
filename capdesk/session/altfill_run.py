"""Alt text filled in as ``capdesk alt-fill`` fills it: the originals kept in the backup folder (none on
a dry run), Ctrl-C in two stages. Nothing here prints. (The window's run is ``altfill_job.AltFillJob``.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.altfill.fill import Hooks, ProgressFn, default_backup_dir, run_fill
from capdesk.altfill.options import AltFillOptions  # noqa: F401  (said here, where the command line takes it)
from capdesk.session.stopping import ctrl_c_in_two_stages

if TYPE_CHECKING:
    from capdesk.altfill.fill import AltFillResult
    from capdesk.describe.describer import Describer


def fill_alt_text(options: AltFillOptions, describer: Describer, progress: ProgressFn | None,
                  stopping: Callable[[], None]) -> tuple[AltFillResult, Path | None]:
    """The run's result and the folder keeping the changed pages' originals (None on a dry run);
    ``stopping()`` is told of the first Ctrl-C, which stops after the current pictures."""
    backups = None if options.dry_run else default_backup_dir()
    with ctrl_c_in_two_stages(stopping) as cancel:
        result = run_fill(options, describer, Hooks(backup_dir=backups, progress=progress, cancelled=cancel.is_set))
    return result, backups


def apply_reviewed(review: Path, dry_run: bool = False, epub_metadata: bool = False,
                   allow_signed: bool = False) -> tuple[AltFillResult, Path | None]:
    """The texts a person marked ``yes`` in a review file, written into their pages and documents; the
    folder keeping the changed ones' originals (None on a dry run). ``ReviewError`` for a file that is
    no review file. ``epub_metadata`` and ``allow_signed`` as for a fill: a book whose every picture then
    has a text alternative says so; a signed PDF is updated after its signature."""
    from capdesk.altfill.review import apply_review

    backups = None if dry_run else default_backup_dir()
    return apply_review(review, dry_run=dry_run, backup_dir=backups, epub_metadata=epub_metadata,
                        allow_signed=allow_signed), backups
