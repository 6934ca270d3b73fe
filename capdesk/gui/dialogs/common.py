"""What the dialogs share: a list to choose from, and a dialog running one job on a folder."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop, Qt, QUrl
from PySide6.QtGui import QAccessible, QDesktopServices, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QStatusBar,
    QVBoxLayout,
)

from capdesk.session import messages

from ..widgets import StatusLabel, button, named


def choose_from_list(parent, title: str, label: str, items: list[str]) -> list[str]:
    """The entries checked when OK (or Enter) is pressed. Each entry is a check box: a screen reader says
    "checked" or "not checked" with it (a multi-selection list said nothing of which were chosen)."""
    dlg = QDialog(parent)
    dlg.setWindowTitle(title)
    lay = QVBoxLayout(dlg)
    lbl = QLabel(label)
    lst = named(QListWidget(), title, "Space checks or unchecks a folder; Enter takes the checked ones")
    for n, text in enumerate(items):  # Enter at once takes the first; Space adds or drops others
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if n == 0 else Qt.CheckState.Unchecked)
        lst.addItem(item)
    if items:
        lst.setCurrentRow(0)
    lbl.setBuddy(lst)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dlg.accept)
    buttons.rejected.connect(dlg.reject)
    for b in buttons.buttons():
        b.setAccessibleName(b.text().replace("&", ""))
    lay.addWidget(lbl)
    lay.addWidget(lst)
    lay.addWidget(buttons)
    lst.setFocus()
    accepted = dlg.exec()
    chosen = [lst.item(i).text() for i in range(lst.count())
              if lst.item(i).checkState() == Qt.CheckState.Checked] if accepted else []
    dlg.deleteLater()
    return chosen


class PathEdit(QPlainTextEdit):
    """A one-line text field (a path, a name), with QLineEdit's text() and setText().

    Works around Qt 6 with Orca 43: Qt's QLineEdit gives every character a text-attribute run of
    length zero, from which Orca builds the line it reads one character short (a folder ending in
    "pics" is heard as "pic"). A plain text edit reports proper runs, so Orca reads the whole path.
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabChangesFocus(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        margins = self.contentsMargins()
        self.setFixedHeight(self.fontMetrics().lineSpacing() + 2 * int(self.document().documentMargin())
                            + margins.top() + margins.bottom() + 2)
        self.setText(text)

    def text(self) -> str:
        return " ".join(self.toPlainText().splitlines())

    def setText(self, text: str) -> None:  # noqa: N802 (QLineEdit's name)
        self.setPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)

    def keyPressEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        if ev.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            ev.ignore()  # one line: Enter is the dialog's, as in a line edit
            return
        super().keyPressEvent(ev)


def show_keys(parent, keys: list[tuple[str, str]]) -> None:
    """Help > Keys: every key of the window in a list, read one by one."""
    show_list(parent, "Keys", "&Keys of the main window:", [f"{what}: {key}" for what, key in keys])


def show_list(parent, title: str, label: str, lines: list[str]) -> None:
    """Lines of help in a list: a screen reader reads them one at a time, with arrows, and says how many."""
    dlg = QDialog(parent)
    dlg.setWindowTitle(title)
    lay = QVBoxLayout(dlg)
    lbl = QLabel(label)
    lst = named(QListWidget(), title)
    lst.setWordWrap(True)
    lst.addItems(lines)
    lst.setCurrentRow(0)
    lbl.setBuddy(lst)
    close = button("&Close", f"Close {title}", dlg.reject)
    lay.addWidget(lbl)
    lay.addWidget(lst)
    lay.addWidget(close)
    dlg.resize(640, 420)
    lst.setFocus()
    dlg.exec()
    dlg.deleteLater()


class FolderJobDialog(QDialog):
    """A dialog that runs one long job (``self.job``) on a folder, with progress, a status line
    whose text a screen reader can read, Start, Cancel and Close."""

    job = None

    def __init__(self, window, title: str) -> None:
        super().__init__(window)
        self.window_ = window
        self.session = window.session
        self.setWindowTitle(title)
        self.setAccessibleName(title)

    def _folder_row(self, form: QFormLayout, text: str, name: str) -> PathEdit:
        self.folder = named(PathEdit(text), name)
        # Its name says it all: a description read after it ("Browse for the folder") was heard as stray.
        browse = button("&Browse…", "", self._browse)
        browse.setAccessibleName("Browse for the folder…")
        row = QHBoxLayout()
        row.addWidget(self.folder)
        row.addWidget(browse)
        lbl = QLabel("&Folder:")
        lbl.setBuddy(self.folder)
        form.addRow(lbl, row)
        return self.folder

    def _progress_rows(self, lay: QVBoxLayout, what: str, status_role: QAccessible.Role | None = None) -> None:
        """The bar sits in a status bar, where Orca does not read a bar's changes (its default setting):
        the status line and the spoken milestones tell how far a run is, and the bar's own "100 percent."
        and "0 percent." were heard before the outcome, and its quarters among the spoken ones.
        ``status_role``: the status line's role to the screen reader (``StatusLabel``)."""
        self.bar = named(QProgressBar(), f"{what} progress")
        self.status = StatusLabel(f"{what} status", role=status_role)
        holder = QStatusBar()
        holder.setSizeGripEnabled(False)
        holder.addWidget(self.bar, 1)
        lay.addWidget(holder)
        lay.addWidget(self.status)

    def _job_buttons(self, lay: QVBoxLayout, start_help: str, cancel_help: str, report: bool = False) -> None:
        """Start, Cancel (off until a run starts), Open report when the job writes one, and Close."""
        self.start_btn = button("&Start", start_help, self.start)
        self.cancel_btn = button("&Cancel", cancel_help, self.cancel)
        self.cancel_btn.setEnabled(False)
        row = [self.start_btn, self.cancel_btn]
        if report:
            self.open_btn = button("Open re&port", "Open the report", self.open_report)
            self.open_btn.setEnabled(False)
            row.append(self.open_btn)
        self.close_btn = button("C&lose", "Close this dialog", self.reject)
        buttons = QHBoxLayout()
        for b in (*row, self.close_btn):
            buttons.addWidget(b)
        lay.addLayout(buttons)

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Folder", self.folder.text() or str(Path.home()))
        if d:
            self.folder.setText(d)

    def _running(self, on: bool) -> None:
        """Start and Cancel swap; the focus goes to the one that can be pressed (a disabled button
        would drop it somewhere the person did not choose). It moves before the button it leaves is
        turned off: Qt moved it on from a disabled Cancel by itself first, so the control it then went to
        already had the focus when it was given the outcome to say, and Orca read that a second time."""
        if on:
            self.cancel_btn.setEnabled(True)
            self.cancel_btn.setFocus()
            self.start_btn.setEnabled(False)
            self.bar.setRange(0, 0)
            return
        self.start_btn.setEnabled(True)
        self._after_run_focus().setFocus()
        self.cancel_btn.setEnabled(False)

    def _after_run_focus(self):
        return self.start_btn

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def reject(self) -> None:
        """Closing while the job runs cancels it and waits (up to a minute) for it to stop cleanly."""
        if self.job is not None and self.job.running:
            self.job.cancel()
            deadline = time.monotonic() + 60
            while self.job.running and time.monotonic() < deadline:
                QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 100)
        super().reject()


class ReportJobDialog(FolderJobDialog):
    """A folder job that ends in a report a person can open: batch export and alt-fill.
    Subclasses build ``open_btn`` and set ``report_path`` before ``_start_job``."""

    report_path = ""
    result = None

    def _start_job(self, job, folder: Path) -> None:
        self.job = job
        self.result = None
        started = job.start()
        if started:
            self.status.setText(job.started_text())
            self._running(True)
        else:
            self.status.setText(messages.not_a_folder(str(folder)))
        # Off once the focus has moved on: turned off with the focus on it, Qt moved the focus by itself,
        # its own description came back while Orca still read it as focused, and "Open the report" was heard.
        if not started or job.running:  # a job done at once has set it from its outcome already
            self.open_btn.setEnabled(False)

    def cancel(self) -> None:
        super().cancel()
        if self.job is not None and self.job.running:
            self.status.setText(self.job.STOPPING)

    def _progress(self, done: int, total: int, name: str) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.status.setText(messages.batch_progress(done, total, name))

    def _finished(self, result, text: str) -> None:
        self.result = result
        self.status.setText(text)
        # A run that stopped keeps its bar where it stopped: a full bar would say "100 percent" for it.
        if result is not None and not getattr(result, "interrupted", False):
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
        elif self.bar.maximum() == 0:
            self.bar.setRange(0, 1)
            self.bar.setValue(0)
        self.open_btn.setEnabled(bool(result is not None and self.report_path))
        self._running(False)

    def _after_run_focus(self):
        return self.open_btn if self.open_btn.isEnabled() else self.close_btn

    def open_report(self) -> None:
        """By its absolute address (a relative one failed from a window started with a relative path);
        where no program opens it, the person is told where the report is instead of hearing nothing."""
        if not self.report_path:
            return
        path = Path(self.report_path).absolute()
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            text = messages.report_not_opened(str(path))
            self.status.setText(text)
            self.session.say(text)
