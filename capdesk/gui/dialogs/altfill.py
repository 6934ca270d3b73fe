"""Fill alt text in web pages and documents: the HTML and Markdown pages, EPUB, Word, PowerPoint and
OpenDocument files of a folder (or one of them) get the descriptions of their pictures, with progress,
cancel, a spoken outcome and a report."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QVBoxLayout

from capdesk.session.altfill_job import AltFillJob, default_report_path

from ..widgets import named
from .common import ReportJobDialog

REPORT_SUFFIXES = {0: ".html", 1: ".json"}


class AltFillDialog(ReportJobDialog):
    """Choose a site folder and options; run with progress and cancel; open the report."""

    def __init__(self, window, folder: str = "") -> None:
        super().__init__(window, "Fill alt text in pages and documents")
        form = QFormLayout()
        intro = QLabel("Images with no alt text in the folder's HTML and Markdown pages and its EPUB, Word, "
                       "PowerPoint and OpenDocument files (or in the one file given) get the description of their "
                       "picture. Nothing else changes, and each changed file's original is kept in CapDesk's "
                       "backup folder.")
        intro.setWordWrap(True)
        self._folder_row(form, folder, "Folder of web pages and documents, or one file")
        self.recursive = named(QCheckBox("&Include sub-folders"), "Include sub-folders")
        self.recursive.setChecked(True)
        self.include_empty = named(QCheckBox('Fill &empty alt text (alt="", marked decorative) too'),
                                   "Fill empty alt text too",
                                   'Also fill images whose author wrote alt="" to mark them decorative')
        self.dry_run = named(QCheckBox("Pre&view only: change no page"), "Preview only",
                             "List what would be written in the report, and change no page")
        self.epub_metadata = named(QCheckBox("Mark EPUB books as having &text alternatives when all pictures have one"),
                                   "EPUB accessibility metadata",
                                   "Record in the book's accessibility details that it has text alternatives, once "
                                   "every picture in it has alt text; nothing else in the book changes")
        self.report_fmt = named(QComboBox(), "Report format")
        self.report_fmt.addItems(["HTML page (for review)", "JSON", "No report"])
        for w in (self.recursive, self.include_empty, self.dry_run, self.epub_metadata):
            form.addRow(w)
        rl = QLabel("&Report:")
        rl.setBuddy(self.report_fmt)
        form.addRow(rl, self.report_fmt)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        self._progress_rows(lay, "Alt text")
        self._job_buttons(lay, "Fill the alt text", "Stop after the pictures being described", report=True)
        self.job: AltFillJob | None = None
        self.result = None
        self.report_path = ""

    def start(self) -> None:
        folder = Path(self.folder.text().strip())
        ext = REPORT_SUFFIXES.get(self.report_fmt.currentIndex())
        self.report_path = str(default_report_path(ext)) if ext else ""
        dry = self.dry_run.isChecked()
        self._start_job(AltFillJob(self.session, folder, self.recursive.isChecked(), self.include_empty.isChecked(),
                                   dry, self.report_path, on_progress=self._progress, on_finished=self._finished,
                                   epub_metadata=self.epub_metadata.isChecked()),
                        folder)
