"""Settings: the model's engine, speech (mode, voice, rate, volume), sidecars, review threshold, text reading,
clipboard, and the key that describes the focused picture from anywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QMessageBox,
    QSpinBox,
    QWidget,
)

from capdesk import limits
from capdesk.screen import shortcut
from capdesk.session.settings import Settings
from capdesk.sidecars import formats

from ..widgets import named
from .common import PathEdit

SPEECH_MODES = {
    "auto": "Screen reader when one runs, else CapDesk's voice",
    "speak": "CapDesk's voice",
    "announce": "Screen reader only",
    "off": "Silent (descriptions are only shown)",
}
DEFAULT_VOICE = "System default voice"
MODEL_BEAM = "Each model's own"
SHORTCUT_NAME = "Key that describes the focused picture"
SHORTCUT_HELP = ("Pressing this key anywhere runs capdesk screen --focus --speak: CapDesk says what the picture "
                 "with the keyboard focus shows. Write it as GNOME does, e.g. <Super>d or <Control><Alt>p; "
                 "leave it empty for no key.")


# ONNX Runtime's execution providers, in the words of the person choosing where the model runs.
# --ocr's choices (capdesk.limits.OCR_MODES), in the words of the person choosing.
OCR_WORDS = {"auto": "Where the picture has text (a quick look at every picture)",
             "always": "Always (slower: reads every picture in full)",
             "never": "Never"}
OCR_NAME = "Read text in pictures"

PROVIDER_WORDS = {"auto": "Automatic (the fastest this computer has)", "cpu": "The processor (CPU)",
                  "cuda": "An NVIDIA graphics card (CUDA)", "directml": "The graphics card (DirectML)",
                  "coreml": "Apple's neural engine or graphics (Core ML)"}


class SettingsDialog(QDialog):
    def __init__(self, parent, settings: Settings, voices: list[tuple[str, str]] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.s = settings
        form = QFormLayout(self)

        def add(label: str, w: QWidget, name: str) -> QWidget:
            named(w, name)
            lbl = QLabel(label)
            lbl.setBuddy(w)
            form.addRow(lbl, w)
            return w

        from capdesk.model.providers import available

        self.provider = add("Run the &model on:", QComboBox(), "Run the model on")
        for name in ("auto", *available()):
            self.provider.addItem(PROVIDER_WORDS.get(name, name), name)
        self.provider.setCurrentIndex(max(0, self.provider.findData(settings.provider)))
        self.beam = add("&Beam width:", QSpinBox(), "Beam width")
        # Below the range: no beam chosen, so each model uses the beam it was tuned with.
        self.beam.setRange(limits.BEAM_MIN - 1, limits.BEAM_MAX)
        self.beam.setSpecialValueText(MODEL_BEAM)
        self.beam.setValue(settings.beam if settings.beam is not None else limits.BEAM_MIN - 1)
        self.speech = add("&Speech:", QComboBox(), "Speech")
        for mode, text in SPEECH_MODES.items():
            self.speech.addItem(text, mode)
        self.speech.setCurrentIndex(max(0, self.speech.findData(settings.speech)))
        if voices is None:
            from capdesk.speech import list_voices

            voices = list_voices()
        self.voice = add("V&oice:", QComboBox(), "Voice")
        self.voice.addItem(DEFAULT_VOICE, "")
        for vid, name in voices:
            self.voice.addItem(name, vid)
        self.voice.setCurrentIndex(max(0, self.voice.findData(settings.voice)))
        self.rate = add("Speech &rate (words per minute):", QSpinBox(), "Speech rate")
        self.rate.setRange(limits.SPEECH_RATE_MIN, limits.SPEECH_RATE_MAX)
        self.rate.setValue(settings.rate)
        self.volume = add("&Volume:", QDoubleSpinBox(), "Volume")
        self.volume.setRange(limits.VOLUME_MIN, limits.VOLUME_MAX)
        self.volume.setSingleStep(0.1)
        self.volume.setValue(settings.volume)
        self.sidecar_boxes: dict[str, QCheckBox] = {}  # one per sidecar format, by its name
        for fmt in formats.known():
            box = self.sidecar_boxes[fmt.name] = add(f"{fmt.label}:", QCheckBox(), fmt.action)
            box.setChecked(fmt.name in settings.sidecar_formats)
        self.txt, self.xmp = self.sidecar_boxes["txt"], self.sidecar_boxes["xmp"]  # as scripts reach them
        self.ext_descr = QCheckBox()
        add("Longer &description in XMP:", self.ext_descr, "Longer description in XMP sidecars")
        self.ext_descr.setToolTip("Also write IPTC ExtDescrAccessibility: what the model said, the tags, "
                                  "the text read and plain facts about the picture")
        self.ext_descr.setChecked(bool(settings.ext_descr))
        self.xmp_name = add("XMP sidecar &names:", QComboBox(), "XMP sidecar names")
        for naming, example, note in formats.get("xmp").naming_choices():  # by example: "photo.jpg.xmp"
            self.xmp_name.addItem(f"{example} ({note})" if note else example, naming)
        self.xmp_name.setCurrentIndex(max(0, self.xmp_name.findData(settings.xmp_name)))
        # Plain text edits, not QLineEdit, which Orca reads one character short ("pt-B" for "pt-BR").
        # It names the alt text's language in the XMP (xml:lang); the words themselves are the model's.
        self.lang = add("Alt text &language tag in XMP:", PathEdit(settings.lang), "Alt text language tag in XMP")
        self.threshold = add("&Confidence threshold:", QDoubleSpinBox(), "Confidence threshold")
        self.threshold.setRange(limits.CONFIDENCE_MIN, limits.CONFIDENCE_MAX)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(settings.confidence_threshold)
        self.ocr = add("Read text in &pictures:", QComboBox(), OCR_NAME)
        for mode in limits.OCR_MODES:
            self.ocr.addItem(OCR_WORDS.get(mode, mode), mode)
        self.ocr.setCurrentIndex(max(0, self.ocr.findData(settings.ocr)))
        self.clipboard = add("Caption cl&ipboard images:", QCheckBox(), "Caption clipboard images")
        self.clipboard.setChecked(settings.clipboard)
        # A key bound by install-user.sh --shortcut, not yet in the settings, is shown as the one in use.
        self._key_before = settings.screen_shortcut or shortcut.current() or ""
        self.shortcut = add("Screen description &key:", PathEdit(self._key_before), SHORTCUT_NAME)
        self.shortcut.setAccessibleDescription(SHORTCUT_HELP)
        self.shortcut.setToolTip(SHORTCUT_HELP)
        about_key = QLabel(SHORTCUT_HELP)
        about_key.setTextFormat(Qt.TextFormat.PlainText)  # "<Super>" is a key, not a tag
        about_key.setWordWrap(True)
        # Tied to the field it explains: a label tied to nothing is read by Orca as part of the dialog's
        # introduction, and this one was heard whole before the first control.
        about_key.setBuddy(self.shortcut)
        form.addRow(about_key)
        self.changes: list[str] = []  # what the person changed, in words, once accepted
        self._before = self._shown()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        for b in buttons.buttons():
            b.setAccessibleName(b.text().replace("&", ""))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _shown(self) -> dict[str, str]:
        """Each field's value as the person sees it, by its name."""
        out = {}
        for w in self.findChildren(QWidget):
            if isinstance(w, QComboBox):
                out[w.accessibleName()] = w.currentText()
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                out[w.accessibleName()] = w.text()
            elif isinstance(w, QCheckBox):
                out[w.accessibleName()] = "on" if w.isChecked() else "off"
            elif isinstance(w, PathEdit) and w.accessibleName():
                out[w.accessibleName()] = w.text()
        return out

    def accept(self) -> None:
        try:
            key = shortcut.normalize(self.shortcut.text())
        except shortcut.ShortcutError as exc:
            QMessageBox.warning(self, "Settings", f"The key cannot be used: {exc}.")
            self.shortcut.setFocus()
            return  # the dialog stays open on the field to correct
        self.shortcut.setText(key)
        after = self._shown()
        self.changes = [f"{k}: {v}" for k, v in after.items() if self._before.get(k) != v]
        s = self.s
        s.provider = self.provider.currentData()
        s.beam = self.beam.value() if self.beam.value() >= limits.BEAM_MIN else None
        s.speech = self.speech.currentData()
        s.voice = self.voice.currentData() or ""
        s.rate = self.rate.value()
        s.volume = self.volume.value()
        s.sidecar_formats = [f for f, b in self.sidecar_boxes.items() if b.isChecked()] or [formats.FALLBACK]
        s.ext_descr = self.ext_descr.isChecked()
        s.xmp_name = self.xmp_name.currentData()
        s.lang = self.lang.text().strip() or "en"
        s.confidence_threshold = self.threshold.value()
        s.ocr = self.ocr.currentData()
        s.clipboard = self.clipboard.isChecked()
        s.screen_shortcut = key
        if key != self._key_before:
            self.changes.append(self._bind(key))
        super().accept()

    def _bind(self, key: str) -> str:
        """GNOME's binding made to agree with the key; what happened, in words for the confirmation."""
        try:
            return shortcut.apply(key)
        except shortcut.ShortcutError as exc:
            return f"the key is saved, but GNOME's shortcut was not changed ({exc})"
