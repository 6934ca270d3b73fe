"""Watching folders: new or changed images are handed on once completely written.

watchdog reports file events; a worker thread waits until a file's size and modification
time have stopped changing and the image decodes, then passes a batch of ready images to
the handler. Sidecars and CapDesk's temp files are not images, so its own writes never
come back as work. Each (path, size, mtime) is handed on once, so bursts and repeated
events give no duplicates. Renamed images take their CapDesk sidecars with them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from capdesk.imageio import ImageError, is_image_path, load_image
from capdesk.sidecars.writer import SidecarWriter
from capdesk.status import Ownership

log = logging.getLogger("capdesk.folders.watch")


def _wanted(path: str) -> bool:
    p = Path(path)
    return is_image_path(p) and not p.name.startswith(".")


@dataclass
class _Pending:
    sig: tuple[int, int]
    changed: float  # monotonic time of the last change seen


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
        self.on_images = on_images
        self.recursive = recursive
        self.settle, self.poll, self.give_up = settle, poll, give_up
        self.writer = writer
        self.on_waiting = on_waiting
        self._pending: dict[Path, _Pending] = {}
        self._done: dict[Path, tuple[int, int]] = {}
        self._in_flight = 0  # taken from _pending, handler not yet returned
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
        if dest is None or not _wanted(str(dest)):
            return
        if was_done is not None and self.writer is not None:
            self._move_sidecars(src, dest)
        self._touch(dest)

    def _move_sidecars(self, src: Path, dest: Path) -> None:
        """Rename CapDesk's own, unedited sidecars along with their image."""
        w = self.writer
        for old, new in zip(w.paths(src).values(), w.paths(dest).values()):
            if w.ownership(old) is Ownership.OURS and not new.exists():
                try:
                    old.rename(new)
                    w.ledger.move(old, new)
                except OSError as exc:
                    log.warning("%s: could not rename sidecar (%s)", old, exc)

    # -- worker ----------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            ready = self._collect()
            if ready:
                try:
                    self.on_images(ready)
                except Exception as exc:  # a failing handler must not stop the watching
                    log.error("captioning failed: %s", exc)
                finally:
                    with self._lock:
                        self._in_flight -= len(ready)

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
                load_image(p)
            except ImageError as exc:
                if now - pend.changed < self.give_up:
                    if self.on_waiting:
                        self.on_waiting(p, exc.reason)
                    continue  # still being written, most likely: look again later
            with self._lock:
                if self._pending.get(p) is pend:
                    del self._pending[p]
                    self._done[p] = sig
                    self._in_flight += 1  # counted before it leaves _pending's count, so pending() never dips early
                    ready.append(p)
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
