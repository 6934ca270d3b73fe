"""Exploring a picture by keyboard in the real window (offscreen Qt): F7 moves through what was found, each
part said once with where it is, how big and its place in the list; past the end it says so and starts again;
Shift+F7 goes back; a new picture starts its own list."""

from __future__ import annotations

import shutil

from conftest import SAMPLES
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

TIMEOUT = 120_000


def test_f7_says_each_thing_found_once_with_where_it_is(qtbot, open_window, tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    shutil.copy(SAMPLES / "coffee.png", d / "coffee.png")
    w = open_window(focus=True)
    w.open_path(d / "coffee.png")
    qtbot.waitUntil(lambda: w.session.current.described is not None and w.session._busy == 0, timeout=TIMEOUT)
    found = w.session.current.described.found()
    assert found, "the coffee photo has things found in it"
    said = []
    w.session.message.connect(said.append)

    def press(key, modifier=Qt.KeyboardModifier.NoModifier) -> str:
        before = len(said)
        qtbot.keyClick(QApplication.focusWidget() or w, key, modifier)
        assert len(said) == before + 1, said[before:]  # said once for one key press
        return said[-1].text

    texts = [press(Qt.Key.Key_F7) for _ in found]
    assert texts == [f"{p.said()} {i} of {len(found)}" for i, p in enumerate(found, 1)]
    assert all((" of " in t and ("top" in t or "middle" in t or "whole" in t or "left" in t or "right" in t
                                 or "bottom" in t)) for t in texts), texts
    assert press(Qt.Key.Key_F7).startswith("End of what was found")
    assert press(Qt.Key.Key_F7) == texts[0]  # starts again
    back = Qt.KeyboardModifier.ShiftModifier
    # Back past the first: its start is said, and which key starts again (it said "F7 ... from the first").
    assert press(Qt.Key.Key_F7, back) == "Start of what was found; Shift+F7 starts again from the last"
    assert press(Qt.Key.Key_F7, back) == texts[-1]  # and on from the last
