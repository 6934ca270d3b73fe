"""Widgets of the window: named controls, status text a screen reader can read, and the picture pane's
list of caption words and strip of attention maps."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QAccessible, QFocusEvent, QKeyEvent, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QAbstractButton,
    QAccessibleWidget,
    QLabel,
    QListView,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from .qtutil import make_plain


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
    so that flat review and 'where am I' read what is shown, not just what the line is for.

    ``role`` (a status bar, a paragraph) keeps a line that repeats what is said otherwise out of what a
    screen reader reads with its window: Orca 43 reads a dialog's labels whole each time the focus comes
    back into it, and an outcome that is also the status line was heard once with the line and once with
    the control it is said with. Flat review still reads it."""

    def __init__(self, title: str, text: str = "", role: QAccessible.Role | None = None) -> None:
        super().__init__()
        if role is not None:  # before the first accessible name is set: the screen reader asks for it then
            read_as(self, role)
        make_plain(self)  # it shows names, captions and a page's words: never read as HTML
        self.title = title
        self.setWordWrap(True)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        # Empty, it has no name: Orca reads a dialog's labels when it opens, and a bare "Alt text status."
        # was heard as part of the dialog's introduction.
        self.setAccessibleName(f"{self.title}: {text}" if text else "")


def read_as(label: QLabel, role: QAccessible.Role) -> QLabel:
    """``label`` given to the screen reader as ``role``, not as a label: Orca reads a window's labels with
    the window. Call it before the label gets its first text: with a screen reader running, Qt builds a
    label's accessible object (and keeps it) as its text is first set."""
    global _role_factory
    label.setProperty("a11y_role", role)
    if not _role_factory:
        QAccessible.installFactory(_label_accessible)
        _role_factory = True
    return label


def _label_accessible(key: str, obj: QObject):
    role = obj.property("a11y_role") if isinstance(obj, QLabel) else None
    return QAccessibleWidget(obj, role, "") if role is not None else None


_role_factory = False


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
        # Each entry whole, wrapped to the list's width: a long name with its status ran on behind a
        # sideways scroll bar, and a sighted reader never saw "needs review".
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # wrapped again when the list is resized

    def moveCursor(self, action, modifiers) -> QModelIndex:  # noqa: N802 (Qt's name)
        target = super().moveCursor(action, modifiers)
        if target.isValid() and target != self.currentIndex() and not self.may_leave(target):
            return self.currentIndex()
        return target


# The focus came in by a key (Tab, Shift+Tab, the label's Alt+letter), not by a click or the window
# coming back to the front, which a screen reader already reads by itself.
KEYBOARD_FOCUS = (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason,
                  Qt.FocusReason.ShortcutFocusReason)


class WordList(QListWidget):
    """A caption's words side by side, as high as its rows of words and no higher.

    ``asked(row)`` asks for the current word to be said in full ("Word 2 of 9, ..."): on Space, which
    a one-choice list otherwise swallows in silence. -1: Space with no words.
    """

    asked = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model().rowsInserted.connect(self._refit)
        self.model().rowsRemoved.connect(self._refit)
        self.model().modelReset.connect(self._refit)
        self.fit_height()

    def keyPressEvent(self, ev: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if ev.key() == Qt.Key.Key_Space and not ev.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            if self.count() and self.currentRow() < 0:
                self.setCurrentRow(0)
            self.asked.emit(self.currentRow())
            ev.accept()
            return
        super().keyPressEvent(ev)

    def focusInEvent(self, ev: QFocusEvent) -> None:  # noqa: N802 (Qt's name)
        super().focusInEvent(ev)
        if ev.reason() in KEYBOARD_FOCUS and self.count():
            row = max(self.currentRow(), 0)
            # Qt makes the first entry current without selecting it, and Orca then read only "List with 9
            # items": selected, the word and where the model looked are read as the focus comes in (so
            # nothing more is said here: Orca was heard reading the word, then the same word again).
            if not self.item(row).isSelected():
                self.setCurrentRow(row)

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(ev)
        self._refit()

    def _refit(self, *_) -> None:
        QTimer.singleShot(0, self.fit_height)  # after Qt has laid the entries out again

    def fit_height(self) -> None:
        """As high as the rows the words wrap into (one row when there are none)."""
        row_h = max(self.sizeHintForRow(0), self.fontMetrics().height() + 6)
        bottom = row_h
        for i in range(self.count()):
            r = self.visualItemRect(self.item(i))
            bottom = max(bottom, r.bottom() + 1 + self.verticalOffset())
        rows_h = min(bottom, 4 * row_h)  # longer than four rows: the list scrolls
        h = rows_h + 2 * self.frameWidth() + 4
        if h != self.height() or self.minimumHeight() != h:
            self.setFixedHeight(h)


class AttentionStrip(QLabel):
    """The picture, then every word of the caption under its own small attention map, drawn in one row.

    Each word is written in full under its map (a long word widens its column) and the whole row
    is as high as a map and a line of text; ``area`` scrolls it sideways when it is wider than the
    window. The selected word's column is drawn in the highlight colour. A click on a column asks
    for that word (``picked``). No Tab stop: the Words list gives the same by keyboard.
    """

    picked = Signal(int)
    PAD = 4

    def __init__(self, name: str, tile: int = 80) -> None:
        super().__init__()
        make_plain(self)  # its hint may name a file
        self.tile = tile
        self.setAccessibleName(name)
        self.area = QScrollArea()
        self.area.setWidget(self)
        self.area.setWidgetResizable(False)
        self.area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.area.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.area.setAccessibleName(name)
        self._thumbs: list[QPixmap] = []
        self._words: list[str] = []
        self.columns: list[QRect] = []  # each tile's column, the picture's first
        self.labels: list[QRect] = []  # where each label's text is drawn, the picture's first
        self.selected: int | None = None
        self.area.setFixedHeight(self.strip_height() + self.area.horizontalScrollBar().sizeHint().height()
                                 + 2 * self.area.frameWidth())
        self.clear_words()

    def strip_height(self) -> int:
        return self.PAD + self.tile + self.PAD + self.fontMetrics().height() + self.PAD

    def clear_words(self, hint: str = "") -> None:
        self._thumbs, self._words, self.columns, self.labels, self.selected = [], [], [], [], None
        self.clear()
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # a hint, not content
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setIndent(2 * self.PAD)
        self.setText(hint)
        self.setFixedSize(max(1, self.fontMetrics().horizontalAdvance(hint) + 4 * self.PAD), self.strip_height())

    def show_words(self, picture: QPixmap, maps: list[QPixmap], words: list[str], first: str = "picture") -> None:
        """``picture`` as it is, then ``maps[i]`` labelled ``words[i]``; every pixmap ``tile`` high."""
        self._thumbs, self._words, self.selected = [picture, *maps], [first, *words], None
        self._paint()

    def select(self, word: int | None) -> None:
        """Highlight word ``word`` (None: no word) and scroll it into view."""
        self.selected = word
        if self._thumbs:
            self._paint()
            if word is not None and 0 <= word + 1 < len(self.columns):
                c = self.columns[word + 1]
                self.area.ensureVisible(c.center().x(), c.center().y(), c.width() // 2 + self.PAD, 0)

    def _paint(self) -> None:
        fm = self.fontMetrics()
        widths = [max(pm.width(), fm.horizontalAdvance(w) + 2 * self.PAD)
                  for pm, w in zip(self._thumbs, self._words)]
        h = self.strip_height()
        pm = QPixmap(sum(widths) + self.PAD * (len(widths) + 1), h)
        pal = self.palette()
        pm.fill(pal.color(QPalette.ColorRole.Window))
        painter = QPainter(pm)
        self.columns, self.labels = [], []
        x = self.PAD
        for k, (thumb, word, w) in enumerate(zip(self._thumbs, self._words, widths)):
            col = QRect(x - self.PAD // 2, 0, w + self.PAD, h)
            chosen = self.selected is not None and k == self.selected + 1
            if chosen:
                painter.fillRect(col, pal.color(QPalette.ColorRole.Highlight))
            painter.drawPixmap(x + (w - thumb.width()) // 2, self.PAD, thumb)
            label = QRect(x, self.PAD + self.tile + self.PAD, w, fm.height())
            role = QPalette.ColorRole.HighlightedText if chosen else QPalette.ColorRole.WindowText
            painter.setPen(pal.color(role))
            painter.drawText(label, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, word)
            self.columns.append(col)
            self.labels.append(label)
            x += w + self.PAD
        painter.end()
        self.setForegroundRole(QPalette.ColorRole.WindowText)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setIndent(0)
        self.setPixmap(pm)
        self.setFixedSize(pm.size())

    def mousePressEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        for k, col in enumerate(self.columns):
            if k and col.contains(ev.position().toPoint()):
                self.picked.emit(k - 1)
                return
        super().mousePressEvent(ev)
