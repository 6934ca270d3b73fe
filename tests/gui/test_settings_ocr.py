"""Settings offers --ocr's choice (auto / always / never) in plain words, named for a screen reader, and
what is chosen is what the window's describer is given (offscreen Qt, a real settings file)."""

from __future__ import annotations

import json


def test_settings_dialog_shows_and_changes_text_reading(qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QComboBox, QLabel

    from capdesk.gui.dialogs import SettingsDialog
    from capdesk.gui.dialogs.settings_dialog import OCR_NAME
    from capdesk.session.settings import Settings

    monkeypatch.setenv("PATH", "/nonexistent")  # no gsettings: nothing of the user's key is read or written
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"ocr": "never", "rate": 190}))
    settings, problem = Settings.load(path)
    assert problem is None
    dlg = SettingsDialog(None, settings, [])
    qtbot.addWidget(dlg)
    box = dlg.ocr
    assert isinstance(box, QComboBox) and box.accessibleName() == OCR_NAME == "Read text in pictures"
    label = next(w for w in dlg.findChildren(QLabel) if w.buddy() is box)
    assert label.text() == "Read text in &pictures:"
    assert [box.itemData(i) for i in range(box.count())] == ["auto", "always", "never"]
    assert box.currentText() == "Never"

    box.setCurrentIndex(box.findData("auto"))
    dlg.accept()
    settings.save(path)  # as the main window does once the dialog is accepted
    assert json.loads(path.read_text())["ocr"] == "auto" and settings.rate == 190
    assert dlg.changes == ["Read text in pictures: Where the picture has text (a quick look at every picture)"]
