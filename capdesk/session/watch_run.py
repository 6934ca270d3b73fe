"""Folders watched as ``capdesk watch`` watches them: each new or changed picture, once completely
written, described and its sidecars written; each row handed on (and its alt text spoken, when a
speaker is given) until SIGINT or SIGTERM, or until nobody reads the rows any more. Nothing here
prints. (The window's watched folders are ``watching.Watching``.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.folders.batch import Row, run_batch
from capdesk.session.stopping import stop_on_signals
from capdesk.status import RowStatus

if TYPE_CHECKING:
    from capdesk.describe.describer import Describer
    from capdesk.sidecars.writer import SidecarWriter
    from capdesk.speech import Speaker

WAIT_S = 0.5  # how often the main thread looks whether to stop


class WatchRun:
    """``on_row`` gets each picture's row; ``on_waiting(path, reason, give_up_s)`` is told once of each
    picture waited for (still being written, unreadable) until it is handled."""

    def __init__(self, folders: list[Path], describer: Describer, writer: SidecarWriter, recursive: bool,
                 on_row: Callable[[Row], None], on_waiting: Callable[[Path, str, float], None],
                 speaker: Speaker | None = None) -> None:
        self.folders, self.describer, self.writer, self.recursive = folders, describer, writer, recursive
        self.on_row, self.on_waiting, self.speaker = on_row, on_waiting, speaker
        self.stop = threading.Event()
        self.reader_gone = threading.Event()  # the rows' reader went away (capdesk watch ... | head -1)
        self._waiting: set[Path] = set()
        self._give_up = 0.0

    def run(self, ready: Callable[[], None]) -> bool:
        """Watch until told to stop; ``ready()`` once a new picture is seen from then on. True when it
        stopped because nobody reads the rows (BrokenPipeError from ``on_row``). The speaker is closed."""
        from capdesk.folders.watch import FolderWatcher

        with stop_on_signals(self.stop):
            watcher = FolderWatcher(self.folders, self._handle, recursive=self.recursive, writer=self.writer,
                                    on_waiting=self._waiting_for)
            self._give_up = watcher.give_up
            watcher.start()
            try:
                ready()
                while not self.stop.wait(WAIT_S):
                    pass
            except KeyboardInterrupt:
                pass
            finally:
                watcher.stop()
                if self.speaker:
                    self.speaker.close()
        return self.reader_gone.is_set()

    def _waiting_for(self, path: Path, reason: str) -> None:
        if path not in self._waiting:
            self._waiting.add(path)
            self.on_waiting(path, reason, self._give_up)

    def _handle(self, paths: list) -> None:
        self._waiting.difference_update(paths)
        try:
            for row in run_batch(paths, self.describer, self.writer).rows:
                self.on_row(row)
                if self.speaker and row.status == RowStatus.CAPTIONED:
                    from capdesk.speech import Priority

                    self.speaker.say(row.alt_text, Priority.NORMAL)  # new pictures wait their turn
        except BrokenPipeError:
            self.reader_gone.set()
            self.stop.set()
