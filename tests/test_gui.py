"""The desktop window, driven for real (Qt offscreen) over the real model and real files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from conftest import SAMPLES  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QWidget,
)

from capdesk.settings import Settings  # noqa: E402

TIMEOUT = 120_000


@pytest.fixture
def settings_file(tmp_path, monkeypatch):
    p = tmp_path / "config" / "settings.json"
    monkeypatch.setenv("CAPDESK_SETTINGS", str(p))
    return p


@pytest.fixture
def window(qtbot, settings_file):
    from capdesk.gui.main_window import MainWindow

    s = Settings(speech="off", ocr="never")
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.close()


@pytest.fixture
def photos(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    for n in ("chelsea.png", "coffee.png", "rocket.jpg"):
        shutil.copy(SAMPLES / n, d / n)
    (d / "broken.jpg").write_bytes(b"\xff\xd8\xff not a real jpeg")
    return d


def _entry(window, name):
    return next(e for k, e in window.entries.items() if Path(k).name == name)


def test_open_caption_edit_save(qtbot, window, photos):
    window.open_path(photos)
    assert window.current.path.name == "broken.jpg"  # sorted first; it shows why it cannot be shown
    qtbot.waitUntil(lambda: window.current.status == "error", timeout=TIMEOUT)
    assert "broken.jpg" in window.list.currentItem().text() and "error" in window.list.currentItem().text()
    window.list.setCurrentRow([Path(window.list.item(i).data(256)).name for i in range(window.list.count())]
                              .index("chelsea.png"))
    qtbot.waitUntil(lambda: window.current.described is not None and window.alt.toPlainText() != "",
                    timeout=TIMEOUT)
    assert "model everyday" in window.info.text() and "confidence" in window.info.text()
    window.alt.setPlainText("Chelsea the tabby cat, looking up.")
    window.save_current()
    assert (photos / "chelsea.txt").read_text(encoding="utf-8") == "Chelsea the tabby cat, looking up.\n"
    assert "edited" in window.list.currentItem().text()


def test_bad_image_shows_its_error_and_others_go_on(qtbot, window, photos):
    window.open_path(photos / "rocket.jpg")  # opens the folder, rocket.jpg selected
    qtbot.waitUntil(lambda: any(window.list.item(i).text().startswith("broken.jpg — error")
                                for i in range(window.list.count())), timeout=TIMEOUT)
    names = [window.list.item(i).text() for i in range(window.list.count())]
    assert "not an image" in names[0] or "cannot decode" in names[0]
    row = [n.split(" — ")[0] for n in names].index("rocket.jpg")
    assert window.list.currentRow() == row
    window.list.setCurrentRow(row)
    qtbot.waitUntil(lambda: window.current.described is not None, timeout=TIMEOUT)
    assert window.current.described.ok


def test_word_selection_draws_attention(qtbot, window, photos):
    window.open_path(photos / "coffee.png")
    qtbot.waitUntil(lambda: window.words.count() > 0, timeout=TIMEOUT)
    before = window.view.pixmap().toImage()
    window.words.setCurrentRow(1)
    assert window.view.property("attention_word") == 1
    after = window.view.pixmap().toImage()
    assert before != after  # the map is drawn over the picture
    window.words.setCurrentRow(2)
    assert window.view.pixmap().toImage() != after  # and it moves with the words
    strip = window.strip.pixmap()  # the paper-style strip: every word with its map
    assert not strip.isNull() and strip.width() > strip.height() * window.words.count() // 2


def test_clipboard_image_is_captioned_and_offered_back(qtbot, window):
    window.act_clipboard.setChecked(True)
    window._toggle_clipboard(True)
    QGuiApplication.clipboard().setImage(QImage(str(SAMPLES / "chelsea.png")))
    qtbot.waitUntil(lambda: any(k.startswith("clipboard image") and e.described is not None
                                for k, e in window.entries.items()), timeout=TIMEOUT)
    e = next(e for k, e in window.entries.items() if k.startswith("clipboard image"))
    assert e.described.ok and window.alt.toPlainText() == e.described.description
    window.copy_current()
    assert QGuiApplication.clipboard().text() == e.described.description
    assert sum(k.startswith("clipboard image") for k in window.entries) == 1  # copying text is not an image


def test_watched_folder(qtbot, window, tmp_path, settings_file):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    window.add_watch_folder(inbox)
    assert json.loads(settings_file.read_text())["watch_folders"] == [str(inbox)]
    for n in ("chelsea.png", "rocket.jpg"):
        shutil.copy(SAMPLES / n, inbox / n)
    qtbot.waitUntil(lambda: (inbox / "chelsea.txt").exists() and (inbox / "rocket.txt").exists(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: all(k in window.entries and window.entries[k].status != "none"
                                for k in (str(inbox / "chelsea.png"), str(inbox / "rocket.jpg"))), timeout=TIMEOUT)
    window.remove_watch_folders([str(inbox)])
    assert window.watcher is None and Settings.load()[0].watch_folders == []


def test_batch_dialog_runs_and_cancels(qtbot, window, tmp_path):
    from capdesk.gui.dialogs import BatchDialog

    d = tmp_path / "many"
    d.mkdir()
    for i in range(24):
        shutil.copy(SAMPLES / "rocket.jpg", d / f"r{i:02d}.jpg")
    dlg = BatchDialog(window, str(d))
    qtbot.addWidget(dlg)
    dlg.xmp.setChecked(False)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.bar.value() >= 1, timeout=TIMEOUT)
    dlg.cancel()
    qtbot.waitUntil(lambda: dlg.result is not None, timeout=TIMEOUT)
    assert dlg.result.interrupted and len(dlg.result.rows) < 24
    assert Path(dlg.report_path).exists() and dlg.open_btn.isEnabled()
    dlg.start()  # run again to the end: resumes where it stopped
    qtbot.waitUntil(lambda: dlg.start_btn.isEnabled() and dlg.result is not None and not dlg.result.interrupted,
                    timeout=TIMEOUT)
    assert len(list(d.glob("*.txt"))) == 24


def test_every_interactive_widget_has_an_accessible_name(qtbot, window):
    from capdesk.gui.dialogs import BatchDialog, ModelsDialog, SettingsDialog

    interactive = (QAbstractButton, QLineEdit, QPlainTextEdit, QListWidget, QComboBox, QAbstractSpinBox)
    for top in (window, BatchDialog(window), ModelsDialog(window), SettingsDialog(window, window.settings)):
        qtbot.addWidget(top)
        missing = [f"{type(w).__name__} {w.objectName()!r} {getattr(w, 'text', lambda: '')()!r}"
                   for w in top.findChildren(QWidget)
                   if isinstance(w, interactive) and w.isVisibleTo(top) and not w.accessibleName().strip()
                   and not isinstance(w.parent(), interactive)]  # a spin box's own editor is part of it
        assert not missing, f"{type(top).__name__}: {missing}"
    for a in window.menuBar().actions():
        for sub in a.menu().actions():
            assert sub.isSeparator() or sub.text().replace("&", "").strip()


def test_announce_when_a_screen_reader_runs_else_speak(qtbot, window, monkeypatch):
    import capdesk.gui.main_window as mw

    said, announced = [], []
    monkeypatch.setattr(mw, "announce", lambda w, t: announced.append(t) or True)
    monkeypatch.setattr(window, "_speak", lambda t: said.append(t))
    window.settings.speech = "auto"
    monkeypatch.setattr(mw, "screen_reader_active", lambda: True)  # a screen reader cannot run here
    window.deliver("A cat.")
    monkeypatch.setattr(mw, "screen_reader_active", lambda: False)
    window.deliver("A dog.")
    assert announced == ["A cat."] and said == ["A dog."]


def test_corrupt_settings_are_reported_and_replaced(settings_file):
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text("{ this is not json", encoding="utf-8")
    s, problem = Settings.load()
    assert s == Settings() and "could not be read" in problem
    assert (settings_file.parent / "settings.json.corrupt").read_text() == "{ this is not json"
    settings_file.write_text(json.dumps({"beam": "five"}))
    s, problem = Settings.load()
    assert s.beam == 3 and "wrong type" in problem
    s.beam = 5
    s.save()
    assert Settings.load()[0].beam == 5


def test_model_import_and_verify(qtbot, window, tmp_path):
    from conftest import ROOT

    from capdesk.bundle import user_models_dir
    from capdesk.gui.dialogs import ModelsDialog

    src = tmp_path / "mine"
    shutil.copytree(ROOT / "models" / "everyday", src)
    m = json.loads((src / "manifest.json").read_text())
    m["name"] = "mine"
    (src / "manifest.json").write_text(json.dumps(m))
    dlg = ModelsDialog(window)
    qtbot.addWidget(dlg)
    assert dlg.import_bundle(str(src)) == "mine" and (user_models_dir() / "mine" / "encoder.onnx").exists()
    assert "mine" in dlg.bundles
    (src / "vocab.json").write_text("[]")
    m["name"] = "broken"
    (src / "manifest.json").write_text(json.dumps(m))
    assert dlg.import_bundle(str(src)) is None and "Import failed" in dlg.info.text()


def test_teach_dialog_cancel_resume_and_switch(qtbot, window, tmp_path):
    pytest.importorskip("torch")
    from PIL import Image

    from capdesk.gui.dialogs import TeachDialog

    d = tmp_path / "mine"
    d.mkdir()
    for name, word in (("chelsea.png", "cat"), ("coffee.png", "cup"), ("rocket.jpg", "rocket")):
        base = Image.open(SAMPLES / name).convert("RGB")
        for i in range(8):
            base.rotate(i * 9).save(d / f"{word}{i}.jpg", quality=85)
            (d / f"{word}{i}.txt").write_text(f"my {word} number {i}\n")
    dlg = TeachDialog(window)
    qtbot.addWidget(dlg)
    dlg.folder.setText(str(d))
    dlg.name.setText("my-things")
    dlg.epochs.setValue(2)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.bar.maximum() > 0 and dlg.bar.value() >= 1, timeout=TIMEOUT)
    dlg.cancel()
    qtbot.waitUntil(lambda: bool(dlg.error) or dlg.manifest is not None, timeout=TIMEOUT)
    assert "cancelled" in dlg.error
    dlg.start()  # resumes the same run
    qtbot.waitUntil(lambda: dlg.manifest is not None or bool(dlg.error and dlg.start_btn.isEnabled()),
                    timeout=TIMEOUT)
    assert dlg.manifest is not None, dlg.error
    assert window.settings.model == "my-things" and "now uses my-things" in dlg.status.text()
