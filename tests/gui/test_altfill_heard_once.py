"""What Orca 43 reads again of Fill alt text, kept to once (Qt offscreen, the real model, a page on disk).

Orca reads a dialog whole, with every label in it, each time the focus comes into it from a control it can
no longer find (the review list's entry, gone with the list), and each dialog or named panel around a newly
focused control too. Heard under Orca (tests/journeys/test_altfill_review_orca.py): the list's introduction
twice as it opened (with the Fill dialog and with the list as a dialog of its own), an outcome three times
(in the status line read with the dialog, with the control the focus went to, and as news because that
control got its words after it had the focus), "Open the report" as Start was pressed from it, and the Fill
dialog's own introduction (75 words) again before each outcome of the list.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
import test_altfill_review_gui as base  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QAccessible  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from test_altfill_review_gui import TIMEOUT, press, reviewed  # noqa: E402

window, site = base.window, base.site  # a window told a screen reader runs, a page with two pictures

# The role Orca reads as a dialog's labels (AT-SPI label): a Qt label's.
READ_WITH_THE_DIALOG = (QAccessible.Role.StaticText,)


@pytest.fixture
def accessible():
    """Qt as under a screen reader: it builds a widget's accessible object as soon as the widget changes (a
    label's first text), not when first asked for. Off, a role given after that looked right here, and Orca
    still heard a label."""
    was = QAccessible.isActive()
    QAccessible.setActive(True)
    yield
    QAccessible.setActive(was)


def _role(w) -> QAccessible.Role:
    return QAccessible.queryAccessibleInterface(w).role()


def _arrivals(qtbot):
    """Each control the focus arrives at, with its description and whether it was on, as it arrives."""
    seen: list[tuple[object, str]] = []

    def moved(_old, new) -> None:
        if new is not None:
            seen.append((new, new.accessibleDescription()))

    QApplication.instance().focusChanged.connect(moved)
    return seen, moved


def test_the_list_is_no_dialog_of_its_own_and_its_repeated_lines_are_not_read_with_the_window(qtbot, window, site,
                                                                                           accessible):
    dlg = reviewed(qtbot, window, site)
    rv = dlg.review
    # A bare container: Orca reads no second dialog (with the introduction again) around the list.
    assert _role(rv) == QAccessible.Role.Client
    assert _role(dlg) == QAccessible.Role.Dialog  # the Fill dialog, read once with the introduction
    # The lines said with the entry and the field, and the status line, are not read with the dialog.
    for line in (rv.why, rv.around, dlg.status):
        assert _role(line) not in READ_WITH_THE_DIALOG, line.accessibleName()
    assert _role(dlg.status) == QAccessible.Role.StatusBar
    assert rv.why.accessibleName().startswith("Why to review: ")  # flat review still reads what is shown


def test_after_write_accepted_the_control_has_the_outcome_as_the_focus_arrives(qtbot, window, site):
    dlg = reviewed(qtbot, window, site)
    dlg.report_fmt.setCurrentIndex(0)  # a report: the focus goes to Open report
    rv = dlg.review
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_Down)
    press(qtbot, rv.list, Qt.Key.Key_S)
    seen, moved = _arrivals(qtbot)
    try:
        rv.write_btn.click()
        qtbot.waitUntil(lambda: dlg.review is None and not dlg.job.running, timeout=TIMEOUT)
    finally:
        QApplication.instance().focusChanged.disconnect(moved)
    outcome = dlg.status.text()
    assert outcome.startswith("Alt text finished")
    assert QApplication.focusWidget() is dlg.open_btn
    # Every arrival at the last control carried the outcome: none came before its words (read then as news).
    at_last = [d for w, d in seen if w is dlg.open_btn]
    assert at_last and all(d == outcome for d in at_last), at_last


def test_start_from_open_report_moves_the_focus_before_open_report_is_turned_off(qtbot, window, site):
    dlg = reviewed(qtbot, window, site)
    dlg.report_fmt.setCurrentIndex(0)
    rv = dlg.review
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_A)
    rv.write_btn.click()
    qtbot.waitUntil(lambda: dlg.review is None and not dlg.job.running, timeout=TIMEOUT)
    assert QApplication.focusWidget() is dlg.open_btn
    left: list[bool] = []

    def moved(old, _new) -> None:
        if old is dlg.open_btn:
            left.append(old.isEnabled())

    QApplication.instance().focusChanged.connect(moved)
    try:
        dlg.start()  # Alt+S again, from Open report
    finally:
        QApplication.instance().focusChanged.disconnect(moved)
    assert left == [True]  # moved by the dialog, not by Qt from a control turned off under it
    assert QApplication.focusWidget() is dlg.cancel_btn and not dlg.open_btn.isEnabled()
    qtbot.waitUntil(lambda: not dlg.job.running, timeout=TIMEOUT)


def test_the_introduction_is_the_dialogs_description_until_the_list_opens(qtbot, window, site, accessible):
    from PySide6.QtWidgets import QLabel

    from capdesk.gui.dialogs import AltFillDialog

    dlg = AltFillDialog(window, str(site))
    qtbot.addWidget(dlg)
    intro = next(w for w in dlg.findChildren(QLabel) if w.wordWrap() and w.text().startswith("Images with no alt"))
    # Read with the dialog as it opens (its description), never again as one of its labels.
    assert dlg.accessibleDescription() == intro.text()
    assert _role(intro) not in READ_WITH_THE_DIALOG
    dlg.show()
    dlg.report_fmt.setCurrentIndex(2)
    dlg.start()
    qtbot.waitUntil(lambda: dlg.review is not None and dlg.review.isVisible(), timeout=TIMEOUT)
    assert dlg.accessibleDescription() == ""  # leaving the list, Orca reads the dialog again: no 75 words then
    press(qtbot, dlg.review.list, Qt.Key.Key_Escape)
    assert dlg.accessibleDescription() == ""
