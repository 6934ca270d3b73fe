"""Alt text for the web pages in a folder, started from the window: ``run_alt_fill`` on the session's
runner, with progress and its end brought back through callbacks on the interface thread, a
cancel that stops between pictures, the report, and what a person needs to hear said through the
session (the start, each quarter of a long run, the outcome). Qt-free, like the session."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capdesk import messages
from capdesk.altfill import default_backup_dir, run_alt_fill
from capdesk.session import Session


def default_report_path(suffix: str = ".html") -> Path:
    """The window's reports go to the user's state folder: a report inside the site would be published."""
    import platformdirs

    folder = Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "alt-fill-reports"
    return folder / f"alt-fill-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"


class AltFillJob:
    def __init__(self, session: Session, folder: Path, recursive: bool = False, include_empty: bool = False,
                 dry_run: bool = False, report: str = "", backup_dir: Path | None = None,
                 on_progress: Callable[[int, int, str], None] | None = None,
                 on_finished: Callable[[Any, str], None] | None = None) -> None:
        self.session, self.folder = session, Path(folder)
        self.recursive, self.include_empty, self.dry_run, self.report = recursive, include_empty, dry_run, report
        self.backup_dir = backup_dir
        self.on_progress, self.on_finished = on_progress, on_finished
        self.cancel_event = threading.Event()
        self.result = None
        self.error = ""
        self.running = False
        self._said_at = 0

    def start(self) -> bool:
        if not self.folder.is_dir():
            self.session.say(messages.not_a_folder(str(self.folder)))
            return False
        self.running = True
        self.session.say(messages.altfill_started(str(self.folder), self.dry_run))
        self.session.runner.run(self._work, on_done=self._done, on_failed=lambda msg: self._done((None, msg)))
        return True

    def cancel(self) -> None:
        if self.running and not self.cancel_event.is_set():
            self.cancel_event.set()
            self.session.say(messages.ALTFILL_STOPPING)

    def _work(self) -> tuple[Any, str]:
        from capdesk.altfill_report import write_report

        post = self.session.runner.post
        backups = None if self.dry_run else (self.backup_dir or default_backup_dir())
        result = run_alt_fill([self.folder], self.session.describer(), recursive=self.recursive,
                              include_empty=self.include_empty, dry_run=self.dry_run, backup_dir=backups,
                              progress=lambda d, t, name: post(lambda: self._progress(d, t, name)),
                              cancelled=self.cancel_event.is_set)
        if self.report:
            Path(self.report).parent.mkdir(parents=True, exist_ok=True)
            write_report(result, Path(self.report))
        return result, ""

    def _progress(self, done: int, total: int, name: str) -> None:
        if self.on_progress:
            self.on_progress(done, total, name)
        line = messages.altfill_milestone(done, total, self._said_at)
        if line:
            self._said_at = done
            self.session.say(line)

    def _done(self, outcome: tuple[Any, str]) -> None:
        self.result, self.error = outcome
        self.running = False
        self.cancel_event.clear()
        self._said_at = 0
        if self.error:
            text = messages.altfill_failed(self.error)
        else:
            text = messages.altfill_outcome(self.result.summary(), self.result.interrupted, self.dry_run,
                                            self.report)
        if self.on_finished:  # first, so that the dialog has moved the focus where the outcome is said
            self.on_finished(self.result, text)
        self.session.say(text)
