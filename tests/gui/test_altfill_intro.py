"""The Fill alt text dialog says what it fills, PDF among them, and that facts only are its default."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
from PySide6.QtWidgets import QLabel  # noqa: E402


def test_the_introduction_names_pdf_among_what_it_fills(qtbot, open_window):
    from capdesk.gui.dialogs import AltFillDialog

    dlg = AltFillDialog(open_window())
    qtbot.addWidget(dlg)
    intro = next(w.text() for w in dlg.findChildren(QLabel) if w.wordWrap() and "alt text" in w.text())
    assert "PDF" in intro and "EPUB, Word, PowerPoint, OpenDocument and tagged PDF files" in intro
    assert dlg.write == "facts"  # the window's default, as the command line's
