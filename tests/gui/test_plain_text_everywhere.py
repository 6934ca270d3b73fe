"""Text from outside CapDesk is shown as it is, never as HTML: a page's words in Fill alt text's review list,
file names in the main window, its status line and its tooltips, a model folder's name in Models.

Qt reads a label's text as HTML whenever it looks like HTML (AutoText). A page whose text was
<h1 style="color:red">PAY NOW</h1> showed a red heading in the review list, and <img src="/dev/zero">
made the window read that file until it ran out of memory (a FIFO there: it hung for ever)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("PySide6")
from conftest import ROOT, SAMPLES  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QTextDocumentFragment  # noqa: E402
from PySide6.QtWidgets import QLabel, QWidget  # noqa: E402

HOSTILE = '<h1 style="color:red">PAY NOW</h1><img src="{src}">'
TIMEOUT = 120_000

# The review list opened in a process of its own: before the fix the label read what the page's <img>
# named (/dev/zero until memory ran out, a FIFO for ever), which must end the child, never the suite.
_REVIEW = textwrap.dedent("""
    import sys
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from capdesk.altfill.rows import FillStatus, ImageRow
    from capdesk.gui.dialogs.altfill_review import ReviewDialog
    from capdesk.session.altfill_review import Choice
    row = ImageRow(page="/site/a.html", line=2, column=1, src="c.png", status=FillStatus.REVIEW,
                   context=sys.argv[1], proposed="A cup of coffee.", needs_review=True, reason=sys.argv[1])
    d = ReviewDialog(None, None, None, [Choice(row, row.proposed)], lambda c: None)
    d.show()
    app.processEvents()
    d.grab()  # painted: whatever the label would load, it has loaded now
    print(int(d.around.textFormat().value), repr(d.around.text()), int(d.why.textFormat().value), flush=True)
""")
_MEMORY_CAP = 3 << 30  # address space for the child: /dev/zero read into memory ends it at this, not the machine's


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_CAP, _MEMORY_CAP))


def _open_review(page_text: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", _REVIEW, page_text], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=30, preexec_fn=_cap_memory)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_the_review_list_shows_a_pages_markup_as_text_without_loading_what_it_names(tmp_path, target):
    if target == "fifo":
        target = str(tmp_path / "fifo.png")
        os.mkfifo(target)  # opened for reading, it would wait for a writer for ever
    text = HOSTILE.format(src=target)
    r = _open_review(text)
    assert r.returncode == 0, r.stderr[-2000:]
    fmt, shown, why_fmt = r.stdout.strip().splitlines()[-1].split(" ", 1)[0], *r.stdout.strip().rsplit(" ", 1)
    assert int(fmt) == Qt.TextFormat.PlainText.value and int(why_fmt) == Qt.TextFormat.PlainText.value
    assert f"Text around it: {text}" in shown  # the literal markup, tags and all


def _not_read_as_html(top: QWidget, marker: str) -> list[str]:
    """Labels under ``top`` showing ``marker`` whose text Qt would read as HTML; tooltips holding it raw."""
    wrong = []
    for w in [top, *top.findChildren(QWidget)]:
        if isinstance(w, QLabel) and marker in w.text() and w.textFormat() != Qt.TextFormat.PlainText:
            wrong.append(f"label {w.objectName() or type(w).__name__}: {w.text()[:80]}")
        if marker in w.toolTip():
            wrong.append(f"tooltip of {type(w).__name__}: {w.toolTip()[:80]}")
    return wrong


def test_every_label_of_the_window_showing_a_file_name_shows_it_as_text(qtbot, open_window, tmp_path):
    """A picture named like HTML (a file name may hold < > and quotes), unreadable, so that its name is in
    the list, the problem shown, the status line and the entry's tooltip."""
    folder = tmp_path / "pics"
    folder.mkdir()
    name = '<h1 style="color:red">PAY NOW<\\h1><img src="x">.png'
    (folder / name).write_bytes(b"not a picture")
    w = open_window()
    w.open_path(folder)
    qtbot.waitUntil(lambda: w.list.count() == 1 and w.session._busy == 0, timeout=TIMEOUT)
    w.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: "PAY NOW" in w.pane.info.text() or "PAY NOW" in w.statusBar().currentMessage(),
                    timeout=TIMEOUT)
    w.statusBar().showMessage(f"Cannot read {name}")
    w.announcer._notify(f"Cannot read {name}")
    assert _not_read_as_html(w, "<h1") == []
    shown = [w for w in w.findChildren(QLabel) if "<h1" in w.text()]
    assert shown, "the name is shown somewhere in the window"
    # The problem, for those who hover: escaped into HTML that reads as the text itself, whatever it holds.
    p = w.session.current
    assert p.error and QTextDocumentFragment.fromHtml(w.list.item(0).toolTip()).toPlainText() == p.error
    p.error = f"{name} cannot be read"
    w._draw_item(w.list.item(0), p)
    tip = w.list.item(0).toolTip()
    assert "<h1" not in tip and QTextDocumentFragment.fromHtml(tip).toPlainText() == p.error


def test_every_label_of_the_dialogs_shows_outside_text_as_text(qtbot, open_window, tmp_path, monkeypatch):
    """The review list (a page's words, a picture's name), Models (a broken model folder's name among its
    problems, when shown) and the job dialogs' status line (a folder's name)."""
    from capdesk.altfill.rows import FillStatus, ImageRow
    from capdesk.gui.dialogs import AltFillDialog, BatchDialog
    from capdesk.gui.dialogs.altfill_review import ReviewDialog
    from capdesk.gui.dialogs.models import ModelsDialog
    from capdesk.session.altfill_review import Choice

    models = tmp_path / "models"
    (models / '<h1 style="color:red">BROKEN</h1>').mkdir(parents=True)  # no manifest: a problem, named
    w = open_window(models=models)
    text = HOSTILE.format(src=SAMPLES / "coffee.png")
    row = ImageRow(page=str(tmp_path / "<h1>page</h1>.html"), line=1, column=1, src="<h1>c</h1>.png",
                   status=FillStatus.REVIEW, context=text, proposed="<h1>A cup.</h1>", needs_review=True,
                   reason=text)
    review = ReviewDialog(w, w.session, None, [Choice(row, row.proposed)], lambda c: None)
    models_dlg = ModelsDialog(w)
    dialogs = [review, models_dlg]
    for cls in (AltFillDialog, BatchDialog):
        dlg = cls(w, str(tmp_path / "<h1>missing</h1>"))
        dlg.start()  # not a folder: said in the status line, with its name
        dialogs.append(dlg)
    for dlg in dialogs:
        qtbot.addWidget(dlg)
        dlg.show()
    assert "<h1" in review.around.text()
    assert any("<h1" in d.status.text() for d in dialogs[2:])
    for dlg in dialogs:
        dlg.grab()
        assert _not_read_as_html(dlg, "<h1") == [], type(dlg).__name__
