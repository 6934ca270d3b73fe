"""Widgets every part of the window uses: named controls, and status text a screen reader can read."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QAbstractButton, QLabel, QListWidget, QPushButton, QWidget


def named(w: QWidget, name: str, desc: str = "") -> QWidget:
    w.setAccessibleName(name)
    if desc:
        w.setAccessibleDescription(desc)
        w.setToolTip(desc)
    return w


def button(text: str, desc: str, slot: Callable | None = None) -> QPushButton:
    """A push button whose spoken name is its whole text, shortcut included: "Caption again (F5)".

    Never a dialog's default button: Enter in a list or a field must not press a button that
    changes things.
    """
    b = QPushButton(text)
    named(b, text.replace("&", ""), desc)
    b.setAutoDefault(False)
    b.setDefault(False)
    if slot is not None:
        b.clicked.connect(slot)
    return b


class StatusLabel(QLabel):
    """A line of status text whose accessible name carries the text itself ("Batch status: 3 of 9"),
    so that flat review and 'where am I' read what is shown, not just what the line is for."""

    def __init__(self, title: str, text: str = "") -> None:
        super().__init__()
        self.title = title
        self.setWordWrap(True)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setAccessibleName(f"{self.title}: {text}" if text else self.title)


def mnemonics(top: QWidget) -> dict[str, list[str]]:
    """Alt+letter keys of a window's buttons and labels: key -> the texts that claim it."""
    keys: dict[str, list[str]] = {}
    for w in top.findChildren(QWidget):
        if isinstance(w, (QAbstractButton, QLabel)) and w.isVisibleTo(top):
            text = w.text()
            i = text.replace("&&", "").find("&")
            if 0 <= i < len(text) - 1:
                keys.setdefault(text.replace("&&", "")[i + 1].lower(), []).append(text)
    return keys


class GuardedList(QListWidget):
    """A list whose keyboard moves can be held back: ``may_leave(target)`` is asked before the current
    entry changes by a key, so that a question can come before the screen reader reads a new entry."""

    def __init__(self, may_leave: Callable[[QModelIndex], bool] = lambda _i: True) -> None:
        super().__init__()
        self.may_leave = may_leave

    def moveCursor(self, action, modifiers) -> QModelIndex:  # noqa: N802 (Qt's name)
        target = super().moveCursor(action, modifiers)
        if target.isValid() and target != self.currentIndex() and not self.may_leave(target):
            return self.currentIndex()
        return target
