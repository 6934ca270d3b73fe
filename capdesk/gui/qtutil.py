"""Small Qt helpers: image conversion, text shown as it is, and the session's runner made of Qt's thread pool.

Text from outside CapDesk (a page's words, file names, captions, alt texts, a model's manifest) is shown as
plain text everywhere in the window. Qt takes a label's, tooltip's or message box's text for HTML whenever
it looks like HTML (AutoText): a page holding <h1 style="color:red">PAY NOW</h1> showed a red heading,
and <img src="/dev/zero"> made the window read that file until it ran out of memory (a FIFO: for ever).
A label is set to PlainText (``plain_label``, ``make_plain``); a tooltip or a message box, which have no
such setting, gets the text escaped into HTML that shows exactly the text (``plain_tip``, ``plain_box``)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from functools import partial

from PIL import Image
from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal, Slot
from PySide6.QtGui import QAccessible, QImage, QPixmap
from PySide6.QtGui import Qt as GuiQt  # Qt's namespace with the text functions QtGui adds to it
from PySide6.QtWidgets import QLabel, QWidget

from capdesk.session.tasks import background_priority
from capdesk.status import failure_line


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


def make_plain(label: QLabel) -> QLabel:
    """``label`` shows its text as it is, never as HTML (see the module's notes)."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel showing ``text`` as it is, whatever the text looks like."""
    label = make_plain(QLabel(parent))
    label.setText(text)
    return label


def plain_tip(text: str) -> str:
    """Tooltip text that shows ``text`` as it is: escaped into HTML, since Qt reads a tooltip as HTML
    whenever it looks like HTML and offers no plain setting. Empty stays empty (no tooltip)."""
    return GuiQt.convertFromPlainText(text, Qt.WhiteSpaceMode.WhiteSpaceNormal) if text else ""


def plain_box(text: str) -> str:
    """A QMessageBox's text that shows ``text`` as it is (the static QMessageBox calls read it as HTML
    whenever it looks like HTML): escaped, as for a tooltip."""
    return plain_tip(text)


class _Poster(QObject):
    """Lives on the UI thread, so a call emitted from any thread runs there."""

    call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.call.connect(self._run)

    @Slot(object)
    def _run(self, fn) -> None:
        fn()


_POSTER: _Poster | None = None
_COLLECTOR: _Collector | None = None
COLLECT_EVERY_MS = 500


class _Collector(QObject):
    """Python's cycle collector runs on whatever thread happens to cross its threshold. On a worker it
    destroyed a closed dialog's widgets, caught in reference cycles, off the interface thread, and the process
    died with SIGSEGV (a test run: "Garbage-collecting" while a worker read a model's manifest). Once the
    window has a runner, automatic collection is off and the interface thread collects, on a timer, what
    the thresholds would have collected."""

    def __init__(self) -> None:
        super().__init__()
        self._thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(COLLECT_EVERY_MS)

    def collect_due(self) -> None:
        """The generation the automatic collector would have collected by now, collected on this thread."""
        counts = gc.get_count()
        if counts[0] > self._thresholds[0]:  # as CPython decides: the oldest generation past its threshold
            gc.collect(max(g for g in range(3) if counts[g] > self._thresholds[g]))


def collect_on_this_thread() -> None:
    """What automatic collection would have collected by now (nothing where it is still on): for a program
    that has made a runner and then runs without the interface's event loop (a test suite)."""
    if _COLLECTOR is not None:
        _COLLECTOR.collect_due()


def _collector() -> _Collector:
    global _COLLECTOR
    if _COLLECTOR is None:
        _COLLECTOR = _Collector()
    return _COLLECTOR


def _poster() -> _Poster:
    """The one poster of the process, made on the UI thread by the first runner and never destroyed: a
    poster that belonged to a runner could be destroyed by a worker thread dropping the last reference to
    its owner (a pane whose window had closed) while the UI thread delivered a call to it."""
    global _POSTER
    if _POSTER is None:
        _POSTER = _Poster()
    return _POSTER


def _deliver(task: list, ok: bool) -> None:
    """On the UI thread: the job's callback with its result, every reference the job held let go here."""
    _fn, _args, on_done, on_failed, value = task
    task.clear()  # its locals, the last holders now, end with this call, on this thread
    callback = on_done if ok else on_failed
    if callback:
        callback(value)


class QtRunner:
    """``capdesk.session.tasks.Runner`` for the window: work on Qt's thread pool, results on the UI thread.

    A worker never lets go of the last reference to what the job was given or made (its function, the
    callbacks and the objects behind them, the result): they travel in one list that the UI thread empties.
    Python objects that wrap Qt objects must die on the UI thread; a window's widget freed by a worker
    thread crashes the process."""

    def __init__(self) -> None:
        self._poster = _poster()
        _collector()  # from the first runner on, no worker collects the interface's garbage

    def run(self, fn: Callable, *args, on_done=None, on_failed=None) -> None:
        task: list = [fn, args, on_done, on_failed]
        del fn, args, on_done, on_failed
        poster = self._poster

        def work() -> None:
            background_priority()
            try:
                task.append(task[0](*task[1]))
                ok = True
            except Exception as exc:  # shown to the user, never a crash of the window
                task.append(failure_line(exc))
                ok = False
            poster.call.emit(partial(_deliver, task, ok))

        QThreadPool.globalInstance().start(work)

    def post(self, fn: Callable[[], None]) -> None:
        self._poster.call.emit(fn)


def screen_reader_active() -> bool:
    return bool(QAccessible.isActive())
