"""Work on a picture that runs beside the caption model: the object detector needs only the picture, and its
objects only to finish each description, so it runs on a thread of its own while the caption model encodes
and decodes. ONNX Runtime computes without Python's lock, so on two cores the graphs run at the same time
(docs/performance.md, "The detector beside the caption model"). The text reader was tried here too: nothing
gained that could be measured, and a folder's peak memory grew by 107 MiB."""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

# A folder describes up to four chunks at once (capdesk.folders.batch.chunks_at_once), each with its detector
# job beside it: so many threads that no chunk waits for another's.
WORKERS = 4


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="capdesk-beside")


def start(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` beside the caller; the future gives its result, or raises what it raised."""
    try:
        return _pool().submit(fn)
    except RuntimeError:  # the interpreter is shutting down (a watcher's last picture): no new threads
        return done(fn)


def done(fn: Callable[[], T]) -> Future[T]:
    """``fn`` run here and now, as a finished future."""
    f: Future[T] = Future()
    try:
        f.set_result(fn())
    except Exception as exc:  # given to whoever asks for the result, as the pool would
        f.set_exception(exc)
    return f
