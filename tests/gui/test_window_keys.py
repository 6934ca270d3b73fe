"""The window's keyboard and reading aids, offscreen: where the focus goes after a menu or a dialog, the
status line flat review reads, and what the Models dialog says of Automatic."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtGui import QTextDocumentFragment  # noqa: E402
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QDialog, QLabel, QMenuBar  # noqa: E402


@pytest.fixture
def window(open_window):
    return open_window(focus=True)


def test_escape_from_the_menu_bar_goes_back_to_the_control_left(qtbot, window):
    window.pane.alt.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.pane.alt, timeout=5000)
    bar = window.menuBar()
    bar.setFocus()  # as F10, then Escape, left it: the menu bar holding Qt's focus
    qtbot.waitUntil(lambda: isinstance(QApplication.focusWidget(), QMenuBar), timeout=5000)
    window.focus_keeper._after_menu()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.pane.alt, timeout=5000)


def test_a_dialog_gives_the_focus_back_to_the_control_left_never_the_menu_bar(qtbot, window):
    window.pane.alt.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.pane.alt, timeout=5000)
    window.menuBar().setFocus()  # the menu bar borrows the focus: it is not where the person was
    qtbot.waitUntil(lambda: isinstance(QApplication.focusWidget(), QMenuBar), timeout=5000)
    dlg = QDialog(window)
    QTimer.singleShot(50, dlg.accept)
    window._run(dlg)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.pane.alt, timeout=5000)
    assert window.focus_keeper.settled()


def test_the_status_line_is_a_label_flat_review_can_read(window):
    window.session.say("Alt text saved to a.txt")
    labels = [w for w in window.statusBar().findChildren(QLabel) if w.isVisible()]
    assert any(w.text() == "Alt text saved to a.txt" for w in labels), [w.text() for w in labels]
    assert window.statusBar().currentMessage() == "Alt text saved to a.txt"


def test_models_dialog_says_what_automatic_uses_and_reads_no_install_path(qtbot, window):
    from capdesk.gui.dialogs.models import ModelsDialog

    dlg = ModelsDialog(window)
    qtbot.addWidget(dlg)
    said = dlg.b_auto.accessibleDescription()
    assert said.startswith("Automatic uses ") and "everyday" in said, said
    assert "aerial for aerial" in said, said  # both shipped models are routed to
    for i in range(dlg.list.count()):
        dlg.list.setCurrentRow(i)
        name = dlg.list.item(i).data(256)
        assert str(dlg.bundles[name].path) not in dlg.info.text(), dlg.info.text()
        tip = QTextDocumentFragment.fromHtml(dlg.list.item(i).toolTip()).toPlainText()  # shown as plain text
        assert tip.startswith(str(dlg.bundles[name].path))  # for those who hover
        # Read with the entry instead of the tooltip: where it comes from, in words
        assert dlg.list.item(i).data(Qt.ItemDataRole.AccessibleDescriptionRole) in (
            "comes with CapDesk", "installed or taught by you", "from the models folder CAPDESK_MODELS names")
        assert "BLEU" not in dlg.info.text() and "Domain:" not in dlg.info.text(), dlg.info.text()


def test_help_says_what_the_alt_text_says(qtbot, window, monkeypatch):
    from capdesk.gui.dialogs import common

    shown = []
    monkeypatch.setattr(common, "show_list", lambda parent, title, label, lines: shown.append((title, lines)))
    from capdesk.gui.dialogs import help as help_dialog

    monkeypatch.setattr(help_dialog, "show_list", common.show_list)
    item = next(a for m in window.menuBar().actions() if m.text() == "&Help" for a in m.menu().actions()
                if a.text().startswith("&What the alt text says"))
    item.trigger()
    title, lines = shown[0]
    assert title == "What the alt text says"
    assert any("Probably" in t for t in lines) and any("empty" in t for t in lines)
    assert any("0.80" in t for t in lines)  # the threshold the describer uses, not a copy of it


def test_no_dialog_has_a_field_orca_reads_short(qtbot, window):
    """Qt's QLineEdit gives Orca 43 zero-length text runs, and the field is read one character short
    ("my-pictures" as "my-picture"): every one-line field is a plain-text edit."""
    from PySide6.QtWidgets import QLineEdit

    from capdesk.gui.dialogs import AltFillDialog, BatchDialog, SettingsDialog, TeachDialog

    for dlg in (BatchDialog(window, "/tmp"), AltFillDialog(window, "/tmp"), TeachDialog(window),
                SettingsDialog(window, window.settings)):
        qtbot.addWidget(dlg)
        fields = [w for w in dlg.findChildren(QLineEdit) if not isinstance(w.parent(), (QAbstractSpinBox, QComboBox))]
        assert not fields, (type(dlg).__name__, [f.accessibleName() for f in fields])


def test_an_empty_status_line_has_no_name_to_read(window):
    from capdesk.gui.widgets import StatusLabel

    line = StatusLabel("Alt text status")
    assert line.accessibleName() == ""  # Orca read a bare "Alt text status." into the dialog's introduction
    line.setText("3 of 9")
    assert line.accessibleName() == "Alt text status: 3 of 9"


def test_a_chord_posted_again_by_the_accessibility_bridge_does_not_arm_the_menu_bar(qtbot, window):
    """Under Orca, Qt posts each key again once the screen reader has seen it, and the second Alt
    ShortcutOverride made the menu bar open after Alt+A had run (the focus went to File, not Alt text)."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent

    guard = window._alt_guard
    handle = window.windowHandle()
    alt = Qt.KeyboardModifier.AltModifier
    posted_again = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Alt, alt)  # sent, not spontaneous
    assert not guard.eventFilter(handle, posted_again)  # the key itself goes on to its widget
    override = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_Alt, alt)
    assert guard.eventFilter(window, override)  # ...but the menu bar never sees it as Alt alone
    letter = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_A, alt)
    assert not guard.eventFilter(window, letter)  # other keys' overrides are untouched


def _press(qtbot, key) -> None:
    """A key as the person's keyboard gives it: to the open menu when there is one (it holds the
    keyboard), else to the focused control."""
    qtbot.keyClick(QApplication.activePopupWidget() or QApplication.focusWidget(), key)


def test_f10_then_right_goes_along_the_menu_bar_as_alt_does(qtbot, window):
    """F10 opened File while the focus stayed in the picture list; on Right, Qt's menu bar hands the focus
    back to the window's focused control as it opens the next menu, and Orca read the picture list (then
    nothing for further Rights). The menu bar holds the focus from F10 on, as after Alt."""
    from PySide6.QtCore import Qt

    window.list.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.list, timeout=5000)
    bar = window.menuBar()
    _press(qtbot, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5000)
    assert bar.activeAction().text() == "&File"
    assert QApplication.focusWidget() is bar
    for menu in ("&Caption", "&Watch"):
        _press(qtbot, Qt.Key.Key_Right)
        qtbot.waitUntil(lambda m=menu: bar.activeAction() is not None and bar.activeAction().text() == m,
                        timeout=5000)
        assert QApplication.activePopupWidget() is bar.activeAction().menu(), menu  # the menu is open
        assert QApplication.focusWidget() is bar, (menu, QApplication.focusWidget())  # never the list
    _press(qtbot, Qt.Key.Key_Escape)
    _press(qtbot, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.list, timeout=5000)  # back where it was


def test_a_value_chosen_in_a_combo_list_is_not_said_again(qtbot, window):
    """Orca reads the combo box as its list closes; the window said the value as well, heard twice. A value
    changed by an arrow on the closed combo box is still said (Orca 43 is silent then)."""
    from PySide6.QtCore import Qt

    from capdesk.gui.announcer import speak_combo_changes
    from capdesk.gui.dialogs import BatchDialog

    dlg = BatchDialog(window, "/tmp")
    qtbot.addWidget(dlg)
    speak_combo_changes(window.announcer, dlg)
    dlg.show()
    dlg.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dlg, timeout=5000)
    combo = dlg.report_fmt
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=5000)
    before = len(window.announcer.said)
    qtbot.keyClick(combo, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)  # the list opens
    qtbot.waitUntil(combo.view().isVisible, timeout=5000)
    qtbot.keyClick(combo.view(), Qt.Key.Key_Down)
    qtbot.keyClick(combo.view(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not combo.view().isVisible(), timeout=5000)
    assert combo.currentText() == "CSV" and combo.hasFocus()  # back on the combo box, which Orca reads
    assert window.announcer.said[before:] == []
    dlg.activateWindow()  # offscreen, the closing list leaves no window active as X would
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=5000)
    qtbot.wait(10)  # the person's next key comes later
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # closed: said once
    assert window.announcer.said[before:] == ["JSON"]


def test_job_dialog_bars_are_not_read_out_by_the_screen_reader(qtbot, window):
    """Orca reads a progress bar's changes unless the bar is in a status bar (its default): the dialogs' bars
    said "100 percent." and "0 percent." before the outcome, and quarters among the spoken milestones."""
    from PySide6.QtGui import QAccessible

    from capdesk.gui.dialogs import AltFillDialog, BatchDialog

    for dlg in (BatchDialog(window, "/tmp"), AltFillDialog(window, "/tmp")):
        qtbot.addWidget(dlg)
        roles = []
        node = QAccessible.queryAccessibleInterface(dlg.bar)
        while node is not None and node.isValid() and len(roles) < 10:
            roles.append(node.role())
            node = node.parent()
        assert roles[0] == QAccessible.Role.ProgressBar
        assert QAccessible.Role.StatusBar in roles, (type(dlg).__name__, roles)
        assert dlg.status.isVisibleTo(dlg)  # the status line still says how far it is


def test_alt_f_under_a_screen_reader_leaves_file_open(qtbot, window):
    """Under Orca, Alt+F's shortcut opens File at once, and the Alt press, held for the screen reader, is
    posted again afterwards: it reached the open menu, which closes on Alt, so File opened and shut."""
    from PySide6.QtCore import QCoreApplication, QEvent, Qt
    from PySide6.QtGui import QKeyEvent

    window.list.setFocus()
    qtbot.waitUntil(window.list.hasFocus, timeout=5000)
    qtbot.keyClick(window.list, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5000)
    file_menu = window.menuBar().actions()[0].menu()
    assert QApplication.activePopupWidget() is file_menu
    posted_again = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Alt, Qt.KeyboardModifier.AltModifier)
    QCoreApplication.sendEvent(window.windowHandle(), posted_again)  # sent, not spontaneous
    qtbot.wait(20)
    assert QApplication.activePopupWidget() is file_menu and file_menu.isVisible()
    file_menu.close()
