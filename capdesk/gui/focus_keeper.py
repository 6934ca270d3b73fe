"""Where the keyboard focus goes back to after a dialog or a menu: where the person was in the window."""

from __future__ import annotations

import contextlib
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu, QMenuBar, QWidget

SETTLE_S = 5.0  # how long focus is asked back after a dialog closes, on a loaded machine
RETRY_MS = 150


def _is_menu(w: QWidget | None) -> bool:
    return isinstance(w, (QMenuBar, QMenu))


class FocusKeeper(QObject):
    """Remembers the last control the person used in the window (never the menu bar, which only
    borrows the focus) and gives the focus back to it.

    Seen under Orca: after F10 and Escape the menu bar kept Qt's focus, so the next dialog handed the
    focus back to the menu bar, and Alt+A opened the File menu instead of the Alt text box. And with
    some window managers (or none), closing a modal dialog leaves no window active until the X
    server has destroyed the dialog's window, which comes late on a loaded machine: so the focus is
    asked back until the window holds it, for a few seconds, counted from when the dialog closed."""

    def __init__(self, window: QMainWindow, fallback: QWidget) -> None:
        super().__init__(window)
        self.window, self.fallback = window, fallback
        self.last: QWidget | None = None
        self._until = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(RETRY_MS)
        self._timer.timeout.connect(self._retry)
        QApplication.instance().focusChanged.connect(self._moved)
        for menu in window.menuBar().findChildren(QMenu):
            menu.aboutToHide.connect(lambda: QTimer.singleShot(0, self._after_menu))

    def _moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        with contextlib.suppress(RuntimeError):  # a widget being deleted
            if new is not None and not _is_menu(new) and new.window() is self.window:
                self.last = new

    def target(self) -> QWidget:
        w = self.last
        with contextlib.suppress(RuntimeError):
            if w is not None and w.window() is self.window and w.isVisible() and w.isEnabled():
                return w
        return self.fallback

    def settled(self) -> bool:
        focus = QApplication.focusWidget()
        return (self.window.isActiveWindow() and focus is not None and not _is_menu(focus)
                and focus.window() is self.window)

    def give_back(self) -> None:
        """Now, and again until the window holds the focus (or SETTLE_S have passed)."""
        self._until = time.monotonic() + SETTLE_S
        self.ask_once()
        self._timer.start()

    def _retry(self) -> None:
        if QApplication.activeModalWidget() is not None or QApplication.activePopupWidget() is not None:
            self._timer.stop()  # another dialog or a menu is open: it has the focus on purpose
            return
        if self.settled() or time.monotonic() > self._until:
            self._timer.stop()
            return
        self.ask_once()

    def ask_once(self) -> None:
        """Activate the window and put the focus on the control the person left (the list at first)."""
        if QApplication.activeModalWidget() is not None:
            return
        with contextlib.suppress(RuntimeError):
            self.window.raise_()
            self.window.activateWindow()
            self.target().setFocus(Qt.FocusReason.OtherFocusReason)

    def _after_menu(self) -> None:
        """A menu closed with Escape (not by choosing a dialog): back to the control the person left."""
        if QApplication.activePopupWidget() is not None or QApplication.activeModalWidget() is not None:
            return
        focus = QApplication.focusWidget()
        if focus is None or _is_menu(focus):
            self.ask_once()



class RepostedAltGuard(QObject):
    """Keeps a key chord that Orca saw from reaching Qt's menu bar a second time.

    With a screen reader, Qt's accessibility bridge holds every key press until the screen reader has
    seen it, then posts it again; Qt then sends a second ShortcutOverride for the Alt key, after the
    Alt+letter shortcut has already run. Qt's menu bar takes that second one as Alt pressed alone and
    opens: Alt+A (the Alt text box) ended in the File menu, and Alt alone opened and closed the menu bar
    at once. Each chord begins with a key event sent to the window (QWindow): spontaneous when it comes
    from the X server, not when it is posted again. The Alt ShortcutOverride of a posted-again chord
    is dropped; the key itself still reaches its widget. And an Alt press posted again to an open menu
    is dropped: Alt+F's shortcut has opened File by then, and a menu closes on Alt."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._reposted = False

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 (Qt's name)
        t = ev.type()
        if t not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            return False
        if isinstance(obj, QWindow):
            self._reposted = not ev.spontaneous()
        alt = ev.key() in (Qt.Key.Key_Alt, Qt.Key.Key_AltGr)
        if t == QEvent.Type.KeyPress and alt and isinstance(obj, QMenu) and not ev.spontaneous():
            # Alt+F opened File through its shortcut before the Alt press came back: the menu would close
            # on that Alt (File opened and shut at once).
            return True
        return t == QEvent.Type.ShortcutOverride and self._reposted and alt
