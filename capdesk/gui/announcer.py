"""Getting a message to the running screen reader, once, on every platform CapDesk runs on.

Qt's own way, ``QAccessibleAnnouncementEvent``, becomes a UI Automation notification on Windows
(NVDA, Narrator, JAWS) and an announcement on macOS (VoiceOver), and an AT-SPI
``object:announcement`` on Linux, which Orca only speaks from version 45; Debian 12's Orca 43.1
ignores it. What every Orca speaks (found by running Debian's Orca 43.1 on the window, and read
in Orca's source for later versions) is:

* a change of the accessible description of the object that has the focus: Orca says the new
  description. So on Linux a message becomes, for a moment, the description of the focused
  widget, or of the focused list entry; the widget's own description is put back once the focus
  leaves it (Orca does not speak a change on an object that no longer has the focus).
* a notification (AT-SPI role ``notification``) appearing, even from a window in the background.
  So when CapDesk's window is not the active one (a watched folder, the clipboard), the message is
  shown in a small notification, which Orca reads as "notification, <text>".

Only one of the three is used for a message, so no screen reader hears it twice.
"""

from __future__ import annotations

import contextlib
import sys

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QAbstractItemView, QAccessibleWidget, QApplication, QLabel, QWidget

# An item's own description, put back when a message that borrowed it leaves.
RESTING_ROLE = Qt.ItemDataRole.UserRole + 7
DESCRIPTION_ROLE = Qt.ItemDataRole.AccessibleDescriptionRole
NOTIFICATION_NAME = "capdesk-notification"


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
        self.note = QLabel(window)
        self.note.setObjectName(NOTIFICATION_NAME)
        self.note.setGeometry(0, 0, 1, 1)  # for the screen reader only; the status bar shows the text
        self.note.hide()
        self._widget: tuple[QWidget, str] | None = None  # a widget lending its description, and its own
        self._item: tuple[QAbstractItemView, QPersistentModelIndex] | None = None
        self.said: list[str] = []  # what was handed on, newest last (read by the tests)
        app = QApplication.instance()
        app.focusChanged.connect(lambda *_: QTimer.singleShot(0, self._give_back))

    # -- saying ------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        if not text:
            return
        self.said.append(text)
        if not uses_focus_carrier():
            self._announce(text)
            return
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
            self._widget = (w, w.accessibleDescription())
        # Through an empty description first, so that the same message twice is a change both times
        # (an empty description is not spoken).
        w.setAccessibleDescription("")
        w.setAccessibleDescription(text)

    def _on_item(self, view: QAbstractItemView, index: QModelIndex, text: str) -> None:
        held = self._item
        if held is None or held[0] is not view or QModelIndex(held[1]) != index:
            self._give_back()
            self._hold(view, index)
        model = view.model()
        model.setData(index, "", DESCRIPTION_ROLE)
        model.setData(index, text, DESCRIPTION_ROLE)

    def _current_moved(self, *_) -> None:
        QTimer.singleShot(0, self._give_back)

    def _give_back(self) -> None:
        """Put back the descriptions lent to messages, once the focus has left their owners."""
        focus = QApplication.focusWidget()
        with contextlib.suppress(RuntimeError):  # its owner may be gone (a closed dialog)
            if self._widget is not None and self._widget[0] is not focus:
                w, own = self._widget
                self._widget = None
                w.setAccessibleDescription(own)
        with contextlib.suppress(RuntimeError):
            if self._item is not None:
                view, index = self._item
                if not index.isValid():
                    self._item = None
                elif view is not focus or QModelIndex(index) != view.currentIndex():
                    self._item = None
                    view.model().setData(QModelIndex(index), index.data(RESTING_ROLE) or "", DESCRIPTION_ROLE)

    # -- an item's own description ---------------------------------------------------------------
    def set_item_description(self, view: QAbstractItemView, index: QModelIndex, text: str) -> None:
        """Give a list entry its own description (read with it). While a message holds the focused entry,
        the description waits until the focus leaves: changing it now would be spoken as news."""
        model = view.model()
        model.setData(index, text, RESTING_ROLE)
        held = self._item
        if held is not None and held[0] is view and QModelIndex(held[1]) == index:
            return  # put back when the focus leaves it
        if uses_focus_carrier() and view.hasFocus() and view.currentIndex() == index:
            self._give_back()
            self._hold(view, index)
            return
        model.setData(index, text, DESCRIPTION_ROLE)

    def _hold(self, view: QAbstractItemView, index: QModelIndex) -> None:
        self._item = (view, QPersistentModelIndex(index))
        view.selectionModel().currentChanged.connect(self._current_moved, Qt.ConnectionType.UniqueConnection)
