"""Batch export: alt text for a whole folder, with progress, cancel, a spoken outcome and a report."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QVBoxLayout

from capdesk.session import messages
from capdesk.session.jobs import BatchJob, batch_report_path
from capdesk.sidecars import formats
from capdesk.sidecars.writer import SidecarWriter

from ..announcer import FOCUS_SETTLE_S
from ..widgets import named
from .common import PathEdit, ReportJobDialog

REPORT_SUFFIXES = {0: ".html", 1: ".csv", 2: ".json"}
NAMED_SUFFIXES = (".html", ".htm", ".csv", ".json")


class BatchDialog(ReportJobDialog):
    """Choose a folder, formats and options; run with progress and cancel; open the report."""

    def __init__(self, window, folder: str = "") -> None:
        super().__init__(window, "Batch export alt text")
        s = window.settings
        form = QFormLayout()
        self._folder_row(form, folder, "Folder whose pictures get alt text")
        self.recursive = named(QCheckBox("&Include sub-folders"), "Include sub-folders")
        self.sidecar_boxes: dict[str, QCheckBox] = {}  # one per sidecar format, by its name
        for fmt in formats.known():
            box = self.sidecar_boxes[fmt.name] = named(QCheckBox(f"{fmt.label} ({fmt.detail})"), fmt.action)
            box.setChecked(fmt.name in s.sidecar_formats)
        self.txt, self.xmp = self.sidecar_boxes["txt"], self.sidecar_boxes["xmp"]  # as scripts reach them
        self.xmp_name = named(QComboBox(), "XMP file naming")
        for naming, example, note in formats.get("xmp").naming_choices():
            self.xmp_name.addItem(f"{example} ({note})" if note else example, naming)
        self.xmp_name.setCurrentIndex(max(0, self.xmp_name.findData(s.xmp_name)))
        self.overwrite = named(QCheckBox("&Overwrite sidecars CapDesk did not write"), "Overwrite foreign sidecars",
                               "Replace sidecars written or edited by a person or another program")
        self.report_fmt = named(QComboBox(), "Report format")
        self.report_fmt.addItems(["HTML page (for review)", "CSV", "JSON", "No report"])
        # Empty: CapDesk's own reports folder. A report in the picture folder would be published with it.
        self.report_file = named(PathEdit(), "Report file",
                                 "Where to save the report; empty: CapDesk's reports folder, named after the "
                                 "folder and the time. A name ending in .csv, .json or .html chooses that format")
        self.report_file.setPlaceholderText("CapDesk's reports folder")
        for w in (self.recursive, *self.sidecar_boxes.values()):
            form.addRow(w)
        nl = QLabel("XMP &naming:")
        nl.setBuddy(self.xmp_name)
        form.addRow(nl, self.xmp_name)
        form.addRow(self.overwrite)
        rl = QLabel("&Report:")
        rl.setBuddy(self.report_fmt)
        form.addRow(rl, self.report_fmt)
        fl = QLabel("Save report &as:")
        fl.setBuddy(self.report_file)
        form.addRow(fl, self.report_file)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        self._progress_rows(lay, "Batch")
        self._job_buttons(lay, "Start the batch export", "Stop after the current picture", report=True)
        self.job: BatchJob | None = None
        self.result = None
        self.report_path = ""
        self._bar_from = 0.0  # no percentage is shown before this moment of a run
        self._run_no = 0

    def start(self) -> None:
        folder = Path(self.folder.text().strip())
        chosen_formats = tuple(f for f, box in self.sidecar_boxes.items() if box.isChecked())
        if not chosen_formats:
            self.status.setText(messages.CHOOSE_A_FORMAT)
            self.session.say(messages.CHOOSE_A_FORMAT)
            return
        s = self.window_.settings
        chosen = {"formats": chosen_formats, "xmp_name": self.xmp_name.currentData(),
                  "overwrite": self.overwrite.isChecked()}
        writer = SidecarWriter(s.sidecar_options(**chosen))
        ext = REPORT_SUFFIXES.get(self.report_fmt.currentIndex())
        self.report_path = str(self.report_file_for(folder, ext)) if ext else ""
        self._start_job(BatchJob(self.session, writer, folder, self.recursive.isChecked(), self.report_path,
                                 on_progress=self._progress, on_finished=self._finished), folder)

    def report_file_for(self, folder: Path, ext: str) -> Path:
        """The report's absolute path: the one the person named (a folder gets the usual name inside it),
        or a new one in CapDesk's reports folder."""
        given = self.report_file.text().strip()
        if not given:
            return batch_report_path(folder, ext)
        path = Path(given).expanduser().absolute()
        if path.is_dir():
            return path / batch_report_path(folder, ext).name
        return path if path.suffix.lower() in NAMED_SUFFIXES else path.with_name(path.name + ext)

    def _start_job(self, job, folder: Path) -> None:
        if not job.can_start():
            job.start()  # says why
            self.status.setText(messages.not_a_folder(str(folder)))
            return
        self.job, self.result = job, None
        self.open_btn.setEnabled(False)
        # A new run shows no number until its start has been heard: the focus goes to Cancel first, the
        # screen reader reads it, then the start is said there (the announcer waits for that read), and
        # only then does the bar show how far this run is, from 0. A value left from the last run, or
        # one from this run said before "started", would be news out of order.
        self._run_no += 1
        self.bar.reset()
        self._running(True)
        self._bar_from = time.monotonic() + FOCUS_SETTLE_S + 0.5
        job.start()
        self.status.setText(job.started_text())

    def _progress(self, done: int, total: int, name: str) -> None:
        self.status.setText(messages.batch_progress(done, total, name))
        if time.monotonic() >= self._bar_from:  # until then the next line, or the outcome, shows it
            self._set_bar(done, total)

    def _set_bar(self, value: int, maximum: int) -> None:
        self.bar.setRange(0, max(maximum, 1))
        self.bar.setValue(value)

    def _show_bar_later(self, value: int, maximum: int) -> None:
        """The bar at ``value``: now, or once the run's start has been said (a run cancelled at once)."""
        wait = self._bar_from - time.monotonic()
        if wait <= 0:
            self._set_bar(value, maximum)
            return
        run = self._run_no
        QTimer.singleShot(int(wait * 1000) + 1, self,
                          lambda: self._set_bar(value, maximum) if run == self._run_no else None)

    def _finished(self, result, text: str) -> None:
        """The outcome; the bar stays where the run got to: full only when every picture was done (a
        cancelled run is never shown, nor said, as 100 percent)."""
        self.result = result
        self.status.setText(text)
        if result is None:
            self._show_bar_later(0, 1)
        else:
            t = result.tally()
            self._show_bar_later(t["done"] if t["listed"] else int(not result.interrupted), t["listed"])
        self.open_btn.setEnabled(bool(result is not None and self.report_path))
        self._running(False)
