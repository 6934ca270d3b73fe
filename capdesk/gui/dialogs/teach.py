"""'Teach CapDesk your pictures': fine-tune a model on a folder of pictures with .txt alt text."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QSpinBox, QVBoxLayout

from capdesk.model.bundle import discover
from capdesk.session import messages
from capdesk.session.jobs import TeachJob
from capdesk.training_hint import training_unavailable

from ..widgets import named
from .common import FolderJobDialog, PathEdit


class TeachDialog(FolderJobDialog):
    def __init__(self, window) -> None:
        super().__init__(window, "Teach CapDesk your pictures")
        form = QFormLayout()
        intro = QLabel("Choose a folder of your pictures, each with a .txt file of its alt text beside it "
                       "(the files CapDesk writes, corrected by you). A few hundred pictures work well.")
        intro.setWordWrap(True)
        self._folder_row(form, window.settings.last_folder, "Folder of pictures with alt text")
        self.base = named(QComboBox(), "Model to start from")
        found, _ = discover()
        self.base.addItems([b.name for b in found])
        if "everyday" in [b.name for b in found]:
            self.base.setCurrentText("everyday")
        bl = QLabel("Start fro&m:")
        bl.setBuddy(self.base)
        form.addRow(bl, self.base)
        self.name = named(PathEdit("my-pictures"), "Name of the new model")  # a QLineEdit is read short
        nl = QLabel("New model &name:")
        nl.setBuddy(self.name)
        form.addRow(nl, self.name)
        self.epochs = named(QSpinBox(), "Training rounds (epochs)")
        self.epochs.setRange(1, 100)
        self.epochs.setValue(30)
        el = QLabel("&Rounds:")
        el.setBuddy(self.epochs)
        form.addRow(el, self.epochs)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        self._progress_rows(lay, "Teaching")
        self._job_buttons(lay, "Start teaching", "Stop teaching; starting again with the same name resumes")
        self.job: TeachJob | None = None
        # Said before anything starts: where training is not installed, Start would only fail later.
        self.unavailable = training_unavailable()
        if self.unavailable:
            self.status.setText(messages.teach_unavailable(self.unavailable))
            self.start_btn.setEnabled(False)
            self.session.say(messages.TEACH_UNAVAILABLE)

    @property
    def manifest(self) -> dict | None:
        return self.job.manifest if self.job else None

    @property
    def error(self) -> str:
        return self.job.error if self.job else ""

    def start(self) -> None:
        self.job = TeachJob(self.session, self.folder.text().strip(), self.base.currentText(),
                            self.name.text().strip(), self.epochs.value(), self._progress, self._finished)
        self.job.start()
        if not self.job.running:  # refused at once (no captions beside the pictures): already said
            return
        self.status.setText(messages.TEACH_PREPARING)
        self._running(True)

    def cancel(self) -> None:
        super().cancel()
        if self.job is not None and self.job.running:
            self.status.setText(messages.TEACH_STOPPING)

    def _progress(self, text: str, done: int, total: int) -> None:
        self.bar.setRange(0, total)
        self.bar.setValue(done)
        self.status.setText(text)

    def _finished(self, manifest, text: str) -> None:
        self.status.setText(text)
        if manifest is None:  # failed or stopped: the bar must not stay busy
            self.bar.setRange(0, 1)
            self.bar.setValue(0)
        self._running(False)
