"""Installed models: read about one, verify its files, choose it (or automatic), import a folder or zip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
)

from capdesk.model.bundle import DEFAULT_MODEL, BundleError, discover
from capdesk.model.domain import automatic
from capdesk.session import messages
from capdesk.session.services import metrics_line

from ..qtutil import plain_box, plain_tip
from ..widgets import StatusLabel, button, named

NAME_ROLE = 256
# Read with each entry instead of its tooltip (the install path, which Qt would otherwise offer as its description).
SOURCE_WORDS = {"shipped": "comes with CapDesk", "user": "installed or taught by you",
                "env": "from the models folder CAPDESK_MODELS names"}


def _routed(b) -> bool:
    return b.name == DEFAULT_MODEL or ("domain_gate" in b.manifest and automatic(b.manifest))


def automatic_line(found: list) -> str:
    """What Automatic does with the models installed here, in words: which model takes which pictures."""
    parts = [f"{b.name} for {b.manifest.get('domain', 'its own kind of picture')}" for b in found
             if b.name != DEFAULT_MODEL and _routed(b)]
    base = f"{DEFAULT_MODEL} for everything else" if parts else f"{DEFAULT_MODEL} for every picture"
    return "Automatic uses " + ", ".join([*parts, base]) + "."


class ModelsDialog(QDialog):
    """Enter on a model reads its details: no button is a default that Enter could press, so
    nothing changes (and no alt text is replaced) unless a button is pressed on purpose.
    ``chosen`` is the model picked with Use or Automatic ("" for automatic) once it is accepted."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window_ = window
        self.session = window.session
        self.chosen = ""
        self.setWindowTitle("Models")
        self.list = named(QListWidget(), "Installed models", "Enter reads the model's details")
        self.info = StatusLabel("Model details")
        self.list.currentItemChanged.connect(self._show)
        self.list.activated.connect(lambda *_: self.session.say(self.info.text()))
        self.b_auto = b_auto = button("&Automatic (each picture to the model it fits)", "Use automatic model choice",
                                      lambda: self._use(""))
        b_use = button("&Use this model", "Use the selected model; shown alt text you edited is kept",
                       lambda: self._use(self._selected()))
        b_verify = button("&Verify", "Verify the selected model's files", self.verify)
        b_folder = button("Import &folder…", "Import a model folder",
                          lambda: self.import_bundle(QFileDialog.getExistingDirectory(self, "Model folder")))
        b_zip = button("Import &zip…", "Import a zipped model", lambda: self.import_bundle(
            QFileDialog.getOpenFileName(self, "Model zip", "", "Zip (*.zip)")[0]))
        b_remove = self.b_remove = button("&Remove…", "Remove the selected model you installed or taught; alt "
                                                      "text it wrote is kept", self.remove_selected)
        b_close = button("&Close", "Close without changing the model", self.reject)
        lay = QVBoxLayout(self)
        lbl = QLabel("Installed &models:")
        lbl.setBuddy(self.list)
        lay.addWidget(lbl)
        lay.addWidget(self.list)
        lay.addWidget(self.info)
        for row in ((b_auto, b_use, b_verify), (b_folder, b_zip, b_remove, b_close)):
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
            it = QListWidgetItem(f"{b.name} ({b.source})" + (", in use" if b.name == current else "")
                                 + (", used by Automatic" if not current and _routed(b) else ""))
            it.setData(NAME_ROLE, b.name)
            # The folder and the test scores are shown to those who hover, not read out at every opening.
            perf = metrics_line(b.manifest)
            it.setToolTip(plain_tip(str(b.path) + (f"\n{perf[0].upper()}{perf[1:]}" if perf else "")))
            it.setData(Qt.ItemDataRole.AccessibleDescriptionRole, SOURCE_WORDS.get(b.source, ""))
            self.list.addItem(it)
        # Said on the Automatic button, so a person knows what choosing it means before choosing it.
        self.b_auto.setAccessibleDescription(automatic_line(found))
        self.b_auto.setToolTip(plain_tip(automatic_line(found)))
        if problems:
            self.info.setText("Problems: " + "; ".join(problems))
        if self.list.count():  # start on the model in use
            names = [self.list.item(i).data(NAME_ROLE) for i in range(self.list.count())]
            self.list.setCurrentRow(names.index(current) if current in names else 0)

    def _selected(self) -> str:
        it = self.list.currentItem()
        return it.data(NAME_ROLE) if it else ""

    def _show(self, *_) -> None:
        b = self.bundles.get(self._selected())
        # Only what the person installed or taught can be removed: a shipped model offers no Remove.
        self.b_remove.setEnabled(b is not None and b.source == "user")
        if b is None:
            return
        m = b.manifest
        # The install path and the test scores are not read: the tooltip and capdesk models list have them.
        kind = f" For {m['domain']}." if m.get("domain") else ""
        self.info.setText(f"{b.name}: {m.get('description', '')}{kind}")

    def _use(self, name: str) -> None:
        self.chosen = name
        self.accept()

    def verify(self) -> None:
        b = self.bundles.get(self._selected())
        if b is None:
            return
        msg = messages.verified(b.name, b.verify())
        self.info.setText(msg)
        self.session.say(msg)

    def ask(self, question: str) -> bool:
        """Yes or no, as a question a screen reader reads (replaced in tests)."""
        b = QMessageBox.StandardButton
        answer = QMessageBox.question(self, "Remove model", plain_box(question), b.Yes | b.No, b.No)  # No by default
        return answer == b.Yes

    def remove_selected(self) -> bool:
        """The CLI's service (``capdesk models remove``): shipped models are refused, saying why; a model
        in use falls back to Automatic; the alt text it wrote stays."""
        from capdesk.model.install import removable
        from capdesk.session.model_removal import remove_model

        name = self._selected()
        if not name:
            return False
        try:
            removable(name)  # refused, saying why, before any question
        except BundleError as exc:
            self.info.setText(f"Not removed: {exc}")
            self.session.say(self.info.text())
            return False
        if not self.ask(f"Remove model {name!r}? Alt text it already wrote is kept."):
            self.session.say("Not removed.")
            return False
        try:
            done = remove_model(name, self.window_.settings)
        except BundleError as exc:
            self.info.setText(f"Not removed: {exc}")
            self.session.say(self.info.text())
            return False
        text = f"Removed model {name!r}; the alt text it wrote next to your pictures is kept"
        if done.fell_back:
            text += "; CapDesk now chooses the model for each picture (Automatic)"
        self.session.apply_settings()  # the describer drops the removed model
        self.refresh()
        self.info.setText(text)
        self.session.say(text)
        return True

    def import_bundle(self, src: str) -> str | None:
        """Check a bundle folder or zip and install it in the user's model folder (the CLI's service)."""
        if not src:
            return None
        from capdesk.session.model_import import import_model

        try:
            done = import_model(src)
        except BundleError as exc:
            self.info.setText(f"Import failed: {exc}")
            self.session.say(self.info.text())
            return None
        self.refresh()
        left_out = f"; {len(done.skipped)} files in it were left out, as the model does not list them" \
            if done.skipped else ""
        self.info.setText(f"Imported model {done.name!r}; it is now in the list{left_out}")
        self.session.say(self.info.text())
        return done.name
