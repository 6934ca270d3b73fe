"""While the person reads the picture list, pictures arriving do not move them: a second clipboard picture
is listed, not selected (the list's selection moved and the screen reader read another entry). Offscreen
Qt, the real clipboard; the captioning itself is left out (its own tests run the model)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
from conftest import SAMPLES  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage  # noqa: E402


def test_a_clipboard_picture_does_not_move_the_list_the_person_is_in(qtbot, open_window, monkeypatch):
    window = open_window(focus=True)
    described = []
    monkeypatch.setattr(window.session, "_describe", lambda p: described.append(p.key))
    QGuiApplication.clipboard().clear()  # a picture left there by another test would be taken at once
    window.act_clipboard.trigger()
    QGuiApplication.clipboard().setImage(QImage(str(SAMPLES / "chelsea.png")))
    qtbot.waitUntil(lambda: window.list.count() == 1, timeout=5000)
    first = window.list.currentItem()
    assert first is not None  # the first one is shown: nothing else was
    window.list.setFocus()
    qtbot.waitUntil(window.list.hasFocus, timeout=5000)
    QGuiApplication.clipboard().setImage(QImage(str(SAMPLES / "coffee.png")))
    qtbot.waitUntil(lambda: window.list.count() == 2, timeout=5000)
    assert window.list.currentItem() is first and window.session.current.key == first.data(256)
    assert len(described) == 2  # the new one is still captioned (and said when it is)


def test_a_revisit_said_before_the_window_is_active_is_left_to_the_list_entry(qtbot, open_window, monkeypatch):
    """Started again on a picture with a person's words, the window said them as a notification before it was
    active, and Orca then read the list entry with the same words: heard twice. The list, where the focus
    goes as the window becomes active, reads them."""
    from capdesk.session.core import Kind, Message

    window = open_window()
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)  # not yet active, as at a start
    monkeypatch.setattr(window.list, "hasFocus", lambda: False)
    before = list(window.announcer.said)
    window._on_message(Message("Our cat on the rug.", Kind.DESCRIPTION, True, revisit=True, key="k"))
    assert window.announcer.said == before
    assert window.statusBar().currentMessage() == "Our cat on the rug."  # still shown, for flat review
    window._on_message(Message("Settings file unreadable", Kind.STATUS, True))  # not the entry's: said
    assert window.announcer.said == [*before, "Settings file unreadable"]
