"""The Batch dialog and the window say what a batch did: a cancelled run is never shown as 100 percent, a
new run shows no number before its start is said, the report goes to CapDesk's own folder (or where the
person names), "Open report" gives an absolute file URL and says where the report is when nothing opens
it, and the caption details stop saying "needs review" once a person saved alt text. Qt offscreen over
the shipped model and real files."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from conftest import SAMPLES  # noqa: E402

TIMEOUT = 240_000


@pytest.fixture
def window(open_window):
    w = open_window()
    w.session.screen_reader = lambda: True  # what a screen reader user would be told goes to the announcer
    return w


def _all_of(n: int) -> str:
    return "needs" if n == 1 else ("both need" if n == 2 else "all need")


@pytest.mark.slow  # 4 s measured on two busy cores
def test_batch_dialog_cancel_restart_report_and_open(qtbot, window, tmp_path, monkeypatch):
    from capdesk.gui.announcer import FOCUS_SETTLE_S
    from capdesk.gui.dialogs import BatchDialog
    from capdesk.gui.dialogs import common as job_dialogs

    monkeypatch.chdir(tmp_path)
    d = tmp_path / "many"
    d.mkdir()
    for i in range(16):
        shutil.copy(SAMPLES / "chelsea.png", d / f"c{i:02d}.png")
    dlg = BatchDialog(window, "many")  # relative, as a window started with a relative path has it
    qtbot.addWidget(dlg)
    dlg.xmp.setChecked(False)
    values: list[tuple[float, int]] = []
    dlg.bar.valueChanged.connect(lambda v: values.append((time.monotonic(), v)))
    started_at = time.monotonic()
    dlg.start()
    assert dlg.bar.maximum() == 0 and dlg.bar.value() < 1  # busy: no number before the start is heard
    assert window.announcer.said[-1] == "Batch export started in many"
    report = Path(dlg.report_path)
    assert report.is_absolute() and d not in report.parents and report.name.startswith("many ")
    qtbot.waitUntil(lambda: any(d.glob("*.txt")), timeout=TIMEOUT)
    dlg.cancel()
    qtbot.waitUntil(lambda: not dlg.job.running, timeout=TIMEOUT)
    done = len(dlg.result.rows)
    assert dlg.result.interrupted and 1 <= done < 16
    assert dlg.status.text().startswith(f"Batch export cancelled after {done} of 16 pictures: ")
    qtbot.waitUntil(lambda: dlg.bar.maximum() == 16, timeout=10_000)  # shown once the start has been said
    assert dlg.bar.value() == done  # where it got to, never full
    assert [v for t, v in values if v > 0 and t < started_at + FOCUS_SETTLE_S] == []
    assert report.exists() and not list(d.glob("*.html"))

    # Again, to the end: the bar starts over, and says nothing until the new start has been said.
    values.clear()
    again_at = time.monotonic()
    dlg.start()
    assert dlg.bar.maximum() == 0 and dlg.bar.value() < 1
    qtbot.waitUntil(lambda: not dlg.job.running, timeout=TIMEOUT)
    assert [v for t, v in values if v > 0 and t < again_at + FOCUS_SETTLE_S] == []
    qtbot.waitUntil(lambda: dlg.bar.maximum() == 16, timeout=10_000)
    assert not dlg.result.interrupted and dlg.bar.value() == 16
    rest = 16 - done
    assert dlg.status.text().startswith(
        f"Batch export finished: {rest} alt text{'s' if rest > 1 else ''} written ({_all_of(rest)} review), "
        f"{done} already up to date ({_all_of(done)} review)")
    # The list says what is on disk: written, and needing review.
    window.open_path(d)
    qtbot.waitUntil(lambda: window.session._busy == 0, timeout=TIMEOUT)
    texts = {window.list.item(i).text() for i in range(window.list.count())}
    assert texts == {f"c{i:02d}.png, alt text written by CapDesk, needs review" for i in range(16)}

    # Open report: an absolute file URL; where nothing opens it, the person is told where it is.
    opened = []

    class NoLauncher:
        @staticmethod
        def openUrl(url):  # noqa: N802 (Qt's name)
            opened.append(url)
            return False

    monkeypatch.setattr(job_dialogs, "QDesktopServices", NoLauncher)  # batch and alt-fill share it
    dlg.open_report()
    assert opened[0].isLocalFile() and Path(opened[0].toLocalFile()) == Path(dlg.report_path).absolute()
    said = f"No program opened the report. It is saved at {Path(dlg.report_path).absolute()}"
    assert window.announcer.said[-1] == said and dlg.status.text() == said


def test_a_named_report_file_is_used(qtbot, window, tmp_path):
    from capdesk.gui.dialogs import BatchDialog

    dlg = BatchDialog(window, str(tmp_path / "pics"))
    qtbot.addWidget(dlg)
    dlg.report_fmt.setCurrentIndex(1)  # CSV
    dlg.report_file.setText(str(tmp_path / "reviews" / "june"))
    assert dlg.report_file_for(tmp_path / "pics", ".csv") == tmp_path / "reviews" / "june.csv"
    dlg.report_file.setText(str(tmp_path))  # a folder: the usual name, inside it
    named = dlg.report_file_for(tmp_path / "pics", ".csv")
    assert named.parent == tmp_path and named.name.startswith("pics ") and named.suffix == ".csv"


@pytest.mark.slow  # 2 s measured on two busy cores
def test_details_stop_saying_needs_review_once_alt_text_is_saved(qtbot, window, tmp_path):
    d = tmp_path / "one"
    d.mkdir()
    shutil.copy(SAMPLES / "rocket.jpg", d / "rocket.jpg")
    window.open_path(d)
    qtbot.waitUntil(lambda: window.session.current is not None and window.session.current.described is not None
                    and window.session._busy == 0, timeout=TIMEOUT)
    assert "needs review: " in window.pane.info.text() and "the alt text is empty" in window.pane.info.text()
    window.pane.alt.setPlainText("A rocket lifting off at dusk.")
    window.save_current()
    assert "needs review" not in window.pane.info.text() and "model " in window.pane.info.text()
    assert window.list.item(0).text() == "rocket.jpg, alt text saved"
