"""Small Qt helpers: image conversion, background work, screen-reader announcements."""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QAccessible, QImage, QPixmap
from PySide6.QtWidgets import QWidget


def pil_to_qpixmap(img: Image.Image) -> QPixmap:
    rgb = img.convert("RGB")
    data = rgb.tobytes()
    qimg = QImage(data, rgb.width, rgb.height, rgb.width * 3, QImage.Format.Format_RGB888)
    return QPixmap.fromImage(qimg.copy())  # copy: QImage does not own ``data``


def qimage_to_pil(qimg: QImage) -> Image.Image:
    q = qimg.convertToFormat(QImage.Format.Format_RGBA8888)
    ptr = q.constBits()
    raw = bytes(ptr)[: q.sizeInBytes()]
    img = Image.frombuffer("RGBA", (q.width(), q.height()), raw, "raw", "RGBA", q.bytesPerLine(), 1)
    background = Image.new("RGB", img.size, (255, 255, 255))
    background.paste(img, mask=img.getchannel("A"))
    return background


class _Signals(QObject):
    done = Signal(object)
    failed = Signal(str)
    progress = Signal(object)


class Job(QRunnable):
    """Run ``fn`` on the thread pool; ``done``/``failed`` arrive on the UI thread."""

    def __init__(self, fn: Callable, *args, **kw) -> None:
        super().__init__()
        self.fn, self.args, self.kw = fn, args, kw
        self.signals = _Signals()

    def run(self) -> None:
        try:
            result = self.fn(*self.args, **self.kw)
        except Exception as exc:  # shown to the user, never a crash of the window
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}".splitlines()[0])
        else:
            self.signals.done.emit(result)


def submit(fn: Callable, *args, on_done=None, on_failed=None, **kw) -> Job:
    job = Job(fn, *args, **kw)
    if on_done:
        job.signals.done.connect(on_done)
    if on_failed:
        job.signals.failed.connect(on_failed)
    QThreadPool.globalInstance().start(job)
    return job


def screen_reader_active() -> bool:
    return bool(QAccessible.isActive())


def announce(widget: QWidget, text: str) -> bool:
    """Send ``text`` to a running screen reader (Qt 6.8+); False when it could not be sent."""
    try:
        from PySide6.QtGui import QAccessibleAnnouncementEvent
    except ImportError:
        return False
    ev = QAccessibleAnnouncementEvent(widget, text)
    QAccessible.updateAccessibility(ev)
    return True
