"""The window's status bar, as a line of text a screen reader's flat review can reach."""

from __future__ import annotations

from PySide6.QtWidgets import QStatusBar

from .qtutil import plain_label


class StatusBar(QStatusBar):
    """QStatusBar paints a message itself, with no object behind it in the accessibility tree, so Orca's
    flat review skipped it. Here the message lives in a label: read by flat review, and kept until the
    next one. ``showMessage`` and ``currentMessage`` keep QStatusBar's meaning for the rest of the window."""

    def __init__(self) -> None:
        super().__init__()
        self.line = plain_label()  # messages name files and quote captions: never read as HTML
        self.addWidget(self.line, 1)

    def showMessage(self, text: str, timeout: int = 0) -> None:  # noqa: N802 (Qt's name)
        self.line.setText(text)

    def currentMessage(self) -> str:  # noqa: N802 (Qt's name)
        return self.line.text()

    def clearMessage(self) -> None:  # noqa: N802 (Qt's name)
        self.line.clear()
