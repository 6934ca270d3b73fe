"""The window's 'Fill alt text in web pages' entry and dialog, driven for real (Qt offscreen) over
the real model and a tiny site on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from conftest import SAMPLES  # noqa: E402
from PySide6.QtGui import QKeySequence  # noqa: E402
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QWidget  # noqa: E402

TIMEOUT = 120_000


@pytest.fixture
def window(open_window):
    return open_window()


def test_file_menu_has_the_entry_with_a_key_of_its_own(window):
    actions = [a for m in window.menuBar().actions() for a in m.menu().actions() if not a.isSeparator()]
    (entry,) = [a for a in actions if a.text().replace("&", "") == "Fill alt text in pages and documents…"]
    assert entry in window.menuBar().actions()[0].menu().actions()  # the File menu
    assert entry.shortcut() == QKeySequence("Ctrl+Shift+A")
    keys = [a.shortcut().toString() for a in actions if not a.shortcut().isEmpty()]
    assert keys.count("Ctrl+Shift+A") == 1


def test_dialog_fills_a_site_with_progress_and_a_report(qtbot, window, tmp_path):
    from capdesk.gui.dialogs import AltFillDialog
    from capdesk.gui.widgets import mnemonics

    site = tmp_path / "site"
    (site / "img").mkdir(parents=True)
    shutil.copy(SAMPLES / "astronaut.png", site / "img" / "astronaut.png")
    page = site / "index.html"
    original = b'<p>Hi</p>\r\n<img src="img/astronaut.png">\r\n<img src="img/astronaut.png" alt="">\r\n'
    page.write_bytes(original)
    dlg = AltFillDialog(window, str(site))
    qtbot.addWidget(dlg)
    dlg.show()
    # Every control is named for a screen reader, and no two share an Alt+letter.
    unnamed = [w for w in dlg.findChildren(QWidget) if isinstance(w, (QAbstractButton, QLineEdit, QComboBox))
               and w.isVisibleTo(dlg) and not w.accessibleName().strip()]
    assert not unnamed
    assert not {k: v for k, v in mnemonics(dlg).items() if len(v) > 1}

    dlg.report_fmt.setCurrentIndex(1)  # JSON
    dlg.dry_run.setChecked(True)  # first a preview: nothing changes
    dlg.start()
    qtbot.waitUntil(lambda: dlg.job is not None and not dlg.job.running, timeout=TIMEOUT)
    assert page.read_bytes() == original
    assert dlg.status.text().startswith("Alt text preview finished: ")
    assert json.loads(Path(dlg.report_path).read_text())["dry_run"] is True

    dlg.dry_run.setChecked(False)
    dlg.review_first.setChecked(False)  # written at once, as the command line writes, guesses too
    dlg.write_choice.setCurrentIndex(2)
    assert dlg.write == "all"
    dlg.start()
    qtbot.waitUntil(lambda: not dlg.job.running, timeout=TIMEOUT)
    text = page.read_bytes()
    assert text.startswith(b'<p>Hi</p>\r\n<img src="img/astronaut.png" alt="') and text.count(b"\r\n") == 3
    assert text.endswith(b'<img src="img/astronaut.png" alt="">\r\n')  # decorative: left as the author wrote it
    report = json.loads(Path(dlg.report_path).read_text())
    assert [r["status"] for r in report["images"]] == ["filled", "kept"] and report["dry_run"] is False
    assert Path(dlg.report_path).parent != site  # nothing added to the site
    assert sorted(p.name for p in site.iterdir()) == ["img", "index.html"]
    assert dlg.bar.value() == 1 and dlg.open_btn.isEnabled() and not dlg.cancel_btn.isEnabled()
    assert dlg.focusWidget() is dlg.open_btn  # where the outcome is read
    assert dlg.status.text().startswith("Alt text finished: ")
    assert dlg.status.accessibleName() == f"Alt text status: {dlg.status.text()}"
    assert window.statusBar().currentMessage() == dlg.status.text()


def test_the_window_job_takes_a_folder_or_one_page_or_document(tmp_path):
    from capdesk.session.altfill_job import AltFillJob

    for name, ok in (("book.epub", True), ("report.docx", True), ("slides.pptx", True), ("page.html", True),
                     ("notes.txt", False)):
        (tmp_path / name).write_bytes(b"x")
        assert AltFillJob(None, tmp_path / name).can_start() is ok, name
    assert AltFillJob(None, tmp_path).can_start()
    assert not AltFillJob(None, tmp_path / "missing.docx").can_start()
