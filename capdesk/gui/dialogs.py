"""Dialogs: batch export, models, settings."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, QThread, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from capdesk.bundle import BundleError, discover
from capdesk.settings import Settings
from capdesk.sidecars import SidecarOptions, SidecarWriter

from .qtutil import announce, screen_reader_active


def _named(w: QWidget, name: str, desc: str = "") -> QWidget:
    w.setAccessibleName(name)
    if desc:
        w.setAccessibleDescription(desc)
        w.setToolTip(desc)
    return w


def choose_from_list(parent, title: str, label: str, items: list[str]) -> list[str]:
    dlg = QDialog(parent)
    dlg.setWindowTitle(title)
    lay = QVBoxLayout(dlg)
    lbl = QLabel(label)
    lst = _named(QListWidget(), title)
    lst.setSelectionMode(QListWidget.SelectionMode.MultiSelection)
    lst.addItems(items)
    lbl.setBuddy(lst)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dlg.accept)
    buttons.rejected.connect(dlg.reject)
    for b in buttons.buttons():
        b.setAccessibleName(b.text().replace("&", ""))
    lay.addWidget(lbl)
    lay.addWidget(lst)
    lay.addWidget(buttons)
    if dlg.exec():
        return [i.text() for i in lst.selectedItems()]
    return []


class _FolderJobDialog(QDialog):
    """A dialog that runs one long job on a folder in a thread, with a status line that is announced."""

    stopping = "Stopping…"

    def _folder_row(self, form: QFormLayout, text: str, name: str) -> QLineEdit:
        self.folder = _named(QLineEdit(text), name)
        browse = _named(QPushButton("&Browse…"), "Browse for folder")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder)
        row.addWidget(browse)
        lbl = QLabel("&Folder:")
        lbl.setBuddy(self.folder)
        form.addRow(lbl, row)
        return self.folder

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Folder", self.folder.text() or str(Path.home()))
        if d:
            self.folder.setText(d)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        if screen_reader_active():
            announce(self, text)

    def _run(self, worker: QObject) -> None:
        """Start ``worker.run`` in a thread; its ``progress`` and ``finished`` reach ``_progress``/``_finished``."""
        self.worker = worker
        self.thread = QThread(self)
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.run)
        worker.progress.connect(self._progress)
        worker.finished.connect(self._finished)
        self.start_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        self.bar.setRange(0, 0)
        self.thread.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel.set()
            self._say(self.stopping)

    def reject(self) -> None:
        if self.thread is not None and self.thread.isRunning():
            self.cancel()
            self.thread.quit()
            self.thread.wait(60000)
        super().reject()


class _BatchWorker(QObject):
    progress = Signal(int, int, str)
    finished = Signal(object, str)

    def __init__(self, describer_factory, writer, folder, recursive, report) -> None:
        super().__init__()
        self.factory, self.writer, self.folder = describer_factory, writer, folder
        self.recursive, self.report = recursive, report
        self.cancel = threading.Event()

    def run(self) -> None:
        from capdesk.batch import run_batch, write_report

        try:
            result = run_batch([self.folder], self.factory(), self.writer, recursive=self.recursive,
                               progress=lambda d, t, row: self.progress.emit(d, t, Path(row.path).name),
                               cancelled=self.cancel.is_set)
            if self.report:
                write_report(result, Path(self.report))
            self.finished.emit(result, "")
        except Exception as exc:  # reported in the dialog
            self.finished.emit(None, f"{type(exc).__name__}: {exc}")


class BatchDialog(_FolderJobDialog):
    """Choose a folder, formats and options; run with progress and cancel; open the report."""

    stopping = "Stopping after the current image…"

    def __init__(self, window, folder: str = "") -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Batch export alt text")
        self.setAccessibleName("Batch export alt text")
        s: Settings = window.settings
        form = QFormLayout()
        self._folder_row(form, folder, "Folder whose images get alt text")
        self.recursive = _named(QCheckBox("Include &sub-folders"), "Include sub-folders")
        self.txt = _named(QCheckBox("&Text sidecars (.txt)"), "Write text sidecars")
        self.txt.setChecked("txt" in s.sidecar_formats)
        self.xmp = _named(QCheckBox("&XMP sidecars (IPTC alt text)"), "Write XMP sidecars")
        self.xmp.setChecked("xmp" in s.sidecar_formats)
        self.xmp_name = _named(QComboBox(), "XMP file naming")
        self.xmp_name.addItems(["photo.jpg.xmp (cannot collide)", "photo.xmp (Lightroom style)"])
        self.xmp_name.setCurrentIndex(0 if s.xmp_name == "ext" else 1)
        self.overwrite = _named(QCheckBox("&Overwrite sidecars CapDesk did not write"), "Overwrite foreign sidecars",
                                "Replace sidecars written or edited by a person or another program")
        self.report_fmt = _named(QComboBox(), "Report format")
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
        self.bar = _named(QProgressBar(), "Batch progress")
        self.status = _named(QLabel(""), "Batch status")
        self.status.setWordWrap(True)
        self.start_btn = _named(QPushButton("&Start"), "Start batch export")
        self.cancel_btn = _named(QPushButton("&Cancel"), "Cancel batch export")
        self.open_btn = _named(QPushButton("Open &report"), "Open the report")
        self.close_btn = _named(QPushButton("C&lose"), "Close")
        self.open_btn.setEnabled(False)
        self.cancel_btn.setEnabled(False)
        self.start_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.cancel)
        self.open_btn.clicked.connect(self.open_report)
        self.close_btn.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        for b in (self.start_btn, self.cancel_btn, self.open_btn, self.close_btn):
            buttons.addWidget(b)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addLayout(buttons)
        self.thread: QThread | None = None
        self.worker: _BatchWorker | None = None
        self.result = None
        self.report_path: str = ""

    def start(self) -> None:
        folder = Path(self.folder.text().strip())
        if not folder.is_dir():
            self._say(f"{folder}: not a folder")
            return
        formats = tuple(f for f, box in (("txt", self.txt), ("xmp", self.xmp)) if box.isChecked())
        if not formats:
            self._say("Choose at least one sidecar format")
            return
        s = self.window_.settings
        writer = SidecarWriter(SidecarOptions(formats, s.txt_name, "ext" if self.xmp_name.currentIndex() == 0
                                              else "stem", s.lang, overwrite=self.overwrite.isChecked()))
        ext = {0: ".html", 1: ".csv", 2: ".json"}.get(self.report_fmt.currentIndex())
        self.report_path = str(folder / f"capdesk-report{ext}") if ext else ""
        self._say("Batch export started")
        self._run(_BatchWorker(self.window_.get_describer, writer, str(folder), self.recursive.isChecked(),
                               self.report_path))

    def _progress(self, done: int, total: int, name: str) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.status.setText(f"{done} of {total}: {name}")

    def _finished(self, result, error: str) -> None:
        self.thread.quit()
        self.thread.wait()
        self.result = result
        self.cancel_btn.setEnabled(False)
        self.start_btn.setEnabled(True)
        if error:
            self._say(f"Batch export failed: {error}")
            return
        counts = ", ".join(f"{v} {k}" for k, v in sorted(result.counts().items())) or "no images"
        self._say(f"Batch export {'cancelled' if result.interrupted else 'finished'}: {counts}")
        self.open_btn.setEnabled(bool(self.report_path))

    def open_report(self) -> None:
        if self.report_path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.report_path))


class ModelsDialog(QDialog):
    """Installed bundles: verify, switch, import a folder or zip into the user's model folder."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Models")
        self.list = _named(QListWidget(), "Installed models")
        self.info = _named(QLabel(""), "Model details")
        self.info.setWordWrap(True)
        self.list.currentItemChanged.connect(self._show)
        b_auto = _named(QPushButton("&Automatic (each picture to the model it fits)"), "Use automatic model choice")
        b_use = _named(QPushButton("&Use this model"), "Use the selected model")
        b_verify = _named(QPushButton("&Verify"), "Verify the selected model's files")
        b_folder = _named(QPushButton("Import &folder…"), "Import a model folder")
        b_zip = _named(QPushButton("Import &zip…"), "Import a zipped model")
        b_close = _named(QPushButton("&Close"), "Close")
        b_auto.clicked.connect(lambda: self._use(""))
        b_use.clicked.connect(lambda: self._use(self._selected()))
        b_verify.clicked.connect(self.verify)
        b_folder.clicked.connect(lambda: self.import_bundle(QFileDialog.getExistingDirectory(self, "Model folder")))
        b_zip.clicked.connect(lambda: self.import_bundle(
            QFileDialog.getOpenFileName(self, "Model zip", "", "Zip (*.zip)")[0]))
        b_close.clicked.connect(self.reject)
        lay = QVBoxLayout(self)
        lbl = QLabel("Installed &models:")
        lbl.setBuddy(self.list)
        lay.addWidget(lbl)
        lay.addWidget(self.list)
        lay.addWidget(self.info)
        for row in ((b_auto, b_use, b_verify), (b_folder, b_zip, b_close)):
            h = QHBoxLayout()
            for b in row:
                h.addWidget(b)
            lay.addLayout(h)
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        self.bundles = {}
        found, problems = discover()
        current = self.window_.settings.model
        for b in found:
            self.bundles[b.name] = b
            it = QListWidgetItem(f"{b.name} ({b.source})" + ("  — in use" if b.name == current else ""))
            it.setData(256, b.name)
            self.list.addItem(it)
        if problems:
            self.info.setText("Problems: " + "; ".join(problems))
        if self.list.count():
            self.list.setCurrentRow(0)

    def _selected(self) -> str:
        it = self.list.currentItem()
        return it.data(256) if it else ""

    def _show(self, *_):
        b = self.bundles.get(self._selected())
        if b is None:
            return
        m = b.manifest
        t = m.get("metrics", {}).get("test", {}).get("beam3", {})
        perf = f" Test BLEU-4 {t['BLEU-4']:.3f}, CIDEr {t['CIDEr']:.3f}." if "BLEU-4" in t else ""
        self.info.setText(f"{m.get('description', '')} Domain: {m.get('domain', '?')}.{perf} {b.path}")

    def _use(self, name: str) -> None:
        self.window_.settings.model = name
        self.accept()

    def verify(self) -> None:
        b = self.bundles.get(self._selected())
        if b is None:
            return
        problems = b.verify()
        msg = f"{b.name}: all files verified" if not problems else f"{b.name}: " + "; ".join(problems)
        self.info.setText(msg)
        if screen_reader_active():
            announce(self, msg)

    def import_bundle(self, src: str) -> str | None:
        """Check a bundle folder or zip and install it in the user's model folder (the CLI's service)."""
        if not src:
            return None
        from capdesk.model_install import install

        try:
            done = install(src)
        except BundleError as exc:
            self.info.setText(f"Import failed: {exc}")
            return None
        self.info.setText(done.message()[0].upper() + done.message()[1:])
        self.refresh()
        return done.name


class SettingsDialog(QDialog):
    def __init__(self, parent, settings: Settings) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.s = settings
        form = QFormLayout(self)

        def add(label: str, w: QWidget, name: str) -> QWidget:
            _named(w, name)
            lbl = QLabel(label)
            lbl.setBuddy(w)
            form.addRow(lbl, w)
            return w

        from capdesk.providers import available

        self.provider = add("Execution &provider:", QComboBox(), "Execution provider")
        self.provider.addItems(["auto", *available()])
        self.provider.setCurrentText(settings.provider)
        self.beam = add("&Beam width:", QSpinBox(), "Beam width")
        self.beam.setRange(1, 10)
        self.beam.setValue(settings.beam)
        self.speech = add("&Speech:", QComboBox(), "Speech")
        self.speech.addItems(["auto", "speak", "announce", "off"])
        self.speech.setCurrentText(settings.speech)
        self.rate = add("Speech &rate (words per minute):", QSpinBox(), "Speech rate")
        self.rate.setRange(80, 450)
        self.rate.setValue(settings.rate)
        self.volume = add("&Volume:", QDoubleSpinBox(), "Volume")
        self.volume.setRange(0.0, 1.0)
        self.volume.setSingleStep(0.1)
        self.volume.setValue(settings.volume)
        self.txt = add("&Text sidecars:", QCheckBox(), "Write text sidecars")
        self.txt.setChecked("txt" in settings.sidecar_formats)
        self.xmp = add("&XMP sidecars:", QCheckBox(), "Write XMP sidecars")
        self.xmp.setChecked("xmp" in settings.sidecar_formats)
        self.xmp_name = add("XMP &naming:", QComboBox(), "XMP file naming")
        self.xmp_name.addItems(["ext", "stem"])
        self.xmp_name.setCurrentText(settings.xmp_name)
        self.lang = add("Alt text &language:", QLineEdit(settings.lang), "Alt text language")
        self.threshold = add("&Confidence threshold:", QDoubleSpinBox(), "Confidence threshold")
        self.threshold.setRange(0.0, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(settings.confidence_threshold)
        self.clipboard = add("Caption &clipboard images:", QCheckBox(), "Caption clipboard images")
        self.clipboard.setChecked(settings.clipboard)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        for b in buttons.buttons():
            b.setAccessibleName(b.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        s = self.s
        s.provider = self.provider.currentText()
        s.beam = self.beam.value()
        s.speech = self.speech.currentText()
        s.rate = self.rate.value()
        s.volume = self.volume.value()
        s.sidecar_formats = [f for f, b in (("txt", self.txt), ("xmp", self.xmp)) if b.isChecked()] or ["txt"]
        s.xmp_name = self.xmp_name.currentText()
        s.lang = self.lang.text().strip() or "en"
        s.confidence_threshold = self.threshold.value()
        s.clipboard = self.clipboard.isChecked()
        super().accept()


class _TeachWorker(QObject):
    progress = Signal(int, int, int, int)
    finished = Signal(object, str)

    def __init__(self, folder: str, base: str, name: str, epochs: int) -> None:
        super().__init__()
        self.args = (folder, base, name, epochs)
        self.cancel = threading.Event()

    def run(self) -> None:
        folder, base, name, epochs = self.args
        try:
            from training.finetune import FinetuneError, finetune
            from training.train import Cancelled
        except ImportError as exc:
            from capdesk.cli import training_missing

            self.finished.emit(None, training_missing(exc))
            return
        try:
            m = finetune(Path(folder), name, base or None, epochs, progress=False,
                         on_step=lambda e, s, n, E: self.progress.emit(e, s, n, E), should_stop=self.cancel.is_set)
            self.finished.emit(m, "")
        except Cancelled:
            self.finished.emit(None, "cancelled; start again with the same name to resume")
        except FinetuneError as exc:
            self.finished.emit(None, str(exc))
        except Exception as exc:  # shown in the dialog, never a crash
            self.finished.emit(None, f"{type(exc).__name__}: {exc}")


class TeachDialog(_FolderJobDialog):
    """'Teach CapDesk': fine-tune a model on a folder of the user's images with .txt alt text."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Teach CapDesk your pictures")
        form = QFormLayout()
        intro = QLabel("Choose a folder of your pictures, each with a .txt file of its alt text beside it "
                       "(the files CapDesk writes, corrected by you). A few hundred pictures work well.")
        intro.setWordWrap(True)
        self._folder_row(form, window.settings.last_folder, "Folder of pictures with alt text")
        self.base = _named(QComboBox(), "Model to start from")
        found, _ = discover()
        self.base.addItems([b.name for b in found])
        if "everyday" in [b.name for b in found]:
            self.base.setCurrentText("everyday")
        bl = QLabel("Start &from:")
        bl.setBuddy(self.base)
        form.addRow(bl, self.base)
        self.name = _named(QLineEdit("my-pictures"), "Name of the new model")
        nl = QLabel("New model &name:")
        nl.setBuddy(self.name)
        form.addRow(nl, self.name)
        self.epochs = _named(QSpinBox(), "Training rounds (epochs)")
        self.epochs.setRange(1, 100)
        self.epochs.setValue(30)
        el = QLabel("&Rounds:")
        el.setBuddy(self.epochs)
        form.addRow(el, self.epochs)
        self.bar = _named(QProgressBar(), "Teaching progress")
        self.status = _named(QLabel(""), "Teaching status")
        self.status.setWordWrap(True)
        self.start_btn = _named(QPushButton("&Start"), "Start teaching")
        self.cancel_btn = _named(QPushButton("&Cancel"), "Cancel teaching")
        self.close_btn = _named(QPushButton("C&lose"), "Close")
        self.cancel_btn.setEnabled(False)
        self.start_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.cancel)
        self.close_btn.clicked.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        h = QHBoxLayout()
        for b in (self.start_btn, self.cancel_btn, self.close_btn):
            h.addWidget(b)
        lay.addLayout(h)
        self.thread: QThread | None = None
        self.worker: _TeachWorker | None = None
        self.manifest = None
        self.error = ""
        self._t0 = 0.0

    def start(self) -> None:
        import time

        self.manifest, self.error = None, ""
        self._t0 = time.monotonic()
        self._say("Reading your pictures and preparing…")
        self._run(_TeachWorker(self.folder.text().strip(), self.base.currentText(), self.name.text().strip(),
                               self.epochs.value()))

    def _progress(self, epoch: int, step: int, steps: int, epochs: int) -> None:
        import time

        total = steps * epochs
        done = epoch * steps + step
        self.bar.setRange(0, total)
        self.bar.setValue(done)
        spent = time.monotonic() - self._t0
        eta = spent / max(done, 1) * (total - done)
        self.status.setText(f"Round {epoch + 1} of {epochs}, step {step} of {steps}; "
                            f"at most about {eta / 60:.0f} min left (it may stop early when it stops improving)")

    def _finished(self, manifest, error: str) -> None:
        self.thread.quit()
        self.thread.wait()
        self.cancel_btn.setEnabled(False)
        self.start_btn.setEnabled(True)
        self.manifest, self.error = manifest, error
        if error:
            self._say(f"Teaching stopped: {error}")
            return
        h = manifest["metrics"]["heldout"]
        b, a = h["before"].get("CIDEr", 0.0), h["after"].get("CIDEr", 0.0)
        self.window_.settings.model = manifest["name"]
        self.window_.settings.save()
        self.window_._apply_settings()
        self._say(f"Done. CapDesk now uses {manifest['name']}. On your held-out pictures CIDEr went from "
                  f"{b:.2f} to {a:.2f}.")
