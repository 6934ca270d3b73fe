"""Batch export: alt text for a whole folder, with progress, cancel, a spoken outcome and a report."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QVBoxLayout

from capdesk.session import messages
from capdesk.session.jobs import BatchJob
from capdesk.sidecars.writer import SidecarWriter

from ..widgets import named
from .common import ReportJobDialog

REPORT_SUFFIXES = {0: ".html", 1: ".csv", 2: ".json"}


class BatchDialog(ReportJobDialog):
    """Choose a folder, formats and options; run with progress and cancel; open the report."""

    def __init__(self, window, folder: str = "") -> None:
        super().__init__(window, "Batch export alt text")
        s = window.settings
        form = QFormLayout()
        self._folder_row(form, folder, "Folder whose pictures get alt text")
        self.recursive = named(QCheckBox("&Include sub-folders"), "Include sub-folders")
        self.txt = named(QCheckBox("&Text sidecars (.txt)"), "Write text sidecars")
        self.txt.setChecked("txt" in s.sidecar_formats)
        self.xmp = named(QCheckBox("&XMP sidecars (IPTC alt text)"), "Write XMP sidecars")
        self.xmp.setChecked("xmp" in s.sidecar_formats)
        self.xmp_name = named(QComboBox(), "XMP file naming")
        self.xmp_name.addItems(["photo.jpg.xmp (cannot collide)", "photo.xmp (Lightroom style)"])
        self.xmp_name.setCurrentIndex(0 if s.xmp_name == "ext" else 1)
        self.overwrite = named(QCheckBox("&Overwrite sidecars CapDesk did not write"), "Overwrite foreign sidecars",
                               "Replace sidecars written or edited by a person or another program")
        self.report_fmt = named(QComboBox(), "Report format")
        self.report_fmt.addItems(["HTML page (for review)", "CSV", "JSON", "No report"])
        for w in (self.recursive, self.txt, self.xmp):
            form.addRow(w)
        nl = QLabel("XMP &naming:")
        nl.setBuddy(self.xmp_name)
        form.addRow(nl, self.xmp_name)
        form.addRow(self.overwrite)
        rl = QLabel("&Report:")
        rl.setBuddy(self.report_fmt)
        form.addRow(rl, self.report_fmt)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        self._progress_rows(lay, "Batch")
        self._job_buttons(lay, "Start the batch export", "Stop after the current picture", report=True)
        self.job: BatchJob | None = None
        self.result = None
        self.report_path = ""

    def start(self) -> None:
        folder = Path(self.folder.text().strip())
        formats = tuple(f for f, box in (("txt", self.txt), ("xmp", self.xmp)) if box.isChecked())
        if not formats:
            self.status.setText(messages.CHOOSE_A_FORMAT)
            self.session.say(messages.CHOOSE_A_FORMAT)
            return
        s = self.window_.settings
        chosen = {"formats": formats, "xmp_name": "ext" if self.xmp_name.currentIndex() == 0 else "stem",
                  "overwrite": self.overwrite.isChecked()}
        writer = SidecarWriter(s.sidecar_options(**chosen))
        ext = REPORT_SUFFIXES.get(self.report_fmt.currentIndex())
        self.report_path = str(folder / f"capdesk-report{ext}") if ext else ""
        self._start_job(BatchJob(self.session, writer, folder, self.recursive.isChecked(), self.report_path,
                                 on_progress=self._progress, on_finished=self._finished), folder)
