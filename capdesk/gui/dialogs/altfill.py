"""Fill alt text in web pages and documents: the HTML and Markdown pages, EPUB, Word, PowerPoint,
OpenDocument and PDF files of a folder (or one of them) get the descriptions of their pictures, with progress,
cancel, a spoken outcome and a report. By default a dry pass comes first and each proposed text is shown
in a review list (``altfill_review``); only what the person accepts is written."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QFormLayout, QLabel, QVBoxLayout, QWidget

from capdesk.session import messages
from capdesk.session.altfill_job import AltFillJob, default_report_path
from capdesk.session.altfill_review import SKIPPED, UNDECIDED, Choice, ReviewPassJob, WriteAcceptedJob

from ..widgets import named, read_as
from .altfill_review import ReviewDialog, picture_said
from .common import ReportJobDialog

REPORT_SUFFIXES = {0: ".html", 1: ".json"}
REVIEW_CLOSED = "Review closed; nothing was written"
INTRO = ("Images with no alt text in the folder's HTML and Markdown pages and its EPUB, Word, PowerPoint, OpenDocument "
         "and tagged PDF files (or in the one file given) get the description of their picture, or their figure "
         "caption. Unless you choose otherwise, each proposed text is listed first, to accept, edit or skip, and only "
         "what you accept is written. Nothing else changes, and each changed file's original is kept in CapDesk's "
         "backup folder.")
# The choice of ``capdesk alt-fill --write``, in plain words; the first is the window's default.
WRITE_CHOICES = (("facts", "Only descriptions said as fact"),
                 ("probably", "Also those said as 'Probably …', or only the picture's kind"),
                 ("all", "Everything, 'May contain: …' lists too"))


class AltFillDialog(ReportJobDialog):
    """Choose a site folder and options; run with progress and cancel; open the report."""

    def __init__(self, window, folder: str = "") -> None:
        super().__init__(window, "Fill alt text in pages and documents")
        form = QFormLayout()
        # The introduction is the dialog's description, read when it opens, not a label: Orca reads a
        # dialog's labels again whenever the focus comes back from a control it has lost (the review
        # list's entry), and the 75 words were heard again before every outcome of the list. Its role is
        # given before its text: a label's first text makes Qt build its accessible object, as a label.
        intro = read_as(QLabel(), QAccessible.Role.Paragraph)
        intro.setText(INTRO)
        intro.setWordWrap(True)
        self.setAccessibleDescription(INTRO)
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
        self.write_choice = named(QComboBox(), "Write",
                                  "Which descriptions go into the files; the others are listed for review")
        for value, words in WRITE_CHOICES:
            self.write_choice.addItem(words, value)
        self.review_first = named(QCheckBox("List each text to &accept, edit or skip before anything is written"),
                                  "Review before writing",
                                  "A preview pass first; the texts the Write choice takes start accepted, the "
                                  "others to review, and only the accepted ones are written")
        self.review_first.setChecked(True)
        wl = QLabel("&Write:")
        wl.setBuddy(self.write_choice)
        form.addRow(wl, self.write_choice)
        for w in (self.review_first, self.recursive, self.include_empty, self.dry_run, self.epub_metadata):
            form.addRow(w)
        rl = QLabel("&Report:")
        rl.setBuddy(self.report_fmt)
        form.addRow(rl, self.report_fmt)
        # The review list takes this page's place in the same window: a dialog of its own, closed, gave the
        # focus back to this one, which Orca then read again whole (its introduction included) before the outcome.
        self.page = QWidget()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.page)
        lay = QVBoxLayout(self.page)
        lay.addWidget(intro)
        lay.addLayout(form)
        # The status line repeats each outcome, which is said with the control the focus returns to.
        self._progress_rows(lay, "Alt text", QAccessible.Role.StatusBar)
        self._job_buttons(lay, "Fill the alt text", "Stop after the pictures being described", report=True)
        self.job: AltFillJob | WriteAcceptedJob | None = None
        self.result = None
        self.report_path = ""
        self.review: ReviewDialog | None = None
        self._arriving = ("", "")  # the outcome said with the control the focus returns to; the job's own words

    @property
    def write(self) -> str:
        """The ``--write`` value chosen."""
        return self.write_choice.currentData()

    def start(self) -> None:
        folder = Path(self.folder.text().strip())
        self.report_path = self._new_report_path()
        dry = self.dry_run.isChecked()
        kind = ReviewPassJob if self.review_first.isChecked() and not dry else AltFillJob
        self._start_job(kind(self.session, folder, recursive=self.recursive.isChecked(),
                             include_empty=self.include_empty.isChecked(), dry_run=dry, report=self.report_path,
                             on_progress=self._progress, on_finished=self._finished,
                             epub_metadata=self.epub_metadata.isChecked(), write=self.write),
                        folder)

    def _new_report_path(self) -> str:
        ext = REPORT_SUFFIXES.get(self.report_fmt.currentIndex())
        return str(default_report_path(ext)) if ext else ""

    @property
    def announcer(self):
        return getattr(self.window_, "announcer", None)

    def _finished(self, result, text: str) -> None:
        job = self.job
        if isinstance(job, ReviewPassJob) and job.choices and result is not None and not result.interrupted:
            self.review = ReviewDialog(self, self.session, self.announcer, job.choices, self._write_accepted,
                                       self._review_rejected)
            self.setAccessibleDescription("")  # heard once; the list says its own, and leaving it says no more
            self.review.finished.connect(self._review_closed)
            self.layout().addWidget(self.review)
            self.review.show()
            self.review.list.setFocus()
            self.page.hide()
        super()._finished(result, text)

    def _after_run_focus(self):
        if self.review is not None:
            return self.review.list
        target = super()._after_run_focus()
        said, replaces = self._arriving
        if said and self.announcer is not None:
            self.announcer.say_on_arrival(target, said, replaces)
        return target

    def _write_accepted(self, choices: list[Choice]) -> None:
        """The review list's Write accepted: the accepted texts written through the session, as a review file
        applied (the report, if any, is of what was written)."""
        result = self.job.result
        self.report_path = self._new_report_path()
        self._start_job(WriteAcceptedJob(self.session, result, choices, self.report_path, on_finished=self._written,
                                         epub_metadata=self.epub_metadata.isChecked()),
                        Path(self.folder.text().strip()))

    def _written(self, result, text: str) -> None:
        """The page back in the list's place, the focus on Open report (or Close) with the outcome said once."""
        review, self.review = self.review, None
        said = text
        if review is not None and result is not None:
            said = text + not_written(review.choices)
        self.page.show()
        self._arriving = (said, text)
        try:
            self._finished(result, said)
        finally:
            self._arriving = ("", "")
        if review is not None:
            review.done(QDialog.DialogCode.Accepted)

    def _review_rejected(self) -> None:
        """Closed unwritten: back on Start, which opened the list, with what was left said once."""
        review, self.review = self.review, None
        said = REVIEW_CLOSED + (f": {messages.plural(len(review.choices), 'picture')} left without alt text"
                                if review is not None else "")
        self.page.show()
        self.status.setText(said)
        if self.announcer is not None:
            self.announcer.say_on_arrival(self.start_btn, said)
        self.start_btn.setFocus()
        self.session.say(said)  # the window's status bar; not said again to the screen reader

    def _review_closed(self, _code: int) -> None:
        review = self.sender()
        if isinstance(review, ReviewDialog):
            review.deleteLater()  # a closed list must not linger in the accessibility tree


def not_written(choices: list[Choice]) -> str:
    """What the review left unwritten, named: the outcome said nothing of the pictures skipped or not decided."""
    said = ""
    for state, words in ((SKIPPED, "skipped"), (UNDECIDED, "left to review")):
        names = [picture_said(c) for c in choices if c.state == state]
        if names:
            shown = names if len(names) <= 3 else [*names[:3], f"{len(names) - 3} more"]
            said += f"; {words}, not written: {messages.join_names(shown)}"
    return said
