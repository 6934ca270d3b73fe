"""The picture list shows each entry whole, its file name and status wrapped to the list's width: nothing is
cut behind a scroll bar (seen with "name.png, alt text written by CapDesk, needs review"). Real widget
geometry, offscreen Qt."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QListWidgetItem  # noqa: E402

LABELS = ["astronaut.png, described, not saved",
          "IMG_20240612_183012_HDR_portrait.jpg, alt text written by CapDesk, needs review",
          "a photo of the harbour at dusk from the old lighthouse.jpeg, alt text written or edited by a person",
          "c.png, edited, not saved"]


@pytest.mark.parametrize("size", [(1200, 760), (800, 600)])
def test_every_entry_is_shown_whole(qtbot, open_window, size):
    window = open_window(size=size)
    lst = window.list
    for text in LABELS:
        lst.addItem(QListWidgetItem(text))
    qtbot.waitUntil(lambda: lst.viewport().width() > 0, timeout=5000)
    qtbot.wait(50)  # the list lays its entries out after the event loop turns
    _all_whole(lst)
    window.resize(size[0] - 300, size[1])  # narrower: wrapped again
    qtbot.wait(50)
    _all_whole(lst)


def _all_whole(lst) -> None:
    assert not lst.horizontalScrollBar().isVisible()
    width = lst.viewport().width()
    flags = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
    for i, text in enumerate(LABELS):
        rect = lst.visualItemRect(lst.item(i))
        assert rect.left() >= 0 and rect.right() < width, (text, rect, width)
        needed = lst.fontMetrics().boundingRect(QRect(0, 0, rect.width() - 8, 10_000), flags, text)
        assert needed.height() <= rect.height(), (text, needed, rect)
