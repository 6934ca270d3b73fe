"""Reading many pictures from disk: the files a folder holds, and pictures decoded ahead of the model.

``expand_paths`` turns the paths a user named (files and folders) into picture files;
``load_in_batches`` decodes them in two threads while the model describes the chunk before; and
``describe_paths`` puts the two beside a ``Describer``: one ``Described`` per path, in order.

A folder may be one others can write (a team share, /tmp). A link found in it is followed only where
it stays inside the folders given: one leading elsewhere (``leak.png -> ~/private/bank.png``) is named
with its reason and never described, so the text read in a private picture is never written beside the
link. A file named itself is the user's choice and is opened as given. The listing's verdict is made
again on the descriptor the picture is decoded from (``capdesk.imageio.FoundPath``), so a file swapped
for a link after the listing is refused too.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

from capdesk.describe.describer import Described, Describer
from capdesk.imageio import OUTSIDE, FoundPath, ImageError, inside, is_image_path, roots_of


def expand_paths(paths: Iterable[str | os.PathLike[str]], recursive: bool = False) -> Iterator[tuple[str, str | None]]:
    """Each file named, and the images inside each folder named; (path, error or None). A picture found in
    a folder comes as a ``FoundPath`` carrying the folders named; one that is a link leading outside them
    comes with its error instead (see the module's notes)."""
    named = [(raw, os.path.isdir(raw)) for raw in paths]
    roots = tuple(dict.fromkeys(os.path.realpath(raw) for raw, folder in named if folder))
    for raw, folder in named:
        p = Path(raw)
        given = roots_of(raw)  # a picture handed on by a folder watcher: bound to the folders watched
        if given is not None and not folder:
            yield _found(str(p), given)
        elif folder:
            found: list[str] = []
            errors: list[OSError] = []
            # os.walk with followlinks=False: a symlink loop can never trap the walk.
            for root, dirs, files in os.walk(p, onerror=errors.append):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
                found.extend(os.path.join(root, f) for f in files
                             if not f.startswith(".") and is_image_path(f))
            for err in errors:
                yield str(err.filename), f"cannot list folder ({err.strerror or err})"
            yield from (_found(f, given or roots) for f in sorted(found))
        else:
            yield str(p), None


def _found(path: str, roots: tuple[str, ...]) -> tuple[str, str | None]:
    """(the picture, None), or (it, why) when it is a link leading outside ``roots``."""
    if os.path.islink(path) and not inside(os.path.realpath(path), roots):
        return path, OUTSIDE
    return FoundPath(path, roots), None


def load_in_batches(paths: Iterable[str | os.PathLike[str]], load: Callable[[str], Any], batch_size: int
                    ) -> Iterator[list[tuple[str, Any, str | None]]]:
    """Chunks of (path, load(path), None) or (path, None, reason), decoded ahead in two threads
    while the caller runs the model; a file that cannot be read never stops the others.

    At most two chunks are decoded ahead of the caller: a 1,000-photo batch holds as many decoded
    pictures in memory as an 8-photo one, however slow the model is beside the decoding."""
    # A found picture keeps the folders it must stay inside (``FoundPath``), checked as it is opened.
    paths = [p if isinstance(p, FoundPath) else _as_found(p) for p in paths]

    def safe(p: str):
        try:
            return load(p), None
        except ImageError as exc:
            return None, exc.reason
        except Exception as exc:  # a decoder bug in Pillow must not end the batch
            return None, f"cannot read image ({type(exc).__name__}: {exc})"

    ahead = 2 * max(1, batch_size)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending: deque = deque()
        upcoming = iter(paths)
        for p in islice(upcoming, ahead):
            pending.append((p, pool.submit(safe, p)))
        chunk: list[tuple[str, Any, str | None]] = []
        while pending:
            p, fut = pending.popleft()
            item, err = fut.result()
            nxt = next(upcoming, None)
            if nxt is not None:
                pending.append((nxt, pool.submit(safe, nxt)))
            chunk.append((p, item, err))
            if len(chunk) >= batch_size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def _as_found(p: str | os.PathLike[str]) -> str:
    roots = roots_of(p)
    return FoundPath(p, roots) if roots is not None else os.fspath(p)


def describe_paths(describer: Describer, paths: Iterable[str | os.PathLike[str]], beam: int | None = None,
                   batch_size: int = 8, overlap: int = 1) -> Iterator[Described]:
    """One ``Described`` per path, in order; a bad file gets its error and the rest go on.

    ``overlap``: how many chunks are described at once. One chunk keeps a core idle for much of its time
    (the beam search runs on one thread, the text finder and the detector wait their turn), so a folder
    describes two at once, in threads: each chunk is described exactly as it would be alone (the same
    pictures together, the same graphs; ONNX Runtime's results do not depend on what else runs), so its
    alt text is the same byte for byte (``tests/folders/test_batch_overlap.py``)."""
    chunks = load_in_batches(paths, describer.load_picture, batch_size)
    if overlap <= 1:
        for chunk in chunks:
            yield from describer.describe_chunk(chunk, beam)
        return
    with ThreadPoolExecutor(max_workers=overlap, thread_name_prefix="capdesk-describe") as pool:
        pending: deque = deque()
        try:
            for chunk in chunks:
                pending.append(pool.submit(describer.describe_chunk, chunk, beam))
                if len(pending) >= overlap:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
        finally:  # stopped early (the batch cancelled): what has not started is not described
            for fut in pending:
                fut.cancel()
