"""Watched folders for the session: new pictures there are captioned, their sidecars written (as
``capdesk watch`` does) and what became of them said. A part of ``Session`` kept in its own module."""

from __future__ import annotations

from pathlib import Path

from capdesk.describe.describer import Described
from capdesk.folders.reading import describe_paths
from capdesk.imageio import is_image_path
from capdesk.session import messages
from capdesk.session.picture import Kind, Picture, PictureStatus
from capdesk.speech import Priority


class Watching:
    """Mixed into ``Session``, whose settings, pictures, runner, writer and ways of speaking it uses."""

    def add_watch_folder(self, folder: Path) -> None:
        if str(folder) not in self.settings.watch_folders:
            self.settings.watch_folders.append(str(folder))
            self.settings.save()
        self.restart_watcher()
        self.say(messages.watching(str(folder)))

    def remove_watch_folders(self, folders: list[str]) -> None:
        """Stop watching ``folders`` and forget them in the settings; always says what became of it."""
        gone = [f for f in self.settings.watch_folders if f in folders]
        if not gone:
            self.say(messages.still_watching(self.settings.watch_folders))
            return
        self.settings.watch_folders = [f for f in self.settings.watch_folders if f not in gone]
        self.settings.save()
        self.restart_watcher()
        self.say(messages.stopped_watching(len(gone), gone, self.settings.watch_folders))

    def restart_watcher(self) -> None:
        from capdesk.folders.watch import FolderWatcher

        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        folders = [Path(f) for f in self.settings.watch_folders if Path(f).is_dir()]
        if folders:
            ready = lambda paths: self.runner.post(lambda: self._on_watched(list(paths)))  # noqa: E731
            self.watcher = FolderWatcher(folders, ready, writer=self.writer).start()

    def _on_watched(self, paths: list[Path]) -> None:
        for path in paths:
            if str(path) not in self.pictures and is_image_path(path):
                p = Picture(str(path), Path(path), source="watched")
                self.pictures[p.key] = p
                self.picture_added.emit(p)
        self._set_busy(+1)
        self.say(f"Captioning {messages.plural(len(paths), 'new picture')}…", Kind.STATUS)
        self.runner.run(self._watched_work, paths, self.settings.watch_write_sidecars,
                        on_done=self._on_watched_done, on_failed=self._on_watched_failed)

    def _watched_work(self, paths: list[Path], write: bool) -> list[tuple[str, Described, str]]:
        """(key, description, what became of its sidecars: written | kept | failed: why | "")."""
        from capdesk.folders.batch import write_described

        out = []
        for d in describe_paths(self.describer(), paths):
            outcome = ""
            if d.ok and write:  # the same write step as capdesk batch and capdesk watch
                row = write_described(d, self.writer)
                outcome = {"failed": f"failed: {row.error}", "kept": "kept"}.get(str(row.status), "written")
            out.append((str(d.path), d, outcome))
        return out

    def _on_watched_done(self, items: list[tuple[str, Described, str]]) -> None:
        self._set_busy(-1)
        said, failed = [], []
        for key, d, outcome in items:
            p = self.pictures.get(key)
            if p is None:
                continue
            p.described = d
            if not d.ok or outcome.startswith("failed"):
                p.status, p.error = PictureStatus.FAILED, d.error or outcome.removeprefix("failed: ")
                failed.append((p.name, p.error))
            else:
                # Its sidecars written (or a person's kept): the list says what is on disk, a review
                # flag included; described only, it says whether the description needs review.
                on_disk = self._sidecar_status(p.path) if outcome else None
                p.status = on_disk or (PictureStatus.NEEDS_REVIEW if d.review else PictureStatus.DESCRIBED)
                if outcome == "kept" and p.person_text is None:
                    self._read_person_words(p)  # a person's words were kept: they are what is said
                said.append((p.name, p.alt_text, p.reason))
            self.picture_changed.emit(p)
        text = messages.watched(said, failed, self._brief_if_empty(said[-1][1]) if said else False)
        if text:
            self._say_description(text, None, priority=Priority.NORMAL)

    def _on_watched_failed(self, msg: str) -> None:
        self._set_busy(-1)
        self.say(f"Captioning new pictures failed: {msg}")

