"""'Teach CapDesk your pictures': fine-tune a model on a folder of pictures with .txt alt text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QSpinBox, QVBoxLayout

from capdesk.model.bundle import discover
from capdesk.session import messages
from capdesk.session.jobs import TeachJob
from capdesk.training_hint import MIN_TEACH_PICTURES, training_unavailable

from ..widgets import StatusLabel, named
from .common import FolderJobDialog, PathEdit

# What to do next, by the verdict's ``next`` (training.proving), in the window's words.
NEXT_STEPS = {
    "none": "Nothing to do: Automatic hands it the pictures like yours.",
    "more_pictures": "Next: add more of your pictures with alt text (a few hundred work well) and teach again "
                     "with the same name.",
    "fewer_rounds": "Next: teach again with fewer rounds (10) or more pictures.",
}


def outcome_text(manifest: dict) -> str:
    """What a finished fine-tune shows under the status line: the figures that decided its verdict,
    what to do next, and what Tools > Models… can do with it (the verdict itself is the status line)."""
    ft, name = manifest.get("finetune") or {}, manifest.get("name", "")
    parts = []
    if ft.get("deciding"):
        parts.append(f"Why, {ft['where']}: " + "; ".join(ft["deciding"]) + ".")
    parts.append(NEXT_STEPS.get(ft.get("next", "none"), NEXT_STEPS["none"]))
    chosen = "" if ft.get("automatic") else " (until then it describes only when chosen there)"
    parts.append(f"Tools > Models… (Ctrl+M) lists {name!r}: select it to read its figures, Use this model to "
                 f"describe every picture with it{chosen}, or Remove… to take it away.")
    return " ".join(parts)


def _row(form: QFormLayout, label: str, widget, desc: str = ""):
    """A field whose spoken name is its label's own words, said once: a name in other words beside the
    label ("Rounds" and "Training rounds (epochs)") was read as the label twice."""
    lbl = QLabel(label)
    lbl.setBuddy(widget)
    named(widget, label.replace("&", "").rstrip(":"), desc)
    form.addRow(lbl, widget)
    return widget


class TeachDialog(FolderJobDialog):
    def __init__(self, window) -> None:
        super().__init__(window, "Teach CapDesk your pictures")
        form = QFormLayout()
        # The minimum is said before Start: it was said only once teaching had refused to begin.
        intro = QLabel("Choose a folder of your pictures, each with a .txt file of its alt text beside it "
                       f"(the files CapDesk writes, corrected by you). At least {MIN_TEACH_PICTURES} pictures "
                       "with alt text are needed; a few hundred work well.")
        intro.setWordWrap(True)
        self._folder_row(form, window.settings.last_folder, "Folder of pictures with alt text")
        self.base = _row(form, "Start fro&m:", QComboBox())
        found, _ = discover()
        self.base.addItems([b.name for b in found])
        if "everyday" in [b.name for b in found]:
            self.base.setCurrentText("everyday")
        self.name = _row(form, "New model &name:", PathEdit("my-pictures"))  # a QLineEdit is read short
        self.epochs = _row(form, "&Rounds (epochs):", QSpinBox(),
                           "Each reads all your pictures once; teaching stops early when it stops improving")
        self.epochs.setRange(1, 100)
        self.epochs.setValue(30)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        self._progress_rows(lay, "Teaching")
        # The outcome, readable with Tab: the figures, what next, what Models can do with the new model.
        self.outcome = StatusLabel("Teaching outcome")
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard
                                             | Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome.hide()
        lay.addWidget(self.outcome)
        self._job_buttons(lay, f"Start teaching (at least {MIN_TEACH_PICTURES} pictures with alt text are needed)",
                          "Stop teaching; starting again with the same name resumes")
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
        self.outcome.setText("")
        self.outcome.hide()
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
        self.bar.setRange(0, 1)
        # Finished is whole even when it stopped early (it stopped improving): the bar stayed at 30%.
        # Failed or stopped: the bar must not stay busy.
        self.bar.setValue(0 if manifest is None else 1)
        if manifest is not None:
            self.outcome.setText(outcome_text(manifest))
            self.outcome.show()
        self._running(False)
