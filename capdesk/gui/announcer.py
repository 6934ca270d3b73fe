"""Getting a message to the running screen reader, once, on every platform CapDesk runs on.

Qt's own way, ``QAccessibleAnnouncementEvent``, becomes a UI Automation notification on Windows
(NVDA, Narrator, JAWS) and an announcement on macOS (VoiceOver), and an AT-SPI
``object:announcement`` on Linux, which Orca only speaks from version 45; Debian 12's Orca 43.1
ignores it. What every Orca speaks (found by running Debian's Orca 43.1 on the window, and read
in Orca's source for later versions) is:

* a change of the accessible description of the object that has the focus: Orca says the new
  description. On a focused list entry the message is its description for one event only: the
  entry's description is put back at once without an event, so Orca reading the entry later
  (even late, on a busy machine) never reads the message a second time. On another focused
  widget the message stays its description until the focus leaves (Qt sends an event for every
  change there), and waits until Orca has had time to read a widget that has just got the focus.
* a notification (AT-SPI role ``notification``) appearing, even from a window in the background.
  So when CapDesk's window is not the active one (a watched folder, the clipboard), the message is
  shown in a small notification, which Orca reads as "notification, <text>".

Only one of the three is used for a message, so no screen reader hears it twice.
"""

from __future__ import annotations

import contextlib
import sys
import time

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAccessibleWidget,
    QApplication,
    QComboBox,
    QLabel,
    QMenu,
    QMenuBar,
    QWidget,
)

from .qtutil import plain_label

# A list entry's own description (the picture's alt text), given to it when the focus leaves it.
RESTING_ROLE = Qt.ItemDataRole.UserRole + 7
DESCRIPTION_ROLE = Qt.ItemDataRole.AccessibleDescriptionRole
NOTIFICATION_NAME = "capdesk-notification"
FOCUS_SETTLE_S = 1.5  # Orca 43 took up to 1.6 s to read a new focus on a busy 2-core machine


class _NotificationAccessible(QAccessibleWidget):
    def __init__(self, label: QLabel) -> None:
        super().__init__(label, QAccessible.Role.Notification, "")

    def text(self, t: QAccessible.Text) -> str:
        if t == QAccessible.Text.Name:
            return self.widget().text()
        return super().text(t)


def _factory(key: str, obj: QObject):
    if isinstance(obj, QLabel) and obj.objectName() == NOTIFICATION_NAME:
        return _NotificationAccessible(obj)
    return None


_factory_installed = False


def uses_focus_carrier() -> bool:
    """AT-SPI (Linux and the BSDs): Orca before 45 does not speak Qt's announcements."""
    return not (sys.platform.startswith("win") or sys.platform == "darwin")


class Announcer(QObject):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        global _factory_installed
        if not _factory_installed:  # before the label below is first asked for its accessible object
            QAccessible.installFactory(_factory)
            _factory_installed = True
        self.window = window
        self.note = plain_label("", window)  # what is said names files and quotes captions: never HTML
        self.note.setObjectName(NOTIFICATION_NAME)
        self.note.setGeometry(0, 0, 1, 1)  # for the screen reader only; the status bar shows the text
        self.note.hide()
        self._widget: tuple[QWidget, str, str] | None = None  # a widget lending its description; its own, tooltip
        self._item: tuple[QAbstractItemView, QPersistentModelIndex] | None = None
        self.said: list[str] = []  # what was handed on, newest last (read by the tests)
        self._focus_moved_at = 0.0
        self._waiting: list[str] = []  # messages waiting for the focus to settle, oldest first
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self._flush)
        self._window_focus_at = 0.0  # the focus last moved between widgets (a dialog closed, ...)
        self._arrived: tuple[QWidget, str] | None = None  # a message said with the widget the focus went to
        app = QApplication.instance()
        app.focusChanged.connect(self._focus_moved)

    def _focus_moved(self, *_) -> None:
        self.note_focus_moved()
        self._window_focus_at = self._focus_moved_at
        QTimer.singleShot(0, self._give_back)

    def note_focus_moved(self) -> None:
        """The focus moved inside a list (a new current entry) or to another widget."""
        self._focus_moved_at = time.monotonic()

    # -- saying ------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        if not text:
            return
        if self._arrived is not None and self._arrived[1] == text:
            self._arrived = None  # already said with the widget the focus went to
            return
        self.said.append(text)
        if not uses_focus_carrier():
            self._announce(text)
            return
        # One queue, handed on oldest first: messages each on a timer of their own (rounded to the
        # millisecond) were heard out of order, a batch's "half done" before its "a quarter done".
        self._waiting.append(text)
        self._flush()

    def say_on_arrival(self, w: QWidget, text: str, replaces: str = "") -> None:
        """Say ``text`` with the widget the focus is about to move to (call it just before the move): its
        description until the focus leaves it, so the screen reader says it once, right after the widget's
        short name, in the same breath. A description changed after the move was heard twice (with the widget,
        then as news), and one changed 1.5 s later came after the widget's own description. The next ``say``
        of ``replaces`` (or of ``text``: the job's own outcome, said through the session) is not said again."""
        if not text or not uses_focus_carrier():
            return  # elsewhere the session's own message is announced as it comes
        self._give_back()
        self.said.append(text)
        self._widget = (w, w.accessibleDescription(), w.toolTip())
        w.setToolTip("")
        # Set before the focus moves: the change event reaches the screen reader while another widget has
        # the focus, which it does not read as news; it reads the description with the widget.
        w.setAccessibleDescription(text)
        self._arrived = (w, replaces or text)

    def _settle_wait(self) -> float:
        """Seconds until the screen reader has read where the focus now is.

        Orca 43 drops a description change on a list entry that comes while it is still reading the
        window the focus has just come back to (a dialog closed); and it reads a newly focused widget
        (its description too) a moment after the focus moves, so a description changed before then
        would be read twice, with the widget and as news."""
        now = time.monotonic()
        wait = FOCUS_SETTLE_S - (now - self._window_focus_at)
        focus = QApplication.focusWidget()
        on_entry = isinstance(focus, QAbstractItemView) and focus.currentIndex().isValid()
        if focus is not None and focus.isActiveWindow() and not on_entry:
            wait = max(wait, FOCUS_SETTLE_S - (now - self._focus_moved_at))
        return wait

    def _flush(self) -> None:
        with contextlib.suppress(RuntimeError):  # the window closed meanwhile
            wait = self._settle_wait()
            if wait > 0:
                self._flush_timer.start(int(wait * 1000) + 1)
                return
            while self._waiting:
                self._carry(self._waiting.pop(0))

    def _carry(self, text: str) -> None:
        focus = QApplication.focusWidget()
        if focus is None or not focus.isActiveWindow():
            self._notify(text)
        elif isinstance(focus, QAbstractItemView) and focus.currentIndex().isValid():
            self._on_item(focus, focus.currentIndex(), text)
        else:
            self._on_widget(focus, text)

    def _announce(self, text: str) -> None:
        try:
            from PySide6.QtGui import QAccessibleAnnouncementEvent
        except ImportError:  # Qt before 6.8: nothing to send it with
            return
        QAccessible.updateAccessibility(QAccessibleAnnouncementEvent(self.window, text))

    def _notify(self, text: str) -> None:
        self.note.hide()
        self.note.setText(text)
        self.note.show()
        QTimer.singleShot(15000, self.note.hide)

    def _on_widget(self, w: QWidget, text: str) -> None:
        if self._widget is None or self._widget[0] is not w:
            self._give_back()
            self._widget = (w, w.accessibleDescription(), w.toolTip())
            # Qt gives the tooltip as the description when there is none: it must not stand in below.
            w.setToolTip("")
        # Through an empty description first, so that the same message twice is a change both times
        # (an empty description is not spoken).
        w.setAccessibleDescription("")
        w.setAccessibleDescription(text)

    def _on_item(self, view: QAbstractItemView, index: QModelIndex, text: str) -> None:
        """The message as the entry's description for one change event, then its own description back
        without one: Qt reads the new value into the event, and the entry never keeps the message."""
        model = view.model()
        before = index.data(DESCRIPTION_ROLE) or ""
        _silently(model, index, "")
        model.setData(index, text, DESCRIPTION_ROLE)
        _silently(model, index, before)

    def _current_moved(self, *_) -> None:
        QTimer.singleShot(0, self._give_back)

    def _give_back(self) -> None:
        """Put back the descriptions lent to messages, once the focus has left their owners."""
        focus = QApplication.focusWidget()
        if isinstance(focus, (QMenuBar, QMenu)):
            return  # a menu is open over the owner: Orca may still take the owner for the focus
        with contextlib.suppress(RuntimeError):  # its owner may be gone (a closed dialog)
            if self._widget is not None and self._widget[0] is not focus:
                if self._arrived is not None and self._arrived[0] is self._widget[0]:
                    self._arrived = None
                w, own, tip = self._widget
                self._widget = None
                w.setAccessibleDescription(own)
                w.setToolTip(tip)
        with contextlib.suppress(RuntimeError):
            if self._item is not None:
                view, index = self._item
                if not index.isValid():
                    self._item = None
                elif view is not focus or QModelIndex(index) != view.currentIndex():
                    self._item = None
                    _silently(view.model(), QModelIndex(index), index.data(RESTING_ROLE) or "")

    # -- an item's own description ---------------------------------------------------------------
    def describe_arriving(self, view: QAbstractItemView, index: QModelIndex, text: str) -> None:
        """The description of the entry the focus is arriving at, set in the same turn as the focus moved:
        the screen reader asks for it after this turn, so it reads this one, not the one it had."""
        _silently(view.model(), index, text, RESTING_ROLE)
        _silently(view.model(), index, text)

    def set_item_description(self, view: QAbstractItemView, index: QModelIndex, text: str) -> None:
        """Give a list entry its own description, read with the entry; never announced by itself.

        The focused entry keeps the description it had until the focus leaves it: a screen reader
        that reads the entry late (on a busy machine) would otherwise read a description that is
        also being said as news.
        """
        model = view.model()
        _silently(model, index, text, RESTING_ROLE)
        if uses_focus_carrier() and view.hasFocus() and view.currentIndex() == index:
            self._give_back()
            self._item = (view, QPersistentModelIndex(index))
            view.selectionModel().currentChanged.connect(self._current_moved, Qt.ConnectionType.UniqueConnection)
            return
        _silently(model, index, text)


def _silently(model, index: QModelIndex, text: str, role=DESCRIPTION_ROLE) -> None:
    """Change an entry's data without telling anyone, screen readers included (no event)."""
    model.blockSignals(True)
    try:
        model.setData(index, text, role)
    finally:
        model.blockSignals(False)


def speak_combo_changes(announcer: Announcer, root: QWidget) -> None:
    """Say the new value of a closed combo box changed with the arrow keys.

    Works around Orca 43 with Qt 6: Orca says nothing when a closed combo box's value changes (Qt sends
    its name change on the combo box, which Orca 43 does not read as news); with the list open
    (Alt+Down) Orca reads the entries itself, so only a change made with the list closed is said.
    """
    for combo in root.findChildren(QComboBox):
        closing = _PopupClosing(combo)

        def changed(_index: int, c: QComboBox = combo, popup: _PopupClosing = closing) -> None:
            # A value chosen in the list closes it first: Orca reads the combo box as the focus comes back
            # to it, and saying the value as well was heard twice.
            if c.hasFocus() and not c.view().isVisible() and not popup.just_closed:
                announcer.say(c.currentText())

        combo.currentIndexChanged.connect(changed)


class _PopupClosing(QObject):
    """Whether a combo box's list has closed in this turn of the event loop (a value chosen in it)."""

    def __init__(self, combo: QComboBox) -> None:
        super().__init__(combo)
        self.just_closed = False
        combo.view().window().installEventFilter(self)  # the list's own pop-up frame

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if ev.type() == QEvent.Type.Hide:
            self.just_closed = True
            QTimer.singleShot(0, self, self._over)
        return False

    def _over(self) -> None:
        self.just_closed = False
