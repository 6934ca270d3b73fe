"""Where the main window opens: within the screen's available area, at the size it was last closed at
or the default, whichever fits.

A window wider or taller than the screen puts its right and bottom controls (the Copy button, the
details, the status bar) out of reach for someone using a magnifier or the keyboard alone; Qt does not
shrink a window to its screen by itself."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QScreen

DEFAULT = QSize(1200, 760)
# Room left for the window manager's frame and title bar, which ``resize`` does not count.
FRAME = QSize(16, 48)


def fitted(wanted: QSize, minimum: QSize, available: QRect) -> QRect:
    """The geometry (inside the frame) for a window that would like ``wanted`` and needs ``minimum``,
    centred in ``available``: never larger than the available area less the frame, never smaller than the
    window's minimum."""
    w = max(minimum.width(), min(wanted.width(), available.width() - FRAME.width()))
    h = max(minimum.height(), min(wanted.height(), available.height() - FRAME.height()))
    x = available.x() + max(0, (available.width() - w) // 2)
    y = available.y() + max(0, (available.height() - h - FRAME.height()) // 2)
    return QRect(x, y, w, h)


def too_small(minimum: QSize, available: QRect) -> bool:
    """Whether a window that needs ``minimum`` cannot fit ``available`` with its frame (a 1024x768 screen at
    200% scaling gives 512x384)."""
    return minimum.width() > available.width() - FRAME.width() or \
        minimum.height() > available.height() - FRAME.height()


def place(window, remembered: list[int], screen: QScreen | None) -> None:
    """Size and place ``window`` for ``screen`` (its available area: the screen less panels and docks)."""
    wanted = QSize(*remembered) if len(remembered) == 2 else DEFAULT
    if screen is None:
        window.resize(wanted)
        return
    window.setGeometry(fitted(wanted, window.minimumSizeHint(), screen.availableGeometry()))


def remembered_size(window) -> list[int]:
    """The size to keep for next time: the window's own size, not a maximised or full-screen one."""
    size = window.normalGeometry().size() if (window.isMaximized() or window.isFullScreen()) else window.size()
    return [size.width(), size.height()]
