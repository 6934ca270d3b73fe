"""Small dialogs a keyboard user meets: the stop-watching list says which folders are chosen, and the Fill
alt text dialog keeps the folder it was last given. Offscreen Qt."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QListWidget  # noqa: E402


def test_the_stop_watching_list_says_which_folders_are_chosen(qtbot, open_window):
    from capdesk.gui.dialogs import choose_from_list

    window = open_window()
    seen = {}

    def in_dialog() -> None:
        lst = QApplication.activeModalWidget().findChild(QListWidget)
        states = lambda: [lst.item(i).checkState() for i in range(lst.count())]  # noqa: E731
        seen["opened"] = states()
        qtbot.keyClick(lst, Qt.Key.Key_Down)
        qtbot.keyClick(lst, Qt.Key.Key_Space)  # the second folder is chosen too, and says so
        seen["after"] = states()
        qtbot.keyClick(lst, Qt.Key.Key_Return)

    QTimer.singleShot(0, in_dialog)
    chosen = choose_from_list(window, "Remove watched folders", "Stop &watching:", ["/a", "/b", "/c"])
    checked, unchecked = Qt.CheckState.Checked, Qt.CheckState.Unchecked
    assert seen["opened"] == [checked, unchecked, unchecked]  # Enter at once stops the first only
    assert seen["after"] == [checked, checked, unchecked]
    assert chosen == ["/a", "/b"]


def test_fill_alt_text_keeps_its_folder(qtbot, open_window, tmp_path, monkeypatch):
    from capdesk.gui import main_window
    from capdesk.gui.dialogs import AltFillDialog

    window = open_window(last_folder=str(tmp_path / "photos"))
    site = tmp_path / "site"
    site.mkdir()
    folders = []

    def run(dlg) -> int:
        folders.append(dlg.folder.text())
        if isinstance(dlg, AltFillDialog):
            dlg.folder.setText(str(site))  # the person gives the site's folder, then closes the dialog
        return 0

    monkeypatch.setattr(main_window.MainWindow, "_run", lambda self, dlg: run(dlg))
    window.open_altfill_dialog()
    window.open_altfill_dialog()
    assert folders == [str(tmp_path / "photos"), str(site)]
