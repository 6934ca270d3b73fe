"""Messages reach the screen reader in the order they were said: a batch's start, then its quarters in
turn. Messages waiting for the screen reader to finish reading a new focus were each on a timer of their
own, rounded to the millisecond, and one said later could go first ("half done" before "a quarter done")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
from PySide6.QtWidgets import QApplication  # noqa: E402


def test_messages_waiting_for_the_focus_to_settle_keep_their_order(qtbot, open_window, monkeypatch):
    from capdesk.gui import announcer as announcing

    window = open_window(focus=True)
    ann = window.announcer
    button = window.pane.btn_speak
    button.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is button, timeout=5000)
    heard: list[str] = []
    monkeypatch.setattr(ann, "_on_widget", lambda w, text: heard.append(text))
    monkeypatch.setattr(ann, "_notify", lambda text: heard.append(text))
    monkeypatch.setattr(announcing, "FOCUS_SETTLE_S", 0.2)
    clock = [1000.0]
    monkeypatch.setattr(announcing, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    ann._focus_moved_at = ann._window_focus_at = 1000.0  # the focus came to the button just now
    said = ["Batch export started in photos", "A quarter done: 4 of 16", "Half done: 8 of 16"]
    for n, text in enumerate(said):  # each a little later: the last waits a millisecond less
        clock[0] = 1000.0 + 0.0007 * n
        ann.say(text)
    clock[0] = 1001.0  # the focus has long settled when the timers fire
    qtbot.waitUntil(lambda: len(heard) == len(said), timeout=3000)
    assert heard == said
