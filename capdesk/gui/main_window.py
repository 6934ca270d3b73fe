"""The main window: pictures on the left, the picture and its description in the middle.

A thin shell over ``capdesk.session.core.Session``: it draws what the session holds, forwards the
user's actions to it, and hands each message the session wants heard to the ``Announcer``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QFrame,
    QLabel,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from capdesk.imageio import IMAGE_SUFFIXES
from capdesk.session import messages
from capdesk.session.core import Message, Picture, PictureStatus, Session
from capdesk.session.settings import Settings

from . import window_size
from .announcer import Announcer, speak_combo_changes
from .focus_keeper import FocusKeeper, RepostedAltGuard
from .picture_pane import PicturePane
from .qtutil import QtRunner, plain_box, plain_tip, qimage_to_pil, screen_reader_active
from .status_line import StatusBar
from .widgets import GuardedList, named

KEY_ROLE = Qt.ItemDataRole.UserRole


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None, settings_problem: str | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.session = Session(self.settings, QtRunner(), screen_reader_active)
        self._copying = False
        self._shown: object = None  # the description the alt text box was last filled from
        self._altfill_folder = ""  # the folder the Fill alt text dialog was last given
        self.setWindowTitle("CapDesk")
        self.setAccessibleName("CapDesk main window")
        self.setStatusBar(StatusBar())
        self._build()
        self._build_menus()
        screen = QGuiApplication.primaryScreen()
        if screen is not None and window_size.too_small(self.minimumSizeHint(), screen.availableGeometry()):
            self._scroll_content()
        window_size.place(self, self.settings.window_size, screen)
        self.focus_keeper = FocusKeeper(self, self.list)
        self._alt_guard = RepostedAltGuard(self)
        QApplication.instance().installEventFilter(self._alt_guard)
        self.announcer = Announcer(self)
        s = self.session
        s.pictures_reset.connect(self._on_reset)
        s.picture_added.connect(self._add_item)
        s.picture_changed.connect(self._on_changed)
        s.current_changed.connect(self._on_current)
        s.message.connect(self._on_message)
        s.busy_changed.connect(self.progress.setVisible)
        self.act_clipboard.setChecked(self.settings.clipboard)
        s.restart_watcher()
        QGuiApplication.clipboard().dataChanged.connect(self._on_clipboard)
        self.pane.alt.installEventFilter(self)  # leaving the box keeps its words as the picture's draft
        if settings_problem:
            QTimer.singleShot(0, lambda: s.say(settings_problem))

    # -- construction ----------------------------------------------------------------------
    def _scroll_content(self) -> None:
        """On a screen smaller than the window's least size (a small screen at 200% scaling), the content in a
        scroll area: the window then fits, and moving the focus scrolls each control into view. Only then,
        so that on every other screen the window's accessible tree is as it always was."""
        area = QScrollArea(self)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setWidget(self.takeCentralWidget())
        self.setCentralWidget(area)

        self._scroller = area
        # Whatever moves the focus (Tab, a mnemonic such as Alt+I, a shortcut), the control it lands on is
        # scrolled into view: a magnifier user or a sighted keyboard user sees where the focus is. Bound to the
        # window, so that the connection ends with it.
        QApplication.instance().focusChanged.connect(self._scroll_to_focus)

    def _scroll_to_focus(self, _old, new) -> None:
        """A control larger than the view (the Images list) shows its top-left part, where its reading begins."""
        area = self._scroller
        content = area.widget() if shiboken6.isValid(area) else None
        if new is None or content is None or not content.isAncestorOf(new):
            return
        at = new.mapTo(content, QPoint(0, 0))
        w = min(new.width(), area.viewport().width() - 16) // 2
        h = min(new.height(), area.viewport().height() - 16) // 2
        area.ensureVisible(at.x() + w, at.y() + h, w + 8, h + 8)

    def _build(self) -> None:
        split = QSplitter(Qt.Orientation.Horizontal, self)
        left = QWidget()
        lv = QVBoxLayout(left)
        lbl = QLabel("&Images")
        self.list = named(GuardedList(self._may_leave), "Images",
                          "Pictures with their alt-text status. F5 captions again, F6 speaks, Ctrl+S saves")
        lbl.setBuddy(self.list)
        self.list.currentItemChanged.connect(self._on_select)
        lv.addWidget(lbl)
        lv.addWidget(self.list)
        split.addWidget(left)
        self.pane = PicturePane({"caption": self.caption_current, "speak": self.speak_current,
                                 "save": self.save_current, "copy": self.copy_current})
        split.addWidget(self.pane)
        # Space on a word, or Tab into the Words list: the word in full, as Ctrl+. says it.
        self.pane.said.connect(self.session.say)
        split.setStretchFactor(1, 3)
        # Wide enough for "name.png, alt text written, needs review" (it was cut to "needs re").
        left.setMinimumWidth(300)
        split.setSizes([340, 860])
        self.setCentralWidget(split)
        self.progress = named(QProgressBar(), "Work in progress")
        self.progress.setMaximumWidth(180)
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        QWidget.setTabOrder(self.list, self.pane.words)

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
        self._action(f, "&Fill alt text in pages and documents…", self.open_altfill_dialog, "Ctrl+Shift+A")
        f.addSeparator()
        self._action(f, "&Quit", self.close, "Ctrl+Q")
        c = mb.addMenu("&Caption")
        self._action(c, "Caption &again", self.caption_current, "F5")
        self._action(c, "&Speak alt text", self.speak_current, "F6")
        self._action(c, "&Save alt text", self.save_current, QKeySequence.StandardKey.Save)
        self._action(c, "&Copy alt text", self.copy_current, "Ctrl+Shift+C")
        self._action(c, "Show &attention for next word", lambda: self.step_word(1), "Ctrl+.")
        self._action(c, "Show attention for &previous word", lambda: self.step_word(-1), "Ctrl+,")
        self._action(c, "E&xplore what was found: next", lambda: self.explore(1), "F7")
        self._action(c, "Explore what was found: pre&vious", lambda: self.explore(-1), "Shift+F7")
        w = mb.addMenu("&Watch")
        self._action(w, "&Add watched folder…", self.choose_watch_folder, "Ctrl+Shift+W")
        # ``triggered`` passes Qt's checked flag (False): it must not reach ``folders``.
        self._action(w, "&Remove watched folders…", lambda: self.remove_watch_folders(), "Ctrl+Shift+R")
        self.act_clipboard = self._action(w, "Caption &clipboard images", self.set_clipboard,
                                          "Ctrl+Shift+V", checkable=True)
        t = mb.addMenu("&Tools")
        self._action(t, "&Models…", self.open_models_dialog, "Ctrl+M")
        self._action(t, "&Teach CapDesk your pictures…", self.open_teach_dialog, "Ctrl+T")
        # Every dialog has a key of its own: under Orca, Alt+letter chords did not reach the menu bar.
        self._action(t, "&Settings…", self.open_settings_dialog, "Ctrl+Shift+P")
        h = mb.addMenu("&Help")
        self._action(h, "&Keys…", self._keys, QKeySequence.StandardKey.HelpContents)
        self._action(h, "&What the alt text says…", self._alt_text_rules)
        self._action(h, "&About CapDesk", self._about)
        # F10 opens the menu bar as in GTK and Windows programs; Qt has no such key of its own on Linux.
        menu_key = QAction(self)
        menu_key.setShortcut(QKeySequence("F10"))
        menu_key.triggered.connect(self._open_menu_bar)
        self.addAction(menu_key)

    def _open_menu_bar(self) -> None:
        """F10: the File menu opened with the menu bar holding the focus, as Alt leaves it. Moving to the
        next menu (Right), Qt's menu bar gives the focus back to whatever held it; with the picture list
        holding it, Orca read the list instead of the next menu, then nothing."""
        mb = self.menuBar()
        mb.setFocus(Qt.FocusReason.MenuBarFocusReason)
        mb.setActiveAction(mb.actions()[0])

    # -- drawing the session ------------------------------------------------------------------
    def _on_message(self, m: Message) -> None:
        self.statusBar().showMessage(m.text)  # kept until the next one, so flat review can read it again
        # On returning to a picture the screen reader reads its list entry, description included: also when
        # the list will get the focus as the window becomes active (a restart on a person's words was heard
        # as a notification with the words, then the entry with the same words).
        in_list = self.list.hasFocus() or (not self.isActiveWindow() and self.focus_keeper.target() is self.list)
        if m.to_screen_reader and not (m.revisit and in_list):
            self.announcer.say(m.text)

    def _item(self, key: str) -> QListWidgetItem | None:
        for i in range(self.list.count()):
            if self.list.item(i).data(KEY_ROLE) == key:
                return self.list.item(i)
        return None

    def _on_reset(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        self.list.blockSignals(False)
        for p in self.session.pictures.values():
            self._add_item(p)
        self.list.setFocus()

    def _add_item(self, p: Picture) -> None:
        item = QListWidgetItem(p.label)
        item.setData(KEY_ROLE, p.key)
        self.list.blockSignals(True)
        self.list.addItem(item)
        self.list.blockSignals(False)
        self._draw_item(item, p)

    def _draw_item(self, item: QListWidgetItem, p: Picture) -> None:
        item.setText(p.label)
        item.setToolTip(plain_tip(p.error))  # never the alt text: Qt would offer it as the entry's description
        self.announcer.set_item_description(self.list, self.list.indexFromItem(item), p.draft or p.alt_text)

    def _on_changed(self, p: Picture) -> None:
        item = self._item(p.key)
        if item is not None:
            self._draw_item(item, p)
        if p is self.session.current:
            self._draw_current(p)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.FocusOut:
            with contextlib.suppress(RuntimeError):  # the box loses the focus as the window is destroyed too
                if watched is self.pane.alt and self.isVisible():
                    self._left_alt_box(QApplication.focusWidget())
        return False

    def _left_alt_box(self, new) -> None:
        """Leaving the Alt text box (Alt+I to the list, Tab): its words are kept as the picture's draft, so
        that the list entry says "edited, not saved" with them, not the old status and text."""
        p = self.session.current
        if p is None or new is self.pane.alt:
            return
        cursor = self.pane.alt.textCursor()
        if cursor.hasSelection():
            cursor.clearSelection()
            self.pane.alt.setTextCursor(cursor)
        self.session.set_draft(self.pane.alt.toPlainText())
        item = self._item(p.key)
        if new is self.list and item is not None and self.list.currentItem() is item:
            self.announcer.describe_arriving(self.list, self.list.indexFromItem(item), p.draft or p.alt_text)

    def _on_current(self, p: Picture | None) -> None:
        item = self._item(p.key) if p is not None else None
        if item is not None and self.list.currentItem() is not item:
            self.list.blockSignals(True)
            self.list.setCurrentItem(item)
            self.list.blockSignals(False)
        self._shown = None
        if p is not None:
            self._draw_current(p)

    def _draw_current(self, p: Picture) -> None:
        if p.status is PictureStatus.FAILED and p.described is None:
            self.pane.show_problem(p, f"Cannot show {p.name}: {p.error}")
        elif p.status is PictureStatus.FAILED:
            self.pane.show_problem(p, f"Cannot caption {p.name}: {p.error}")
        elif p.described is not None or p.person_text is not None:
            # A person's saved words show without a caption (the picture is not captioned over them).
            shown = p.described if p.described is not None else p
            fresh = shown is not self._shown
            self._shown = shown
            self.pane.show_picture(p, keep_text=not fresh)
        elif self._shown is None:
            self.pane.show_waiting(p)

    # -- forwarding the user's actions ----------------------------------------------------------
    def _on_select(self, item: QListWidgetItem | None, prev: QListWidgetItem | None = None) -> None:
        if item is None:
            return
        if prev is not None and self.session.has_unsaved_edit(self.pane.alt.toPlainText()):
            # The list stays on the edited picture until the person has answered; asked once this key
            # press is over, not from inside the list's own signal.
            self.list.blockSignals(True)
            self.list.setCurrentItem(prev)
            self.list.blockSignals(False)
            key = item.data(KEY_ROLE)
            QTimer.singleShot(0, lambda: self._ask_then_select(key))
            return
        self.announcer.note_focus_moved()
        self.session.set_draft(self.pane.alt.toPlainText())
        self.session.select(item.data(KEY_ROLE))

    def _may_leave(self, target) -> bool:
        """An arrow key in the list: with an unsaved edit the list stays put and the question comes."""
        if not self.session.has_unsaved_edit(self.pane.alt.toPlainText()):
            return True
        key = target.data(KEY_ROLE)
        QTimer.singleShot(0, lambda: self._ask_then_select(key))
        return False

    def ask_unsaved(self, title: str, question: str, default: QMessageBox.StandardButton | None = None
                    ) -> QMessageBox.StandardButton:
        """Save, Discard or Cancel; the default, Enter, saves a person's edit (what was typed is kept either
        way) and ``default`` where the box holds something else."""
        b = QMessageBox.StandardButton
        answer = QMessageBox.question(self, title, plain_box(question), b.Save | b.Discard | b.Cancel,
                                      default or b.Save)
        self.focus_keeper.give_back()
        return answer

    def _settle_edit(self, title: str, what_next: str) -> bool:
        """Ask what becomes of the unsaved edit; False to stay where the person is."""
        p = self.session.current
        if p is None or not self.session.has_unsaved_edit(self.pane.alt.toPlainText()):
            return True
        b = QMessageBox.StandardButton
        if self.session.holds_new_caption_beside_person_words(self.pane.alt.toPlainText()):
            # F5 -> Yes over a person's words: the box holds CapDesk's caption, not the person's; Enter keeps
            # their saved words (Discard), and the question never calls the caption theirs.
            answer = self.ask_unsaved(title, messages.new_caption_question(p.name, what_next), b.Discard)
            kept = messages.new_caption_kept(p.name)
        else:
            answer = self.ask_unsaved(title, messages.unsaved_question(p.name, what_next))
            kept = messages.edit_kept(p.name)
        if answer == b.Save:
            return self.session.save_current(self.pane.alt.toPlainText())
        if answer == b.Discard:
            self.session.set_draft("")
            self.pane.alt.setPlainText(p.alt_text)
            return True
        self.session.say(kept)
        return False

    def _ask_then_select(self, key: str) -> None:
        target = self.session.pictures.get(key)
        if target is None or not self._settle_edit("Unsaved alt text", f"showing {target.name}"):
            return
        item = self._item(key)
        if item is not None:
            self.list.setCurrentItem(item)

    def choose_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Open folder", self.settings.last_folder or str(Path.home()))
        if d:
            self.open_path(Path(d))

    def choose_images(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open images", self.settings.last_folder or str(Path.home()),
                                                "Images (" + " ".join(f"*{s}" for s in sorted(IMAGE_SUFFIXES)) + ")")
        if files:
            self.open_path(*[Path(f) for f in files])

    def open_path(self, *paths: Path) -> None:
        self.session.open_paths(*paths)

    def caption_current(self) -> None:
        if self.session.holds_person_words() and not self.session.has_unsaved_edit(self.pane.alt.toPlainText()):
            p = self.session.current
            answer = QMessageBox.question(self, "Caption again",
                                          plain_box(messages.caption_over_person_question(p.name)),
                                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                          QMessageBox.StandardButton.No)
            self.focus_keeper.give_back()
            if answer != QMessageBox.StandardButton.Yes:
                return
        elif self.session.has_unsaved_edit(self.pane.alt.toPlainText()):
            answer = QMessageBox.question(self, "Caption again", "Replace your edited alt text with a new caption?",
                                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                          QMessageBox.StandardButton.No)
            self.focus_keeper.give_back()
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.session.set_draft("")
        self._shown = None
        self.session.caption_again()

    def save_current(self) -> None:
        self.session.save_current(self.pane.alt.toPlainText())

    def copy_current(self) -> None:
        text = self.session.copy_text(self.pane.alt.toPlainText())
        if text:
            self._copying = True  # our own copy is text, not a picture to caption
            QGuiApplication.clipboard().setText(text)
            self._copying = False

    def speak_current(self) -> None:
        self.session.speak(self.pane.alt.toPlainText())

    def set_clipboard(self, on: bool) -> None:
        """Caption clipboard pictures from now on, starting with the one already there."""
        self.session.set_clipboard(on)
        if on:
            self._on_clipboard()

    def _on_clipboard(self) -> None:
        if not self.settings.clipboard or self._copying:
            return
        md = QGuiApplication.clipboard().mimeData()
        if md is None or not md.hasImage():
            return
        qimg = QGuiApplication.clipboard().image()
        if not qimg.isNull():
            text = self.pane.alt.toPlainText()
            self.session.set_draft(text)
            # While the person writes alt text, or reads the list, the picture, the box and the list's
            # selection stay theirs: the new picture is listed and said, not shown.
            busy = self.pane.alt.hasFocus() or self.list.hasFocus() or self.session.has_unsaved_edit(text)
            self.session.add_clipboard_image(qimage_to_pil(qimg), show=not busy)

    def step_word(self, delta: int) -> None:
        """Ctrl+. and Ctrl+,: the next or previous word's attention map, said (only drawn otherwise)."""
        said = self.pane.step_word(delta)
        if not self.pane.words.hasFocus():  # in the Words list the screen reader reads the new entry
            self.session.say(said)

    def explore(self, delta: int) -> None:
        """F7 and Shift+F7: the next or previous thing found in the picture, where it is and how big, said."""
        self.session.say(self.session.explore(delta))

    def choose_watch_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Watch folder", str(Path.home()))
        if d:
            self.session.add_watch_folder(Path(d))

    def remove_watch_folders(self, folders: list[str] | None = None) -> None:
        if folders is None and not self.settings.watch_folders:
            self.session.say(messages.NOT_WATCHING)
            return
        if folders is None:
            from .dialogs import choose_from_list

            folders = choose_from_list(self, "Remove watched folders", "Stop &watching:",
                                       self.settings.watch_folders)
            self.focus_keeper.give_back()  # as after every dialog: the window may be left without focus
        self.session.remove_watch_folders(folders)

    # -- dialogs ----------------------------------------------------------------------------
    def _run(self, dlg) -> int:
        speak_combo_changes(self.announcer, dlg)
        done = dlg.exec()
        dlg.deleteLater()  # a closed dialog must not linger in the accessibility tree
        self.focus_keeper.give_back()  # back where the person was, even with no window active
        return done

    def open_batch_dialog(self) -> None:
        from .dialogs import BatchDialog

        self._run(BatchDialog(self, self.settings.last_folder))

    def open_altfill_dialog(self) -> None:
        from .dialogs import AltFillDialog

        # Its folder is the site's or the documents', not the pictures' folder: kept for the next opening.
        dlg = AltFillDialog(self, self._altfill_folder or self.settings.last_folder)
        self._run(dlg)
        self._altfill_folder = dlg.folder.text().strip() or self._altfill_folder

    def open_models_dialog(self) -> None:
        from .dialogs import ModelsDialog

        dlg = ModelsDialog(self)
        if self._run(dlg):
            self.session.use_model(dlg.chosen, self.pane.alt.toPlainText())

    def open_teach_dialog(self) -> None:
        from .dialogs import TeachDialog

        self._run(TeachDialog(self))

    def open_settings_dialog(self) -> None:
        from .dialogs import SettingsDialog

        dlg = SettingsDialog(self, self.settings)
        if self._run(dlg):
            self.settings.save()
            self.session.apply_settings()
            self.act_clipboard.setChecked(self.settings.clipboard)
            self.session.say(messages.settings_saved(dlg.changes))

    def _keys(self) -> None:
        from .dialogs import show_keys

        keys = [(a.text().replace("&", "").rstrip("…"), a.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
                for m in self.menuBar().actions() for a in m.menu().actions() if not a.shortcut().isEmpty()]
        show_keys(self, [("Open the menu bar", "F10 or Alt"), *keys])
        self.focus_keeper.give_back()

    def _alt_text_rules(self) -> None:
        from .dialogs.help import show_alt_text_rules

        show_alt_text_rules(self)
        self.focus_keeper.give_back()

    def _about(self) -> None:
        from capdesk import __version__

        QMessageBox.about(self, "About CapDesk", f"CapDesk {__version__}: offline descriptions of pictures.")
        self.focus_keeper.give_back()

    def showEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(ev)
        if not getattr(self, "_activated", False):
            # Ask for the keyboard focus when the window first appears: a window manager that leaves a
            # new window inactive (seen under load) would leave a screen reader user outside it.
            self._activated = True
            QTimer.singleShot(0, self.focus_keeper.ask_once)

    def closeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if not self._settle_edit("Quit CapDesk", "quitting"):
            ev.ignore()
            return
        self.session.close()
        self.settings.window_size = window_size.remembered_size(self)
        with contextlib.suppress(OSError):
            self.settings.save()
        super().closeEvent(ev)
