"""The review list of Fill alt text: each proposed alt text before anything is written, to accept, edit or
skip with the keyboard, every step said to the screen reader. The choices are the session's
(``capdesk.session.altfill_review``); Write accepted hands them back to the Fill alt text dialog, which
writes them through the session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAccessibleWidget,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
)

from capdesk.session.altfill_review import ACCEPTED, SKIPPED, UNDECIDED, Choice
from capdesk.session.messages import plural

from ..qtutil import plain_label
from ..widgets import StatusLabel, button, named
from .common import PathEdit

KEYS_HELP = ("Up and Down move between pictures; A accepts, S skips; Enter or Tab goes to the text to edit, "
             "where Enter accepts it. Nothing is written until Write accepted (Alt+W).")


def picture_said(c: Choice) -> str:
    """The picture as a person tells it: its file name, or in a PDF its place ("page 3, picture 2"), not the
    name of its image resource ("Im9"), which says nothing to anyone."""
    if c.row.syntax == "pdf":
        return (c.row.location or f"page {c.row.line}").replace("figure", "picture")
    return c.picture


def where_said(c: Choice) -> str:
    """Where it is: a PDF's picture names its page already, so only the file is added."""
    return Path(c.row.page).name if c.row.syntax == "pdf" else c.where


def row_name(c: Choice) -> str:
    """What a screen reader says for a row: the picture, where it is, and what will happen to it."""
    return f"{picture_said(c)} in {where_said(c)}: {c.state_said}"


def row_text(c: Choice) -> str:
    """What the row shows: its name and the text."""
    return f"{row_name(c)}. {c.text or '(no text)'}"


def _sentence(text: str) -> str:
    """``text`` ending in one full stop: an alt text already ends in one, and "A cat.. Why" was heard."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _plain_container(key: str, obj: QObject):
    """The list's box is a bare container to the screen reader (AT-SPI "filler"), not a second dialog.

    Orca 43 reads every dialog (and named panel) around a newly focused control with the labels in it:
    as a dialog of its own inside the Fill dialog, the list's introduction was heard twice when it opened,
    once with each. A filler is never read as context, so the introduction is heard once, with the Fill
    dialog around it."""
    if isinstance(obj, ReviewDialog):
        return QAccessibleWidget(obj, QAccessible.Role.Client, "")
    return None


_factory_installed = False


def _install_factory() -> None:
    global _factory_installed
    if not _factory_installed:  # before the first list is asked for its accessible object
        QAccessible.installFactory(_plain_container)
        _factory_installed = True


class ReviewDialog(QDialog):
    """``on_write(choices)`` is called by Write accepted; the Fill alt text dialog writes them and closes this."""

    def __init__(self, parent, session, announcer, choices: list[Choice],
                 on_write: Callable[[list[Choice]], None], on_reject: Callable[[], None] | None = None) -> None:
        _install_factory()
        super().__init__(parent)
        # Shown inside the Fill alt text dialog, in its page's place: no window of its own, so closing it moves
        # the focus inside one window, and the screen reader does not read that window again whole.
        self.setWindowFlags(Qt.WindowType.Widget)
        self.session, self.announcer, self.choices, self.on_write = session, announcer, choices, on_write
        self.on_reject = on_reject
        title = "Review alt text before writing"
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        intro = plain_label(f"{plural(len(choices), 'picture')}, each with the alt text proposed for it. " + KEYS_HELP)
        intro.setWordWrap(True)
        self.list = named(QListWidget(), "Pictures to review", "A accepts, S skips, Enter edits the text")
        self.list.setWordWrap(True)
        for c in choices:
            self.list.addItem(QListWidgetItem(row_text(c)))
        self.field = named(PathEdit(), "Alt text")
        # Said with the entry (its description) and with the field: not read again with the window.
        self.why = StatusLabel("Why to review", role=QAccessible.Role.Paragraph)
        self.around = StatusLabel("Text around the picture", role=QAccessible.Role.Paragraph)
        self.accept_btn = button("&Accept", "Write this picture's text, as it is in the field", self.accept_current)
        self.skip_btn = button("&Skip", "Write nothing for this picture", self.skip_current)
        self.write_btn = button("&Write accepted", "Write the accepted texts into their files", self.write)
        self.close_btn = button("&Close without writing", "Close the list; nothing is written", self.reject)
        self._layout(intro)
        self._loading = False
        self.list.currentRowChanged.connect(self._show)
        self.field.textChanged.connect(self._edited)
        self.list.installEventFilter(self)
        self.field.installEventFilter(self)
        for i in range(self.list.count()):
            self._draw(i)
        self.list.setCurrentRow(0)
        self.list.setFocus()

    def _layout(self, intro: QLabel) -> None:
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        for text, buddy in (("&Pictures:", self.list), ("Alt &text:", self.field)):
            lbl = QLabel(text)
            lbl.setBuddy(buddy)
            lay.addWidget(lbl)
            lay.addWidget(buddy)
        lay.addWidget(self.why)
        lay.addWidget(self.around)
        row = QHBoxLayout()
        for b in (self.accept_btn, self.skip_btn, self.write_btn, self.close_btn):
            row.addWidget(b)
        lay.addLayout(row)

    # -- drawing --------------------------------------------------------------------------------
    def current(self) -> Choice | None:
        i = self.list.currentRow()
        return self.choices[i] if 0 <= i < len(self.choices) else None

    def _draw(self, i: int) -> None:
        c, item = self.choices[i], self.list.item(i)
        item.setText(row_text(c))
        item.setData(Qt.ItemDataRole.AccessibleTextRole, row_name(c))
        description = f"{_sentence(c.text) or 'No text.'} Why: {c.why}"
        if self.announcer is not None:
            self.announcer.set_item_description(self.list, self.list.indexFromItem(item), description)
        else:
            item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, description)

    def _show(self, i: int) -> None:
        c = self.current()
        if c is None:
            return
        self._loading = True
        self.field.setText(c.text)
        self._loading = False
        self.field.setAccessibleName(f"Alt text for {picture_said(c)}")
        self.why.setText(c.why)
        # What the page says beside the picture, for the person writing its text (never read into it).
        around = f"Text around it: {c.row.context}" if c.row.context else "No text around it."
        self.around.setText(around)
        # The shown words say what they are: under its title too it was heard as "Text around the picture:
        # Text around it: ...".
        self.around.setAccessibleName(around)
        self.field.setAccessibleDescription(around)

    def _edited(self) -> None:
        c = self.current()
        if c is None or self._loading:
            return
        c.text = self.field.text()
        self._draw(self.list.currentRow())

    # -- the person's steps ---------------------------------------------------------------------
    def accept_current(self) -> None:
        c = self.current()
        if c is None:
            return
        if not c.text.strip():
            self.session.say(f"No text to write for {picture_said(c)}: type one, or skip it")
            return
        self._decide(c, ACCEPTED, f"Accepted{', edited' if c.edited else ''}: {picture_said(c)}, {c.text}")

    def skip_current(self) -> None:
        c = self.current()
        if c is not None:
            self._decide(c, SKIPPED, f"Skipped: {picture_said(c)}; nothing is written for it")

    def _decide(self, c: Choice, state: str, said: str) -> None:
        c.state = state
        self._draw(self.list.currentRow())
        self.session.say(f"{_sentence(said)} {self.tally()}")

    def tally(self) -> str:
        counts = {s: sum(1 for c in self.choices if c.state == s) for s in (ACCEPTED, SKIPPED, UNDECIDED)}
        return f"{counts[ACCEPTED]} accepted, {counts[SKIPPED]} skipped, {counts[UNDECIDED]} to review"

    def write(self) -> None:
        if not any(c.state == ACCEPTED and c.text.strip() for c in self.choices):
            self.session.say("Nothing is accepted, so nothing would be written: accept a picture first (A)")
            return
        for b in (self.accept_btn, self.skip_btn, self.write_btn):
            b.setEnabled(False)
        self.on_write(self.choices)

    def reject(self) -> None:
        if self.write_btn.isEnabled():  # not while the accepted texts are being written
            if self.on_reject is not None:  # the focus moved away first: hiding it with the focus inside moved it
                self.on_reject()
            super().reject()

    # -- keys -----------------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if ev.type() != QEvent.Type.KeyPress or ev.modifiers() not in (Qt.KeyboardModifier.NoModifier,
                                                                       Qt.KeyboardModifier.KeypadModifier):
            return False
        key = ev.key()
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if obj is self.list and key in (Qt.Key.Key_A, Qt.Key.Key_S):
            (self.accept_current if key == Qt.Key.Key_A else self.skip_current)()
            return True
        if obj is self.list and enter:
            self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        if obj is self.field and enter:
            self.accept_current()
            return True
        return False
