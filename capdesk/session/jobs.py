"""Long jobs started from the window: batch export of a folder's alt text, and teaching a model.

Qt-free, like the session they belong to: each runs on the session's runner, reports progress
and its end through callbacks on the interface thread, can be cancelled between pictures (or
training steps), and says what a person needs to hear through the session: a start, a spoken
line at each quarter of a long batch, and the outcome.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capdesk.imageio import is_image_path
from capdesk.session import messages
from capdesk.session.core import Kind, Session
from capdesk.sidecars.writer import SidecarWriter
from capdesk.training_hint import training_missing


class FolderJob:
    """A job over one folder's pictures: the start, a cancel between pictures, a spoken line at each
    quarter, the outcome. Subclasses say what runs (``_work``) and in which words."""

    STOPPING = ""

    def __init__(self, session: Session, folder: Path, report: str = "",
                 on_progress: Callable[[int, int, str], None] | None = None,
                 on_finished: Callable[[Any, str], None] | None = None) -> None:
        self.session, self.folder, self.report = session, Path(folder), report
        self.on_progress, self.on_finished = on_progress, on_finished
        self.cancel_event = threading.Event()
        self.result = None
        self.error = ""
        self.running = False
        self._said_at = 0

    # -- the words of each kind of job ----------------------------------------------------------
    def started_text(self) -> str:
        raise NotImplementedError

    def _milestone(self, done: int, total: int, said_at: int) -> str | None:
        raise NotImplementedError

    def _outcome(self) -> str:
        raise NotImplementedError

    def _failed(self, error: str) -> str:
        raise NotImplementedError

    def _work(self) -> tuple[Any, str]:
        raise NotImplementedError

    # -- the run --------------------------------------------------------------------------------
    def can_start(self) -> bool:
        """Whether the chosen path is something this job runs on (a folder; alt-fill takes one file too)."""
        return self.folder.is_dir()

    def start(self) -> bool:
        if not self.can_start():
            self.session.say(messages.not_a_folder(str(self.folder)))
            return False
        self.running = True
        self.session.say(self.started_text())
        self.session.runner.run(self._work, on_done=self._done, on_failed=lambda msg: self._done((None, msg)))
        return True

    def cancel(self) -> None:
        if self.running and not self.cancel_event.is_set():
            self.cancel_event.set()
            self.session.say(self.STOPPING)

    def _progress(self, done: int, total: int, name: str) -> None:
        if self.on_progress:
            self.on_progress(done, total, name)
        line = self._milestone(done, total, self._said_at)
        if line:
            self._said_at = done
            self.session.say(line)

    def _done(self, outcome: tuple[Any, str]) -> None:
        self.result, self.error = outcome
        self.running = False
        self.cancel_event.clear()
        self._said_at = 0
        text = self._failed(self.error) if self.error else self._outcome()
        if self.on_finished:  # first, so that the dialog has moved the focus where the outcome is said
            self.on_finished(self.result, text)
        self.session.say(text)


def batch_report_path(folder: Path, suffix: str = ".html", when: float | None = None) -> Path:
    """Where the window keeps a batch's report unless the person names a file: the user's data folder,
    named after the picture folder and the time. Never the picture folder itself: a report there would
    be published with the pictures (a web site's images folder)."""
    import platformdirs

    base = Path(platformdirs.user_data_dir("capdesk", appauthor=False)) / "batch-reports"
    name = Path(folder).absolute().name or "pictures"
    stamp = time.strftime("%Y-%m-%d %H.%M.%S", time.localtime(when))
    path, n = base / f"{name} {stamp}{suffix}", 2
    while path.exists():  # two runs in one second keep both reports
        path, n = base / f"{name} {stamp} ({n}){suffix}", n + 1
    return path


class BatchJob(FolderJob):
    """``run_batch`` over one folder with the given writer, then the report."""

    STOPPING = messages.BATCH_STOPPING

    def __init__(self, session: Session, writer: SidecarWriter, folder: Path, recursive: bool = False,
                 report: str = "", on_progress: Callable[[int, int, str], None] | None = None,
                 on_finished: Callable[[Any, str], None] | None = None) -> None:
        super().__init__(session, folder, report, on_progress, on_finished)
        self.writer, self.recursive = writer, recursive

    def started_text(self) -> str:
        return messages.batch_started(str(self.folder))

    def _milestone(self, done: int, total: int, said_at: int) -> str | None:
        return messages.batch_milestone(done, total, said_at)

    def _outcome(self) -> str:
        self.session.refresh_statuses(self.writer)
        return messages.batch_outcome(self.result.tally(), self.result.interrupted, self.report)

    def _failed(self, error: str) -> str:
        return messages.batch_failed(error)

    def _work(self) -> tuple[Any, str]:
        from capdesk.folders.batch import run_batch, write_report

        post = self.session.runner.post

        def progress(done: int, total: int, row) -> None:
            name = Path(row.path).name
            post(lambda: self._progress(done, total, name))

        result = run_batch([self.folder], self.session.describer(), self.writer, recursive=self.recursive,
                           progress=progress, cancelled=self.cancel_event.is_set)
        if self.report:
            Path(self.report).parent.mkdir(parents=True, exist_ok=True)
            write_report(result, Path(self.report))
        return result, ""


def captions_problem(folder: str) -> str | None:
    """Why a folder cannot be taught from, found by listing it (no training loaded), or None: it is not a
    folder, it holds no picture, or no picture has a caption file beside it."""
    root = Path(folder)
    if not root.is_dir():
        return f"{folder} is not a folder"
    pictures = [f for f in root.rglob("*") if is_image_path(f) and f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(root).parts)]
    if not pictures:
        return f"{folder} holds no pictures"
    if not any(f.with_suffix(".txt").is_file() or f.with_name(f.name + ".txt").is_file() for f in pictures):
        return (f"none of the {len(pictures)} pictures in {folder} has captions beside it; teaching needs a text "
                "file of captions next to each picture (photo.jpg and photo.txt, one caption a line)")
    return None


class TeachJob:
    """Fine-tune a model on a folder of the person's pictures; the new model is installed for automatic
    use only when it proved itself (``training.finetune``), and never made the model in use."""

    def __init__(self, session: Session, folder: str, base: str, name: str, epochs: int,
                 on_progress: Callable[[str, int, int], None] | None = None,
                 on_finished: Callable[[Any, str], None] | None = None) -> None:
        self.session, self.args = session, (folder, base, name, epochs)
        self.on_progress, self.on_finished = on_progress, on_finished
        self.cancel_event = threading.Event()
        self.manifest: dict | None = None
        self.error = ""
        self.running = False
        self._t0 = 0.0

    def start(self) -> None:
        self.manifest, self.error, self.running = None, "", True
        why = captions_problem(self.args[0])
        if why is not None:  # answered at once, in the window: nothing to read for half a minute first
            self.manifest, self.error, self.running = None, why, False
            text = messages.teach_cannot_start(why)
            if self.on_finished:
                self.on_finished(None, text)
            self.session.say(text)
            return
        self._t0 = time.monotonic()
        self.session.say(messages.TEACH_PREPARING)
        self.session.runner.run(self._work, on_done=self._done, on_failed=lambda msg: self._done((None, msg)))

    def cancel(self) -> None:
        if self.running and not self.cancel_event.is_set():
            self.cancel_event.set()
            self.session.say(messages.TEACH_STOPPING)

    def _work(self) -> tuple[dict | None, str]:
        folder, base, name, epochs = self.args
        try:
            from training.finetune import FinetuneError, finetune
            from training.train import Cancelled
        except ImportError as exc:
            return None, training_missing(exc)
        post = self.session.runner.post
        try:
            m = finetune(Path(folder), name, base or None, epochs, progress=False,
                         on_step=lambda e, s, n, E: post(lambda: self._progress(e, s, n, E)),
                         should_stop=self.cancel_event.is_set)
            return m, ""
        except Cancelled:
            return None, "cancelled; start again with the same name to resume"
        except FinetuneError as exc:
            return None, str(exc)

    def _progress(self, epoch: int, step: int, steps: int, epochs: int) -> None:
        total, done = steps * epochs, epoch * steps + step
        spent = time.monotonic() - self._t0
        left = spent / max(done, 1) * (total - done) / 60
        if self.on_progress:
            self.on_progress(messages.teach_progress(epoch, epochs, step, steps, left), done, total)

    def _done(self, outcome: tuple[dict | None, str]) -> None:
        self.manifest, self.error = outcome
        self.running = False
        self.cancel_event.clear()
        if self.error:
            text = messages.teach_stopped(self.error)
        else:
            # The new model is never made the one in use: automatic routing hands it only the pictures
            # like its own, and only when it proved itself (its verdict says which); the describer is
            # loaded afresh so that routing sees it.
            verdict = (self.manifest.get("finetune") or {}).get("verdict", "")
            if verdict:
                text = messages.teach_finished(verdict)
            else:
                h = self.manifest["metrics"]["heldout"]
                text = messages.teach_done(self.manifest["name"], h["before"].get("CIDEr", 0.0),
                                           h["after"].get("CIDEr", 0.0))
            self.session.apply_settings()
        if self.on_finished:
            self.on_finished(self.manifest, text)
        self.session.say(text)


__all__ = ["BatchJob", "Kind", "TeachJob", "batch_report_path"]
