"""The main window: images on the left, the picture and its description in the middle."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from capdesk.attention import overlay, strip
from capdesk.describe import Described, DescribeOptions, Describer
from capdesk.engine import expand_paths
from capdesk.imageio import ImageError, is_image_path, load_image
from capdesk.settings import Settings
from capdesk.sidecars import AltText, SidecarOptions, SidecarWriter

from .qtutil import announce, pil_to_qpixmap, qimage_to_pil, screen_reader_active, submit

ROLE_KEY = Qt.ItemDataRole.UserRole


@dataclass
class Entry:
    """One image in the list: a file, or an image that came from the clipboard."""

    key: str
    path: Path | None = None
    image: Image.Image | None = None  # held for clipboard images (no file)
    described: Described | None = None
    status: str = "none"  # none | generated | edited | needs review | error
    error: str = ""
    extra: dict = field(default_factory=dict)


class _Bridge(QObject):
    """Carries watcher events (from its thread) onto the UI thread."""

    images_ready = Signal(list)


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None, settings_problem: str | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.entries: dict[str, Entry] = {}
        self.current: Entry | None = None
        self.describer: Describer | None = None
        self.describer_error: str | None = None
        self._describer_lock = threading.Lock()
        self.watcher = None
        self.speaker = None
        self._bridge = _Bridge()
        self._bridge.images_ready.connect(self._on_watched_images)
        self._busy = 0
        self._clip_count = 0
        self.setWindowTitle("CapDesk")
        self.setAccessibleName("CapDesk main window")
        self.resize(1200, 760)
        self._build()
        self._build_menus()
        self._apply_settings()
        QGuiApplication.clipboard().dataChanged.connect(self._on_clipboard)
        if settings_problem:
            QTimer.singleShot(0, lambda: self.say_status(settings_problem, announce_it=True))

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        split = QSplitter(Qt.Orientation.Horizontal, self)
        left = QWidget()
        lv = QVBoxLayout(left)
        lbl = QLabel("&Images")
        self.list = QListWidget()
        self.list.setAccessibleName("Images")
        self.list.setAccessibleDescription("Images in the open folder with their alt-text status")
        lbl.setBuddy(self.list)
        self.list.currentItemChanged.connect(self._on_select)
        lv.addWidget(lbl)
        lv.addWidget(self.list)
        split.addWidget(left)

        mid = QWidget()
        mv = QVBoxLayout(mid)
        self.view = QLabel("Open a folder or an image (Ctrl+O)")
        self.view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view.setMinimumSize(320, 240)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.view.setAccessibleName("Picture")
        self.view.setAccessibleDescription("The selected picture; with a word selected, where the model looked")
        mv.addWidget(self.view, 3)
        wl = QLabel("&Words (select one to see where the model looked)")
        self.words = QListWidget()
        self.words.setFlow(QListWidget.Flow.LeftToRight)
        self.words.setWrapping(True)
        self.words.setMaximumHeight(70)
        self.words.setAccessibleName("Caption words")
        self.words.setAccessibleDescription("Select a word to show its attention map over the picture")
        wl.setBuddy(self.words)
        self.words.currentRowChanged.connect(self._on_word)
        mv.addWidget(wl)
        mv.addWidget(self.words)
        self.strip = QLabel()
        self.strip.setAccessibleName("Attention strip")
        self.strip.setAccessibleDescription("Each word of the caption with where the model looked for it")
        strip_area = QScrollArea()
        strip_area.setWidget(self.strip)
        strip_area.setWidgetResizable(True)
        strip_area.setMaximumHeight(150)
        strip_area.setAccessibleName("Attention strip")
        mv.addWidget(strip_area)
        self.info = QLabel("")
        self.info.setAccessibleName("Caption details")
        self.info.setWordWrap(True)
        mv.addWidget(self.info)
        al = QLabel("&Alt text (edit and save with Ctrl+S)")
        self.alt = QPlainTextEdit()
        self.alt.setAccessibleName("Alt text")
        self.alt.setAccessibleDescription("The description of the picture; edit it and save to write the sidecars")
        self.alt.setTabChangesFocus(True)
        self.alt.setMaximumHeight(110)
        al.setBuddy(self.alt)
        mv.addWidget(al)
        mv.addWidget(self.alt)
        row = QHBoxLayout()
        self.btn_caption = self._button("&Caption again (F5)", "Caption the selected picture again",
                                        self.caption_current)
        self.btn_speak = self._button("S&peak (F6)", "Speak the description aloud", self.speak_current)
        self.btn_save = self._button("&Save alt text (Ctrl+S)", "Write the alt text to the sidecars", self.save_current)
        self.btn_copy = self._button("C&opy alt text (Ctrl+Shift+C)", "Copy the description as text",
                                     self.copy_current)
        for b in (self.btn_caption, self.btn_speak, self.btn_save, self.btn_copy):
            row.addWidget(b)
        mv.addLayout(row)
        split.addWidget(mid)
        split.setStretchFactor(1, 3)
        self.setCentralWidget(split)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Work in progress")
        self.progress.setMaximumWidth(180)
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        QWidget.setTabOrder(self.list, self.words)
        QWidget.setTabOrder(self.words, self.alt)
        QWidget.setTabOrder(self.alt, self.btn_caption)
        QWidget.setTabOrder(self.btn_caption, self.btn_speak)
        QWidget.setTabOrder(self.btn_speak, self.btn_save)
        QWidget.setTabOrder(self.btn_save, self.btn_copy)

    def _button(self, text: str, desc: str, slot) -> QPushButton:
        b = QPushButton(text)
        b.setAccessibleName(text.replace("&", "").split(" (")[0])
        b.setAccessibleDescription(desc)
        b.setToolTip(desc)
        b.clicked.connect(slot)
        return b

    def _action(self, menu, text: str, slot, shortcut: str | QKeySequence | None = None,
                checkable: bool = False) -> QAction:
        a = QAction(text, self)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        a.setCheckable(checkable)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(f, "&Open folder…", self.choose_folder, QKeySequence.StandardKey.Open)
        self._action(f, "Open &images…", self.choose_images, "Ctrl+Shift+O")
        self._action(f, "&Batch export alt text…", self.open_batch_dialog, "Ctrl+B")
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        c = mb.addMenu("&Caption")
        self._action(c, "Caption &again", self.caption_current, "F5")
        self._action(c, "&Speak description", self.speak_current, "F6")
        self._action(c, "&Save alt text", self.save_current, QKeySequence.StandardKey.Save)
        self._action(c, "&Copy alt text", self.copy_current, "Ctrl+Shift+C")
        self._action(c, "Show &attention for next word", lambda: self._step_word(1), "Ctrl+.")
        self._action(c, "Show attention for &previous word", lambda: self._step_word(-1), "Ctrl+,")
        w = mb.addMenu("&Watch")
        self._action(w, "&Add watched folder…", self.choose_watch_folder, "Ctrl+Shift+W")
        self._action(w, "&Remove watched folders…", self.remove_watch_folders)
        self.act_clipboard = self._action(w, "Caption &clipboard images", self._toggle_clipboard, "Ctrl+Shift+V",
                                          checkable=True)
        t = mb.addMenu("&Tools")
        self._action(t, "&Models…", self.open_models_dialog, "Ctrl+M")
        self._action(t, "&Teach CapDesk your pictures…", self.open_teach_dialog, "Ctrl+T")
        self._action(t, "&Settings…", self.open_settings_dialog, QKeySequence.StandardKey.Preferences)
        h = mb.addMenu("&Help")
        self._action(h, "&About CapDesk", self._about)

    # -- services ---------------------------------------------------------------------------
    def _apply_settings(self) -> None:
        s = self.settings
        self.writer = SidecarWriter(SidecarOptions(tuple(s.sidecar_formats) or ("txt",), s.txt_name, s.xmp_name,
                                                   s.lang))
        self.act_clipboard.setChecked(s.clipboard)
        with self._describer_lock:
            self.describer = None
            self.describer_error = None
        self._restart_watcher()

    def get_describer(self) -> Describer:
        """Loaded on first use, off the UI thread (a model load takes a moment)."""
        with self._describer_lock:
            if self.describer is None:
                s = self.settings
                opts = DescribeOptions(tags=s.tags, ocr=s.ocr, low_confidence=s.confidence_threshold)
                self.describer = Describer(s.model or None, None if s.provider == "auto" else s.provider,
                                           s.beam, opts)
            return self.describer

    def _begin(self, what: str) -> None:
        self._busy += 1
        self.progress.show()
        self.say_status(what, announce_it=True)

    def _end(self) -> None:
        self._busy = max(0, self._busy - 1)
        if not self._busy:
            self.progress.hide()

    def say_status(self, text: str, announce_it: bool = False) -> None:
        self.statusBar().showMessage(text, 8000)
        if announce_it and screen_reader_active():
            announce(self, text)

    def deliver(self, text: str) -> None:
        """A description reaches the user: spoken, announced, or both, as the settings say."""
        mode = self.settings.speech
        if mode == "off" or not text:
            return
        sr = screen_reader_active()
        if mode in ("announce", "auto") and (sr or mode == "announce"):
            announce(self, text)
            return
        if mode in ("speak", "auto"):
            self._speak(text)

    def _speak(self, text: str) -> None:
        if self.speaker is None:
            from capdesk.speech import Speaker, Voice

            s = self.settings
            self.speaker = Speaker(Voice(s.rate, s.volume, s.voice or None))
        if self.speaker.error:
            self.say_status(self.speaker.error)
            return
        self.speaker.say(text)

    # -- opening ----------------------------------------------------------------------------
    def choose_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Open folder", self.settings.last_folder or str(Path.home()))
        if d:
            self.open_path(Path(d))

    def choose_images(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open images", self.settings.last_folder or str(Path.home()),
                                                "Images (*.jpg *.jpeg *.png *.bmp *.gif *.tif *.tiff *.webp)")
        if files:
            self.open_path(*[Path(f) for f in files])

    def open_path(self, *paths: Path) -> None:
        """Show a folder's images (or the given images) and caption the first one at once."""
        self.list.clear()
        self.entries.clear()
        select = None
        for p in paths:
            if p.is_file():
                select = select or str(p)
        listed = list(expand_paths([p.parent if p.is_file() and len(paths) == 1 else p for p in paths]))
        for p, err in listed:
            self._add_entry(Entry(p, Path(p), status="error" if err else self.writer.status(Path(p)), error=err or ""))
        if paths:
            self.settings.last_folder = str(paths[0] if paths[0].is_dir() else paths[0].parent)
        if self.list.count():
            idx = 0
            if select:
                for i in range(self.list.count()):
                    if self.list.item(i).data(ROLE_KEY) == select:
                        idx = i
            self.list.setCurrentRow(idx)
            self.list.setFocus()
        self.say_status(f"{self.list.count()} images", announce_it=True)
        keys = [k for k, e in self.entries.items() if e.path is not None and e.status != "error"]
        submit(self._check_readable, keys, on_done=self._on_checked)

    @staticmethod
    def _check_readable(keys: list[str]) -> dict[str, str]:
        """Find the images that cannot be read, so the list shows their error before anyone selects them."""
        bad = {}
        for k in keys:
            try:
                load_image(k, draft_size=(64, 64))
            except ImageError as exc:
                bad[k] = exc.reason
        return bad

    def _on_checked(self, bad: dict[str, str]) -> None:
        for k, why in bad.items():
            e = self.entries.get(k)
            if e is not None and e.described is None:
                e.status, e.error = "error", why
                self._refresh_item(k)
        if bad:
            self.say_status(f"{len(bad)} image(s) cannot be read", announce_it=True)

    def _add_entry(self, e: Entry) -> QListWidgetItem:
        self.entries[e.key] = e
        item = QListWidgetItem(self._item_text(e))
        item.setData(ROLE_KEY, e.key)
        self.list.addItem(item)
        return item

    def _item_text(self, e: Entry) -> str:
        name = e.path.name if e.path else e.key
        status = f"error: {e.error}" if e.status == "error" else e.status
        return f"{name} — {status}"

    def _refresh_item(self, key: str) -> None:
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it.data(ROLE_KEY) == key:
                it.setText(self._item_text(self.entries[key]))
                it.setToolTip(self.entries[key].error or "")

    # -- selection and captioning ------------------------------------------------------------
    def _on_select(self, item: QListWidgetItem | None, _prev=None) -> None:
        if item is None:
            return
        e = self.entries[item.data(ROLE_KEY)]
        self.current = e
        if e.status == "error" and e.described is None:
            self.view.setText(f"Cannot show {e.path.name if e.path else e.key}: {e.error}")
            self.alt.setPlainText("")
            self.words.clear()
            self.info.setText(e.error)
            self.say_status(f"{e.key}: {e.error}", announce_it=True)
            return
        if e.described is not None:
            self._show(e)
        else:
            self.caption_current()

    def caption_current(self) -> None:
        e = self.current
        if e is None:
            return
        self._begin(f"Captioning {e.path.name if e.path else e.key}…")
        submit(self._describe_entry, e, on_done=self._on_described, on_failed=self._on_failed)

    def _describe_entry(self, e: Entry) -> tuple[Entry, Described, Image.Image | None]:
        """Worker side: describe, and load a preview; the entry itself is only changed on the UI thread."""
        d = self.get_describer()
        if e.image is not None:
            return e, d.describe_images([e.image], [e.key])[0], e.image
        described = next(d.describe_paths([e.path]))
        image = None
        if described.ok:
            try:
                image = load_image(e.path, draft_size=(1600, 1600))
            except ImageError:
                image = None
        return e, described, image

    def _on_described(self, result: tuple[Entry, Described, Image.Image | None]) -> None:
        self._end()
        e, d, image = result
        e.described, e.image = d, image
        if not d.ok:
            e.status, e.error = "error", d.error
            self._refresh_item(e.key)
            if e is self.current:
                self.view.setText(f"Cannot caption: {d.error}")
                self.info.setText(d.error)
            self.say_status(f"Captioning failed: {d.error}", announce_it=True)
            return
        if e.path is not None:
            st = self.writer.status(e.path)
            e.status = st if st != "none" else ("needs review" if not d.certain else "none")
        self._refresh_item(e.key)
        if e is self.current:
            self._show(e)
        self.say_status("Captioning finished", announce_it=False)
        self.deliver(d.description)

    def _on_failed(self, msg: str) -> None:
        self._end()
        self.say_status(f"Captioning failed: {msg}", announce_it=True)
        if self.describer is None and self.describer_error is None:
            self.describer_error = msg

    def _show(self, e: Entry) -> None:
        d = e.described
        self.alt.setPlainText(d.description)
        self.words.blockSignals(True)
        self.words.clear()
        for w in d.caption.words if d.caption else []:
            self.words.addItem(w)
        self.words.setCurrentRow(-1)
        self.words.blockSignals(False)
        conf = f"confidence {d.confidence:.2f}" if d.confidence is not None else ""
        dom = "" if d.in_domain is None else ("in the model's domain" if d.in_domain else "outside the model's domain")
        tag_text = ", ".join(f"{n} {p:.0%}" for n, p in d.tags)
        self.info.setText(" · ".join(x for x in (f"model {d.model}", conf, dom, f"tags: {tag_text}" if tag_text
                                                  else "", f"caption: {d.caption.text}" if d.caption else "") if x))
        self._draw(e, None)
        if e.image is not None and d.caption is not None and d.caption.words:
            cap = d.caption
            self.strip.setPixmap(pil_to_qpixmap(strip(e.image, cap.words, cap.attention, cap.grid, tile=96,
                                                      per_row=len(cap.words) + 1)))
        else:
            self.strip.clear()

    def _draw(self, e: Entry, word: int | None) -> None:
        if e.image is None:
            self.view.setText("(no preview)")
            return
        img = e.image
        cap = e.described.caption if e.described else None
        if word is not None and cap is not None and 0 <= word < len(cap.words):
            img = overlay(img, cap.attention_map(word))
        pm = pil_to_qpixmap(img)
        self.view.setPixmap(pm.scaled(self.view.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                      Qt.TransformationMode.SmoothTransformation))
        self.view.setProperty("attention_word", -1 if word is None else word)

    def _on_word(self, row: int) -> None:
        if self.current is not None and self.current.described is not None:
            self._draw(self.current, row if row >= 0 else None)
            if row >= 0:
                self.say_status(f"Attention for “{self.words.item(row).text()}”")

    def _step_word(self, delta: int) -> None:
        n = self.words.count()
        if n:
            self.words.setCurrentRow((self.words.currentRow() + delta) % n)

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(ev)
        if self.current is not None and self.current.described is not None:
            self._draw(self.current, self.words.currentRow() if self.words.currentRow() >= 0 else None)

    # -- alt text ---------------------------------------------------------------------------
    def save_current(self) -> None:
        e = self.current
        text = self.alt.toPlainText().strip()
        if e is None or e.path is None or not text:
            self.say_status("Nothing to save" if e is None or not text else "Clipboard images have no file to "
                            "save alt text beside; copy it instead", announce_it=True)
            return
        alt = AltText(" ".join(text.split()), "human", e.described.model if e.described else "",
                      e.described.confidence if e.described else None)
        outcomes = self.writer.write(e.path, alt, force=True)  # the person's own words: always theirs to save
        failed = [o for o in outcomes if o.action == "failed"]
        if failed:
            self.say_status(f"Could not save: {failed[0].path.name}: {failed[0].reason}", announce_it=True)
            return
        e.status = "edited"
        if e.described is not None:
            e.described.description = alt.text
        self._refresh_item(e.key)
        self.say_status(f"Alt text saved to {', '.join(o.path.name for o in outcomes)}", announce_it=True)

    def copy_current(self) -> None:
        text = self.alt.toPlainText().strip()
        if text:
            self._copying = True
            QGuiApplication.clipboard().setText(text)
            self._copying = False
            self.say_status("Alt text copied", announce_it=True)

    def speak_current(self) -> None:
        text = self.alt.toPlainText().strip()
        if text:
            if self.settings.speech == "announce" or (self.settings.speech == "auto" and screen_reader_active()):
                announce(self, text)
            else:
                self._speak(text)

    # -- clipboard --------------------------------------------------------------------------
    def _toggle_clipboard(self, on: bool) -> None:
        self.settings.clipboard = bool(on)
        self.settings.save()
        self.say_status("Clipboard images will be captioned" if on else "Clipboard captioning off", announce_it=True)

    def _on_clipboard(self) -> None:
        if not self.settings.clipboard or getattr(self, "_copying", False):
            return
        md = QGuiApplication.clipboard().mimeData()
        if md is None or not md.hasImage():
            return
        qimg = QGuiApplication.clipboard().image()
        if qimg.isNull():
            return
        self.caption_image(qimage_to_pil(qimg), source="clipboard")

    def caption_image(self, img: Image.Image, source: str = "clipboard") -> Entry:
        """Caption an image that has no file (a clipboard image), show it and say it."""
        self._clip_count += 1
        key = f"{source} image {self._clip_count} ({time.strftime('%H:%M:%S')})"
        e = Entry(key, None, img)
        item = self._add_entry(e)
        self.list.setCurrentItem(item)  # selecting captions it
        return e

    # -- watching ---------------------------------------------------------------------------
    def choose_watch_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Watch folder", str(Path.home()))
        if d:
            self.add_watch_folder(Path(d))

    def add_watch_folder(self, folder: Path) -> None:
        if str(folder) not in self.settings.watch_folders:
            self.settings.watch_folders.append(str(folder))
            self.settings.save()
        self._restart_watcher()
        self.say_status(f"Watching {folder}", announce_it=True)

    def remove_watch_folders(self, folders: list[str] | None = None) -> None:
        if folders is None:
            from .dialogs import choose_from_list

            folders = choose_from_list(self, "Remove watched folders", "Stop watching:", self.settings.watch_folders)
        if not folders:
            return
        self.settings.watch_folders = [f for f in self.settings.watch_folders if f not in folders]
        self.settings.save()
        self._restart_watcher()
        self.say_status(f"Stopped watching {len(folders)} folder(s)", announce_it=True)

    def _restart_watcher(self) -> None:
        from capdesk.watch import FolderWatcher

        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        folders = [Path(f) for f in self.settings.watch_folders if Path(f).is_dir()]
        if folders:
            self.watcher = FolderWatcher(folders, self._bridge.images_ready.emit, writer=self.writer).start()

    def _on_watched_images(self, paths: list) -> None:
        """New images in a watched folder: list them, caption them, write sidecars as configured."""
        for p in paths:
            key = str(p)
            if key not in self.entries and is_image_path(p):
                self._add_entry(Entry(key, Path(p)))
        self._begin(f"Captioning {len(paths)} new image(s)…")
        submit(self._process_watched, list(paths), on_done=self._on_watched_done, on_failed=self._on_failed)

    def _process_watched(self, paths: list) -> list:
        from capdesk.batch import run_batch

        d = self.get_describer()
        if self.settings.watch_write_sidecars:
            return run_batch(paths, d, self.writer, threshold=self.settings.confidence_threshold).rows
        return [d for d in d.describe_paths(paths)]

    def _on_watched_done(self, rows: list) -> None:
        self._end()
        for r in rows:
            key = str(getattr(r, "path", ""))
            e = self.entries.get(key)
            if e is None:
                continue
            if getattr(r, "status", "") == "failed" or getattr(r, "error", None):
                e.status, e.error = "error", r.error or ""
            else:
                e.status = "needs review" if getattr(r, "needs_review", False) else self.writer.status(e.path)
                e.extra["alt_text"] = getattr(r, "alt_text", "") or getattr(r, "description", "")
            self._refresh_item(key)
        said = [e for r in rows if (e := self.entries.get(str(r.path))) and e.extra.get("alt_text")]
        if said:
            self.deliver(said[-1].extra["alt_text"])

    # -- dialogs ----------------------------------------------------------------------------
    def open_batch_dialog(self) -> None:
        from .dialogs import BatchDialog

        folder = self.settings.last_folder
        BatchDialog(self, folder).exec()

    def open_models_dialog(self) -> None:
        from .dialogs import ModelsDialog

        if ModelsDialog(self).exec():
            self.settings.save()
            self._apply_settings()
            if self.current is not None:
                self.caption_current()

    def open_teach_dialog(self) -> None:
        from .dialogs import TeachDialog

        TeachDialog(self).exec()

    def open_settings_dialog(self) -> None:
        from .dialogs import SettingsDialog

        if SettingsDialog(self, self.settings).exec():
            self.settings.save()
            if self.speaker is not None:
                self.speaker.close()
                self.speaker = None
            self._apply_settings()

    def _about(self) -> None:
        from capdesk import __version__

        QMessageBox.about(self, "About CapDesk", f"CapDesk {__version__}: offline descriptions of pictures.")

    def closeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if self.watcher is not None:
            self.watcher.stop()
        if self.speaker is not None:
            self.speaker.close()
        with contextlib.suppress(OSError):
            self.settings.save()
        super().closeEvent(ev)
