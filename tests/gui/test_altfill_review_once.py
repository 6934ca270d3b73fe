"""Leaving Fill alt text's review list, said once (Qt offscreen, the real model, a page on disk).

Under Orca 43 every return from the review list said its outcome three or four times, twice inside a
re-read of the whole Fill dialog (a window of its own closed, and the dialog got the focus back), and the
outcome came last. Now the list sits in the dialog's own window, the focus goes back to one control, and
the outcome is that control's description as the focus arrives: handed to the screen reader once, and the
job's own copy of it, said through the session, is not handed on again."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
import test_altfill_review_gui as base  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from test_altfill_review_gui import PAGE, TIMEOUT, press, reviewed  # noqa: E402

window, site = base.window, base.site  # the same fixtures: a window told a screen reader runs, a page


def _told(window, start: int) -> list[str]:
    return window.announcer.said[start:]


def test_write_accepted_says_the_outcome_once_on_one_control(qtbot, window, site):
    dlg = reviewed(qtbot, window, site)
    rv = dlg.review
    assert rv.window() is dlg  # in the dialog's own window: closing it opens no other window's focus
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_Down)
    press(qtbot, rv.list, Qt.Key.Key_S)  # the astronaut skipped; the coffee stays accepted
    start = len(window.announcer.said)
    rv.write_btn.click()
    qtbot.waitUntil(lambda: dlg.review is None and not dlg.job.running, timeout=TIMEOUT)
    qtbot.wait(50)  # the job's own outcome, said through the session after the dialog's
    outcome = dlg.status.text()
    assert outcome.startswith("Alt text finished: 1 web page: 1 alt text written")
    assert outcome.endswith("; skipped, not written: astronaut.png")  # what was left is said too
    told = _told(window, start)
    assert told == ["Writing 1 accepted alt text", outcome], told  # the outcome once, nothing after it
    focus = QApplication.focusWidget()
    assert focus is dlg.close_btn and focus.accessibleName() == "Close"  # one control, a short name
    assert focus.accessibleDescription() == outcome  # read with it as the focus arrives
    assert dlg.page.isVisible()
    assert (site / "index.html").read_bytes() != PAGE


def test_escape_says_what_was_left_once_back_on_start(qtbot, window, site):
    from capdesk.gui.dialogs.altfill import REVIEW_CLOSED

    dlg = reviewed(qtbot, window, site)
    dlg.report_fmt.setCurrentIndex(0)  # a report: Open report is on, and is still not where the focus goes
    rv = dlg.review
    rv.list.setFocus()
    start = len(window.announcer.said)
    press(qtbot, rv.list, Qt.Key.Key_Escape)
    qtbot.wait(50)
    said = f"{REVIEW_CLOSED}: 2 pictures left without alt text"
    assert _told(window, start) == [said]
    assert QApplication.focusWidget() is dlg.start_btn  # the control that opened the list
    assert dlg.start_btn.accessibleDescription() == said and dlg.status.text() == said
    assert (site / "index.html").read_bytes() == PAGE
    # Once the focus moves on, Start's own description is back and the message is not said again.
    dlg.close_btn.setFocus()
    qtbot.waitUntil(lambda: dlg.start_btn.accessibleDescription() != said)
    assert _told(window, start) == [said]


def test_a_pdf_picture_is_named_by_its_place_once_and_the_text_around_it_by_one_label(qtbot):
    from capdesk.altfill.rows import FillStatus, ImageRow
    from capdesk.gui.dialogs.altfill_review import ReviewDialog, row_name
    from capdesk.session.altfill_review import Choice

    pdf = ImageRow("/docs/report.pdf", 3, 2, "page 3, Im9", FillStatus.FILLED, syntax="pdf",
                   location="page 3, figure 2", context="Sales rose. [picture] Costs fell.", proposed="A bar chart.")
    c = Choice(pdf, "A bar chart.")
    assert row_name(c) == "page 3, picture 2 in report.pdf: to review"  # not "Im9", the page said once
    rv = ReviewDialog(None, None, None, [c], lambda _c: None)
    qtbot.addWidget(rv)
    assert rv.field.accessibleName() == "Alt text for page 3, picture 2"
    assert rv.around.accessibleName() == "Text around it: Sales rose. [picture] Costs fell."
