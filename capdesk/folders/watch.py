"""Watching folders: new or changed images are handed on once completely written.

watchdog reports file events; a worker thread waits until a file's size and modification
time have stopped changing and the image decodes, then passes a batch of ready images to
the handler. Sidecars and CapDesk's temp files are not images, so its own writes never
come back as work. Each (path, size, mtime) is handed on once, so bursts and repeated
events give no duplicates. Renamed images take their CapDesk sidecars with them.

A picture renamed while it is being captioned has its sidecars written under the name it had
when it was handed on. So a rename of a picture already handed on is remembered (``_Rename``):
whatever CapDesk writes under the old name afterwards (at once by a handler that writes before it
returns, as ``capdesk watch`` does; later by one that hands the work on, as the window does) is
moved to the new name, or removed when the new name has a sidecar already (a person's file there
is never touched). The new name is not captioned again when the batch that held the old one
described it: no orphans, and one caption.

A watched folder may be one others can write. Each picture is handed on as a ``WatchedPath``, which
carries the folders watched: a link leading outside them is refused as the picture is opened (here,
and again when the handler reads it), so a link planted there never gets a private picture described.
It is handed on at once, for its row to say so, instead of being waited for.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from capdesk.describe.alttext import AltText
from capdesk.imageio import OUTSIDE, ImageError, is_image_path, load_image
from capdesk.sidecars.ledger import LedgerError
from capdesk.sidecars.writer import SidecarWriter, image_signature
from capdesk.status import Ownership

log = logging.getLogger("capdesk.folders.watch")


def _wanted(path: str) -> bool:
    p = Path(path)
    return is_image_path(p) and not p.name.startswith(".")


@dataclass
class _Pending:
    sig: tuple[int, int]
    changed: float  # monotonic time of the last change seen


@dataclass
class _Rename:
    """A picture renamed after it was handed on: sidecars written under ``old`` belong to ``new``."""

    old: Path
    new: Path
    sig: tuple[int, int]  # the picture as it was handed on
    until: float  # monotonic time after which a sidecar appearing under ``old`` is no longer looked for
    in_flight: bool  # renamed while its batch was in the handler
    sidecars: list[tuple[Path, Path]]  # (under the old name, under the new), each format


class WatchedPath(type(Path())):  # type: ignore[misc]  (Path itself cannot be subclassed before 3.12)
    """A picture seen in a watched folder, carrying the folders watched (``roots``, resolved): readers
    that honour it (``capdesk.folders.reading``, ``capdesk.imageio.load_image``) open it only there."""

    roots: tuple[str, ...] = ()

    @classmethod
    def of(cls, path: Path, roots: tuple[str, ...]) -> WatchedPath:
        p = cls(path)
        p.roots = roots
        return p


def _sig_text(sig: tuple[int, int]) -> str:
    return f"{sig[0]}:{sig[1]}"  # as ``image_signature`` writes it


class FolderWatcher:
    def __init__(
        self,
        folders: list[Path],
        on_images: Callable[[list[Path]], None],
        recursive: bool = True,
        settle: float = 0.6,
        poll: float = 0.2,
        give_up: float = 60.0,
        writer: SidecarWriter | None = None,
        on_waiting: Callable[[Path, str], None] | None = None,
    ) -> None:
        self.folders = [Path(f) for f in folders]
        for f in self.folders:
            if not f.is_dir():
                raise NotADirectoryError(f"{f}: not a folder")
        self._roots = tuple(dict.fromkeys(os.path.realpath(f) for f in self.folders))
        self.on_images = on_images
        self.recursive = recursive
        self.settle, self.poll, self.give_up = settle, poll, give_up
        self.writer = writer
        self.on_waiting = on_waiting
        self._pending: dict[Path, _Pending] = {}
        self._done: dict[Path, tuple[int, int]] = {}
        self._in_flight = 0  # taken from _pending, handler not yet returned
        self._handling: set[Path] = set()  # the paths of the batch in the handler now
        self._renames: list[_Rename] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._observer = Observer()
        self._worker = threading.Thread(target=self._loop, name="capdesk-watch", daemon=True)

    # -- watchdog side ---------------------------------------------------------------------
    def _handler(self) -> FileSystemEventHandler:
        watcher = self

        class H(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory:
                    return
                kind = event.event_type
                src = str(event.src_path)
                if kind in ("created", "modified", "closed") and _wanted(src):
                    watcher._touch(Path(src))
                elif kind == "deleted":
                    watcher._forget(Path(src))
                elif kind == "moved":
                    dest = str(getattr(event, "dest_path", ""))
                    watcher._moved(Path(src), Path(dest) if dest else None)

        return H()

    def _touch(self, p: Path) -> None:
        try:
            st = p.stat()
        except OSError:
            return
        sig = (st.st_size, st.st_mtime_ns)
        with self._lock:
            if self._done.get(p) == sig:
                return
            cur = self._pending.get(p)
            if cur is None or cur.sig != sig:
                self._pending[p] = _Pending(sig, time.monotonic())

    def _forget(self, p: Path) -> None:
        with self._lock:
            self._pending.pop(p, None)
            self._done.pop(p, None)

    def _moved(self, src: Path, dest: Path | None) -> None:
        with self._lock:
            was_done = self._done.pop(src, None)
            self._pending.pop(src, None)
            in_flight = src in self._handling
        if dest is None or not _wanted(str(dest)):
            return
        if was_done is not None and self.writer is not None:
            pairs = list(zip(self.writer.paths(src).values(), self.writer.paths(dest).values()))
            rename = _Rename(src, dest, was_done, time.monotonic() + self.give_up, in_flight, pairs)
            self._move_sidecars(rename)
            with self._lock:
                self._renames.append(rename)
            if in_flight:
                return  # its batch is being described: whether the new name needs it too is told after
        self._touch(dest)

    def _move_sidecars(self, r: _Rename) -> None:
        """Rename CapDesk's own, unedited sidecars under ``r.old`` to ``r.new``; where the new name has a
        sidecar already (CapDesk's or a person's, which is never touched), the old name's go."""
        w = self.writer
        assert w is not None
        if os.path.lexists(r.old):  # a picture by the old name again: its sidecars are its own
            return
        for old, new in r.sidecars:
            if not os.path.lexists(old):  # the usual case, and a cheap one: nothing written there
                continue
            try:
                if w.ownership(old) is not Ownership.OURS:
                    continue
                if os.path.lexists(new):
                    # The same picture's words written twice, or a person's file in the place: that one
                    # stays as it is, and CapDesk's own copy under a name no picture has goes.
                    os.unlink(old)
                    w.ledger.forget(old)
                    continue
                os.link(old, new)  # never over a file that appeared meanwhile
                os.unlink(old)
                w.ledger.move(old, new)
                self._same_picture(new, r.new, r.sig)
            except (OSError, LedgerError) as exc:
                log.warning("%s: could not move sidecar to %s (%s)", old, new.name, exc)

    def _same_picture(self, sidecar: Path, image: Path, sig: tuple[int, int]) -> None:
        """A sidecar written while its picture was being renamed was recorded for no picture (its old
        name was gone); when the picture is still as it was handed on, it is recorded for it now."""
        w = self.writer
        assert w is not None
        now = image_signature(image)
        rec = w.ledger.get(sidecar)
        if rec is None or rec["image"] == now or now != _sig_text(sig):
            return
        w.ledger.put(sidecar, rec["sha256"], now, image,
                     AltText(rec["alt_text"], rec["source"], rec["model"] or "", rec["confidence"]),
                     rec.get("review"), rec.get("reason"))

    def _follow_renames(self, handled: Collection[Path] = ()) -> None:
        """Move what was written under a renamed picture's old name since; for the batch ``handled``
        just returned, have the new name captioned only when the old one was not."""
        if self.writer is None:
            return
        now = time.monotonic()
        with self._lock:
            renames = list(self._renames)
        for r in renames:
            self._move_sidecars(r)
            if r.in_flight and r.old in handled:
                r.in_flight = False
                if self.writer.is_current(r.new):
                    with self._lock:
                        self._done[r.new] = r.sig
                else:
                    self._touch(r.new)  # the batch could not describe it under the old name
        with self._lock:
            self._renames = [r for r in self._renames if r.until > now or r.in_flight]

    # -- worker ----------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            if self._renames:
                self._follow_renames()
            ready = self._collect()
            if ready:
                try:
                    self.on_images(ready)
                except Exception as exc:  # a failing handler must not stop the watching
                    log.error("captioning failed: %s", exc)
                finally:
                    with contextlib.suppress(Exception):  # a rename's bookkeeping never stops the watching
                        self._follow_renames(ready)
                    with self._lock:
                        self._in_flight -= len(ready)
                        self._handling.difference_update(ready)

    def _collect(self) -> list[Path]:
        now = time.monotonic()
        with self._lock:
            items = list(self._pending.items())
        ready = []
        for p, pend in items:
            try:
                st = p.stat()
            except OSError:
                self._forget(p)
                continue
            sig = (st.st_size, st.st_mtime_ns)
            if sig != pend.sig:
                with self._lock:
                    self._pending[p] = _Pending(sig, now)
                continue
            if now - pend.changed < self.settle:
                continue
            try:
                load_image(p, within=self._roots)
            except ImageError as exc:
                # A link leading out never becomes readable by waiting: its row says why at once.
                if exc.reason != OUTSIDE and now - pend.changed < self.give_up:
                    if self.on_waiting:
                        self.on_waiting(p, exc.reason)
                    continue  # still being written, most likely: look again later
            with self._lock:
                if self._pending.get(p) is pend:
                    del self._pending[p]
                    self._done[p] = sig
                    self._in_flight += 1  # counted before it leaves _pending's count, so pending() never dips early
                    self._handling.add(p)
                    ready.append(WatchedPath.of(p, self._roots))
        return sorted(ready)

    # -- control ---------------------------------------------------------------------------
    def start(self) -> FolderWatcher:
        handler = self._handler()
        for f in self.folders:
            self._observer.schedule(handler, str(f), recursive=self.recursive)
        self._observer.start()
        self._worker.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._worker.join(timeout=30)

    def pending(self) -> int:
        """Images seen but not yet through the handler: waiting to settle, or being captioned."""
        with self._lock:
            return len(self._pending) + self._in_flight

    def __enter__(self) -> FolderWatcher:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
