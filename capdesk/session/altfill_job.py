"""Alt text for the web pages in a folder, started from the window: ``run_fill`` on the session's
runner, with progress and its end brought back through callbacks on the interface thread, a
cancel that stops between pictures, the report, and what a person needs to hear said through the
session (the start, each quarter of a long run, the outcome). Qt-free, like the session."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capdesk.altfill.fill import Hooks, default_backup_dir, run_fill
from capdesk.altfill.options import AltFillOptions
from capdesk.session import messages
from capdesk.session.core import Session
from capdesk.session.jobs import FolderJob


def default_report_path(suffix: str = ".html") -> Path:
    """The window's reports go to the user's state folder: a report inside the site would be published."""
    import platformdirs

    folder = Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "alt-fill-reports"
    return folder / f"alt-fill-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"


class AltFillJob(FolderJob):
    STOPPING = messages.ALTFILL_STOPPING

    def __init__(self, session: Session, folder: Path, recursive: bool = False, include_empty: bool = False,
                 dry_run: bool = False, report: str = "", backup_dir: Path | None = None,
                 on_progress: Callable[[int, int, str], None] | None = None,
                 on_finished: Callable[[Any, str], None] | None = None, epub_metadata: bool = False,
                 write: str = "facts") -> None:
        super().__init__(session, folder, report, on_progress, on_finished)
        self.recursive, self.include_empty, self.dry_run = recursive, include_empty, dry_run
        self.backup_dir = backup_dir
        self.epub_metadata = epub_metadata
        self.write = write  # facts | probably | all: which texts are written, the rest listed for review

    def options(self) -> AltFillOptions:
        """The dialog's choices as the command line's: the folder (or file) chosen is the one path."""
        return AltFillOptions((str(self.folder),), recursive=self.recursive, include_empty=self.include_empty,
                              dry_run=self.dry_run, epub_metadata=self.epub_metadata, write=self.write,
                              previews=self.report.lower().endswith((".html", ".htm")))

    def can_start(self) -> bool:
        """A folder of pages and documents, or one page or document (EPUB, Word, PowerPoint, OpenDocument, PDF)."""
        from capdesk.altfill.fill import FILL_SUFFIXES

        return self.folder.is_dir() or (self.folder.is_file() and self.folder.suffix.lower() in FILL_SUFFIXES)

    def started_text(self) -> str:
        return messages.altfill_started(str(self.folder), self.dry_run)

    def _milestone(self, done: int, total: int, said_at: int) -> str | None:
        return messages.altfill_milestone(done, total, said_at)

    def _outcome(self) -> str:
        from capdesk.altfill.pdf_untagged import untagged_said

        # An untagged PDF's pictures are listed, never written: said so, with where their texts are.
        return messages.altfill_outcome(messages.altfill_summary(self.result) + untagged_said(self.result),
                                        self.result.interrupted, self.dry_run, self.report)

    def _failed(self, error: str) -> str:
        return messages.altfill_failed(error)

    def _work(self) -> tuple[Any, str]:
        from capdesk.altfill.report import write_report

        post = self.session.runner.post
        backups = None if self.dry_run else (self.backup_dir or default_backup_dir())
        hooks = Hooks(backup_dir=backups, progress=lambda d, t, name: post(lambda: self._progress(d, t, name)),
                      cancelled=self.cancel_event.is_set)
        result = run_fill(self.options(), self.session.describer(), hooks)
        if self.report:
            Path(self.report).parent.mkdir(parents=True, exist_ok=True)
            write_report(result, Path(self.report))
        return result, ""
