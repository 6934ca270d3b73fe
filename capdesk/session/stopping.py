"""How a long run started from a command line stops: Ctrl-C in two stages (the first lets the picture
being described finish, the second stops at once), or a watcher's stop on SIGINT or SIGTERM.

Signal handlers can only be set from the main thread; the window's jobs stop through their own
cancel events instead.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def ctrl_c_in_two_stages(on_first: Callable[[], None]) -> Iterator[threading.Event]:
    """An event set by the first Ctrl-C (``on_first`` then says what happens now); a second Ctrl-C
    raises KeyboardInterrupt. The previous handler comes back when the block ends."""
    cancel = threading.Event()

    def on_sigint(signum, frame) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        on_first()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """``stop`` set by SIGINT or SIGTERM while the block runs; the previous handlers come back after."""
    # Both set explicitly: a process started with SIGINT ignored (nohup, '&' in a script, a service
    # manager) keeps ignoring it otherwise, and SIGTERM is what service managers and kill send.
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
