"""The restart journey in the real window (offscreen Qt): a person's saved alt text is what the Alt text box
holds and what is said after a restart; F5 asks before captioning over it (No by default); Ctrl+S with
nothing edited writes nothing."""

from __future__ import annotations

import shutil

from conftest import SAMPLES
from PySide6.QtWidgets import QMessageBox

TIMEOUT = 120_000
WORDS = "Our cat Chelsea, on the hall rug."


def _words_saved_in_a_first_window(qtbot, open_window, d) -> None:
    """chelsea.png copied into ``d``, described, WORDS saved over its caption by a person, the window closed."""
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    first = open_window()
    first.open_path(d / "chelsea.png")
    qtbot.waitUntil(lambda: first.session.current.described is not None, timeout=TIMEOUT)
    first.pane.alt.setPlainText(WORDS)
    first.save_current()
    qtbot.waitUntil(lambda: first.session._busy == 0, timeout=TIMEOUT)
    first.close()


def test_a_persons_words_survive_a_restart_f5_and_ctrl_s(qtbot, open_window, tmp_path, monkeypatch):
    d = tmp_path / "photos"
    d.mkdir()
    shutil.copy(SAMPLES / "astronaut.png", d / "astronaut.png")
    _words_saved_in_a_first_window(qtbot, open_window, d)
    saved = (d / "chelsea.txt").read_bytes(), (d / "chelsea.png.xmp").read_bytes()

    w = open_window()  # the restart
    w.open_path(d / "chelsea.png")
    qtbot.waitUntil(lambda: w.session._busy == 0, timeout=TIMEOUT)
    assert w.list.currentItem().text() == "chelsea.png, alt text written or edited by a person"
    assert w.pane.alt.toPlainText() == WORDS and w.session.current.described is None

    asked = []

    def answer(parent, title, text, buttons, default):
        asked.append((title, text, default))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer)
    w.caption_current()  # F5
    assert asked and "written by a person" in asked[0][1] and asked[0][2] == QMessageBox.StandardButton.No
    assert w.session.current.described is None and w.pane.alt.toPlainText() == WORDS

    w.save_current()  # Ctrl+S with nothing edited
    assert w.statusBar().currentMessage() == "Nothing to save: the alt text is as it was saved"
    assert ((d / "chelsea.txt").read_bytes(), (d / "chelsea.png.xmp").read_bytes()) == saved


def _in_the_alt_box_of_chelsea(qtbot, open_window, tmp_path):
    """A focused window on a folder of chelsea.png, described, with the focus in the Alt text box."""
    d = tmp_path / "photos"
    d.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    w = open_window(focus=True)
    w.open_path(d / "chelsea.png")
    qtbot.waitUntil(lambda: w.session.current.described is not None, timeout=TIMEOUT)
    w.pane.alt.setFocus()
    qtbot.waitUntil(lambda: w.pane.alt.hasFocus(), timeout=5000)
    return w


def test_the_list_entry_says_an_unsaved_draft_as_soon_as_the_box_is_left(qtbot, open_window, tmp_path):
    """Typing in the Alt text box, then Alt+I (or Tab) to the list: the entry says "edited, not saved" and
    holds the words typed, not the old status and text."""
    w = _in_the_alt_box_of_chelsea(qtbot, open_window, tmp_path)
    w.pane.alt.setPlainText("A tabby on the rug, looking up.")
    w.list.setFocus()
    qtbot.waitUntil(lambda: w.list.hasFocus(), timeout=5000)
    item = w.list.currentItem()
    assert item.text().startswith("chelsea.png, edited, not saved")
    from PySide6.QtCore import Qt

    assert item.data(Qt.ItemDataRole.AccessibleDescriptionRole) == "A tabby on the rug, looking up."


def test_a_selection_in_the_alt_text_box_ends_as_the_box_is_left(qtbot, open_window, tmp_path):
    """Text selected in the Alt text box (Ctrl+A to copy it elsewhere), then Alt+I to the list: the selection
    ends as the box is left, so that Orca's "Text unselected." is not said at the next picture, between its
    name and its description (the box's text is replaced there)."""
    w = _in_the_alt_box_of_chelsea(qtbot, open_window, tmp_path)
    w.pane.alt.selectAll()
    assert w.pane.alt.textCursor().hasSelection()
    w.list.setFocus()
    qtbot.waitUntil(lambda: w.list.hasFocus(), timeout=5000)
    assert not w.pane.alt.textCursor().hasSelection()
    assert w.pane.alt.toPlainText() == w.session.current.alt_text  # the words stay as they were


def test_models_offers_remove_only_for_a_model_the_person_installed(qtbot, open_window, default_bundle, tmp_path):
    from capdesk.gui.dialogs.models import ModelsDialog
    from capdesk.model.install import install

    w = open_window()
    dlg = ModelsDialog(w)
    qtbot.addWidget(dlg)
    assert dlg.list.count() >= 2
    for i in range(dlg.list.count()):
        dlg.list.setCurrentRow(i)
        assert not dlg.b_remove.isEnabled()  # shipped: nothing to remove
    import json
    import shutil as sh

    mine = tmp_path / "mine"  # the person's own model: the shipped one under another name
    sh.copytree(default_bundle, mine)
    manifest = json.loads((mine / "manifest.json").read_text(encoding="utf-8"))
    manifest["name"] = "mine"
    (mine / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    install(mine)
    dlg.refresh()
    user = [i for i in range(dlg.list.count()) if "(user)" in dlg.list.item(i).text()]
    assert user
    dlg.list.setCurrentRow(user[0])
    assert dlg.b_remove.isEnabled()


def test_after_f5_yes_quitting_never_calls_the_new_caption_theirs_nor_saves_it_by_default(
        qtbot, open_window, tmp_path, monkeypatch):
    d = tmp_path / "photos"
    d.mkdir()
    _words_saved_in_a_first_window(qtbot, open_window, d)
    saved = (d / "chelsea.txt").read_bytes()

    w = open_window()
    w.open_path(d / "chelsea.png")
    qtbot.waitUntil(lambda: w.session._busy == 0, timeout=TIMEOUT)
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    w.caption_current()  # F5 -> Yes
    qtbot.waitUntil(lambda: w.session.current.described is not None and w.session._busy == 0, timeout=TIMEOUT)
    new_caption = w.session.current.described.description
    assert new_caption and w.pane.alt.toPlainText() == new_caption  # offered in the box, not saved

    asked = []

    def enter(title, question, default=None):  # the person presses Enter: the default button
        asked.append((question, default))
        return default or QMessageBox.StandardButton.Save

    w.ask_unsaved = enter
    w.close()  # Ctrl+Q
    question, default = asked[0]
    assert "your alt text" not in question.lower() and "new caption" in question, question
    assert default == QMessageBox.StandardButton.Discard
    assert (d / "chelsea.txt").read_bytes() == saved  # the person's words are still theirs
