"""Fill alt text's review list, driven for real (Qt offscreen, the real model, a page on disk): a dry pass
lists each proposed text; a person edits one, skips the other with keys, and Write accepted writes exactly
that, by the road of ``--review-in``, every step said to the screen reader."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6")
from conftest import SAMPLES  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QAccessible  # noqa: E402
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QWidget  # noqa: E402

TIMEOUT = 120_000
# Two pictures: the cat is described plainly ("A cat.": the detector and the tags agree), the astronaut as a guess
# ("Probably a person."), so under the default Write choice one starts accepted, one to review.
PAGE = b'<!doctype html>\r\n<p>Hi</p>\r\n<p><img src="img/chelsea.png"> <img src="img/astronaut.png" class="x"></p>\r\n'


@pytest.fixture
def window(open_window):
    w = open_window()
    w.session.screen_reader = lambda: True  # what a screen reader user is told goes to the announcer
    return w


@pytest.fixture
def site(tmp_path):
    d = tmp_path / "site"
    (d / "img").mkdir(parents=True)
    for name in ("chelsea.png", "astronaut.png"):
        shutil.copy(SAMPLES / name, d / "img" / name)
    (d / "index.html").write_bytes(PAGE)
    return d


def reviewed(qtbot, window, site):
    """The dialog after its dry pass, with the review list open."""
    from capdesk.gui.dialogs import AltFillDialog

    dlg = AltFillDialog(window, str(site))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.report_fmt.setCurrentIndex(2)  # no report
    dlg.start()
    qtbot.waitUntil(lambda: dlg.review is not None and dlg.review.isVisible(), timeout=TIMEOUT)
    return dlg


def press(qtbot, widget, key) -> None:
    qtbot.keyClick(widget, key)


def test_the_default_is_facts_with_review(qtbot, window, site):
    from capdesk.gui.dialogs import AltFillDialog

    dlg = AltFillDialog(window, str(site))
    qtbot.addWidget(dlg)
    assert dlg.write == "facts" and dlg.write_choice.currentText() == "Only descriptions said as fact"
    assert dlg.review_first.isChecked() and not dlg.dry_run.isChecked()
    assert [dlg.write_choice.itemData(i) for i in range(dlg.write_choice.count())] == ["facts", "probably", "all"]


def test_review_edit_one_skip_the_other_then_write(qtbot, window, site):
    dlg = reviewed(qtbot, window, site)
    page = site / "index.html"
    assert page.read_bytes() == PAGE  # the dry pass wrote nothing
    rv = dlg.review
    # Both pictures are listed with the text proposed; the Write choice (facts) decides which starts accepted.
    assert [(c.picture, c.state, c.text) for c in rv.choices] == [
        ("chelsea.png", "accepted", "A cat."),
        ("astronaut.png", "to review", "Probably a person.")]
    assert "Probably" in rv.choices[1].why and "guess" in rv.choices[1].why
    assert window.announcer.said[-1].startswith("Alt text to review: 2 pictures, 1 accepted as proposed.")
    # Every control named, no Alt+letter twice.
    from capdesk.gui.widgets import mnemonics

    assert not [w for w in rv.findChildren(QWidget) if isinstance(w, (QAbstractButton, QLineEdit))
                and w.isVisibleTo(rv) and not w.accessibleName().strip()]
    assert not {k: v for k, v in mnemonics(rv).items() if len(v) > 1}

    # Each row's accessible name says the picture, where it is and its state.
    acc = QAccessible.queryAccessibleInterface(rv.list)
    names = [rv.list.item(i).data(Qt.ItemDataRole.AccessibleTextRole) for i in range(rv.list.count())]
    assert names == ["chelsea.png in index.html, line 3: accepted", "astronaut.png in index.html, line 3: to review"]
    assert names[0] in [acc.child(i).text(QAccessible.Text.Name) for i in range(acc.childCount())]

    # The first: Enter goes to its text, which is edited; Enter there accepts it.
    rv.list.setFocus()
    assert rv.list.currentRow() == 0 and rv.field.accessibleName() == "Alt text for chelsea.png"
    # What the page says beside it is shown, and said with the text to edit.
    assert rv.around.text().startswith("Text around it: Hi") and "[picture]" in rv.around.text()
    assert rv.field.accessibleDescription() == rv.around.text()
    press(qtbot, rv.list, Qt.Key.Key_Return)
    assert rv.focusWidget() is rv.field
    rv.field.setText("")
    qtbot.keyClicks(rv.field, "A tabby cat looking up.")
    assert rv.list.item(0).data(Qt.ItemDataRole.AccessibleTextRole) == \
        "chelsea.png in index.html, line 3: accepted, edited"
    press(qtbot, rv.field, Qt.Key.Key_Return)
    assert window.announcer.said[-1] == ("Accepted, edited: chelsea.png, A tabby cat looking up. "
                                         "1 accepted, 0 skipped, 1 to review")
    assert not any(".." in said for said in window.announcer.said)  # "A cat.. Why" was heard under Orca
    # The second: Down, then S skips it.
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_Down)
    assert rv.list.currentRow() == 1 and rv.field.text() == "Probably a person."
    assert rv.why.text() == rv.choices[1].why
    press(qtbot, rv.list, Qt.Key.Key_S)
    assert rv.list.item(1).data(Qt.ItemDataRole.AccessibleTextRole) == "astronaut.png in index.html, line 3: skipped"
    assert window.announcer.said[-1].startswith("Skipped: astronaut.png") and \
        window.announcer.said[-1].endswith("1 accepted, 1 skipped, 0 to review")

    rv.write_btn.click()
    qtbot.waitUntil(lambda: dlg.review is None and not dlg.job.running, timeout=TIMEOUT)
    # Exactly the edited text for the first, nothing new for the second, every other byte as it was.
    assert page.read_bytes() == PAGE.replace(b'<img src="img/chelsea.png">',
                                             b'<img src="img/chelsea.png" alt="A tabby cat looking up.">')
    assert dlg.status.text().startswith("Alt text finished: 1 web page: 1 alt text written")
    from capdesk.altfill.backups import backups_root

    assert [b.read_bytes() for b in backups_root().rglob("index.html")] == [PAGE]  # the original, kept
    assert window.announcer.said[-1] == dlg.status.text()
    assert dlg.focusWidget() is dlg.close_btn  # no report asked for: the focus back in the dialog, on Close


def test_nothing_accepted_writes_nothing_and_a_changed_page_is_left_and_named(qtbot, window, site):
    dlg = reviewed(qtbot, window, site)
    rv = dlg.review
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_S)  # the cat, accepted by default, skipped
    rv.write_btn.click()
    assert window.announcer.said[-1].startswith("Nothing is accepted") and rv.isVisible()
    press(qtbot, rv.list, Qt.Key.Key_A)  # and accepted again
    page = site / "index.html"
    changed = PAGE.replace(b"Hi", b"Hello")
    page.write_bytes(changed)  # edited by someone else since the dry pass
    rv.write_btn.click()
    qtbot.waitUntil(lambda: dlg.review is None and not dlg.job.running, timeout=TIMEOUT)
    assert page.read_bytes() == changed
    assert "changed since the review: index.html" in dlg.status.text()


def test_escape_closes_the_list_and_writes_nothing(qtbot, window, site):
    from capdesk.gui.dialogs.altfill import REVIEW_CLOSED

    dlg = reviewed(qtbot, window, site)
    rv = dlg.review
    rv.list.setFocus()
    press(qtbot, rv.list, Qt.Key.Key_A)  # a decision made, then the list closed without writing
    press(qtbot, rv.list, Qt.Key.Key_Escape)
    assert dlg.review is None and not rv.isVisible()
    assert (site / "index.html").read_bytes() == PAGE
    assert dlg.status.text().startswith(REVIEW_CLOSED) and window.announcer.said[-1] == dlg.status.text()
    assert dlg.focusWidget() is dlg.start_btn  # to run it again
