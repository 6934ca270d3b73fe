"""Where the session's work runs: a ``Runner`` does slow work off the interface's thread and brings
its results back to that thread. The window supplies one made of Qt's thread pool and signals
(``capdesk.gui.qtutil.QtRunner``); ``ThreadRunner`` is the same contract without Qt, for the
session's tests and for any other front end: plain threads, and a queue that the owning thread
drains with ``pump``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from capdesk.status import failure_line

BACKGROUND_NICE = 10


class Runner(Protocol):
    def run(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
            on_failed: Callable[[str], None] | None = None) -> None:
        """Call ``fn(*args)`` off the interface thread; ``on_done(result)`` or ``on_failed(message)`` on it."""

    def post(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` on the interface thread (safe from any thread)."""


_lowered = threading.local()


def background_priority() -> None:
    """Let this worker thread (and the threads it starts, such as ONNX Runtime's) yield the CPU to
    the interface and to the screen reader: on a busy two-core machine Orca otherwise speaks late."""
    if getattr(_lowered, "done", False) or not sys.platform.startswith("linux"):
        return
    _lowered.done = True
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


class ThreadRunner:
    """Each job in a thread of its own; completions wait in a queue until ``pump`` runs them."""

    def __init__(self) -> None:
        self._calls: queue.Queue[Callable[[], None]] = queue.Queue()
        self._owner = threading.get_ident()

    def run(self, fn, *args, on_done=None, on_failed=None) -> None:
        def work() -> None:
            background_priority()
            try:
                result = fn(*args)
            except Exception as exc:  # reported to the caller, never lost in a thread
                msg = failure_line(exc)
                if on_failed:
                    self.post(lambda: on_failed(msg))
            else:
                if on_done:
                    self.post(lambda: on_done(result))

        threading.Thread(target=work, name="capdesk-job", daemon=True).start()

    def post(self, fn) -> None:
        self._calls.put(fn)

    def pump(self, until: Callable[[], bool] = lambda: False, timeout: float = 60.0) -> bool:
        """Run posted calls on this thread until ``until()`` holds (True) or ``timeout`` passes (False)."""
        end = time.monotonic() + timeout
        while True:
            while True:
                try:
                    fn = self._calls.get_nowait()
                except queue.Empty:
                    break
                fn()
            if until():
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            try:
                fn = self._calls.get(timeout=min(left, 0.05))
            except queue.Empty:
                continue
            fn()
