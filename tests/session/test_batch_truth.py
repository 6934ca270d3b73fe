"""What a batch and the picture list say is what happened: written alt texts with how many are empty and
how many need review, in the spoken outcome, the CLI's summary, the reports, the XMP and the list (after a
restart too); a cancelled run says how far it got; "No alt text" is explained once, then said briefly; a
person's saved words end the "needs review" line. Real model (the shipped one: the samples rocket.jpg and
chelsea.png are not said as fact by it, and rocket.jpg gets no alt text at all), real files, real threads."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from capdesk.session import messages
from capdesk.session.core import Kind, PictureStatus, Session
from capdesk.session.jobs import BatchJob, batch_report_path
from capdesk.session.settings import Settings
from capdesk.session.tasks import ThreadRunner
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter
from capdesk.sidecars.xmp import read_alt_text, read_review, render_xmp

TIMEOUT = 240


@pytest.fixture
def pair(tmp_path) -> Path:
    """chelsea.png ('May contain: a cat.', needs review) and rocket.jpg (no alt text, needs review)."""
    d = tmp_path / "pair"
    d.mkdir()
    for n in ("chelsea.png", "rocket.jpg"):
        shutil.copy(SAMPLES / n, d / n)
    return d


def _session(settings_file) -> tuple[Session, ThreadRunner, list]:
    runner = ThreadRunner()
    s = Session(Settings(ocr="never"), runner, lambda: True)
    said: list = []
    s.message.connect(said.append)
    return s, runner, said


def _settle(s: Session, runner: ThreadRunner, until=lambda: True) -> None:
    assert runner.pump(lambda: s._busy == 0 and until(), TIMEOUT)


def _run(s: Session, runner: ThreadRunner, job: BatchJob) -> str:
    finished: list[str] = []
    job.on_finished = lambda result, text: finished.append(text)
    assert job.start()
    _settle(s, runner, lambda: bool(finished))
    return finished[0]


# -- the CLI ----------------------------------------------------------------------------------
@pytest.mark.slow  # 2 s measured on two busy cores
def test_cli_summary_report_and_xmp_say_empty_and_review(pair, tmp_path):
    report = tmp_path / "r.json"
    r = run_cli("batch", str(pair), "-q", "--ocr", "never", "--report", str(report))
    assert r.returncode == 0, r.stderr
    assert re.search(r"capdesk: 2 captioned \(1 empty, both need review\) in [0-9.]+ s\n", r.stderr), r.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["counts"] == {"captioned": 2} and data["interrupted"] is False  # the old fields, as they were
    assert {k: data["tally"][k] for k in ("written", "empty", "review", "failed", "done", "listed")} == {
        "written": 2, "empty": 1, "review": 2, "failed": 0, "done": 2, "listed": 2}
    assert data["summary"] == "2 captioned (1 empty, both need review)"
    # The XMP says so too, beside the alt text and every field it had.
    flag, why = read_review(pair / "rocket.jpg.xmp")
    assert flag is True and "alt text is empty" in why and read_alt_text(pair / "rocket.jpg.xmp") == ""
    assert read_review(pair / "chelsea.png.xmp")[0] is True
    xmp = (pair / "chelsea.png.xmp").read_text(encoding="utf-8")
    assert 'capdesk:AltTextSource="machine"' in xmp and "capdesk:Model=" in xmp
    # A second run finds them up to date, and still says they need review (from the ledger's flag).
    again = run_cli("batch", str(pair), "-q", "--ocr", "never", "--report", str(tmp_path / "r.html"))
    assert again.returncode == 0 and "2 skipped (both need review)" in again.stderr, again.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<p>2 skipped (both need review)." in page


# -- the window's batch job: spoken outcome, the list, a restart ------------------------------------
def test_batch_outcome_and_the_list_say_empty_and_review_also_after_a_restart(settings_file, pair):
    s, runner, said = _session(settings_file)
    report = batch_report_path(pair, ".json")
    s.open_paths(pair)
    _settle(s, runner, lambda: s.current.described is not None)
    text = _run(s, runner, BatchJob(s, s.writer, pair, report=str(report)))
    assert text == (f"Batch export finished: 2 alt texts written (1 empty, both need review). "
                    f"Report: {report.name} (Open report, Alt+P)")
    assert said[-1].text == text and said[-1].to_screen_reader
    labels = {p.name: p.label for p in s.pictures.values()}
    assert labels == {"chelsea.png": "chelsea.png, alt text written by CapDesk, needs review",
                      "rocket.jpg": "rocket.jpg, empty alt text written by CapDesk, needs review"}
    s.close()
    # CapDesk started again: the list reads the same from the sidecars and the ledger.
    s2, runner2, _ = _session(settings_file)
    s2.open_paths(pair)
    assert s2.pictures[str(pair / "rocket.jpg")].status is PictureStatus.WRITTEN_EMPTY
    _settle(s2, runner2, lambda: s2.current.described is not None)  # the first is described on opening
    statuses = {p.name: p.status for p in s2.pictures.values()}
    assert statuses == {"chelsea.png": PictureStatus.WRITTEN_REVIEW, "rocket.jpg": PictureStatus.WRITTEN_EMPTY}
    s2.close()


def test_the_report_is_kept_out_of_the_picture_folder(tmp_path, monkeypatch):
    data = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(tmp_path)
    folder = Path("site") / "images"  # as typed: relative
    noon = time.mktime((2026, 6, 15, 12, 0, 0, 0, 0, -1))
    first = batch_report_path(folder, ".html", when=noon)
    assert first.is_absolute() and first.parent == data / "capdesk" / "batch-reports"
    assert first.name == "images 2026-06-15 12.00.00.html"
    first.parent.mkdir(parents=True)
    first.write_text("an earlier run's report", encoding="utf-8")
    second = batch_report_path(folder, ".html", when=noon)  # the same second: a new name, the old report kept
    assert second != first and second.parent == first.parent and second.name.endswith(" (2).html")


def test_a_cancelled_batch_says_how_far_it_got(settings_file, tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(24):
        shutil.copy(SAMPLES / "chelsea.png", d / f"c{i:02d}.png")
    s, runner, said = _session(settings_file)
    job = BatchJob(s, s.writer, d)
    job.on_progress = lambda done, total, name: job.cancel() if done >= 2 else None
    text = _run(s, runner, job)
    rows = job.result.rows
    assert job.result.interrupted and 2 <= len(rows) < 24
    n = len(rows)
    assert text == (f"Batch export cancelled after {n} of 24 pictures: {n} alt texts written "
                    f"({'both' if n == 2 else 'all'} need review)")
    assert "percent" not in text and "100" not in text
    assert messages.BATCH_STOPPING in [m.text for m in said]
    s.close()


# -- "No alt text": in full once, then briefly ---------------------------------------------------
def test_no_alt_text_is_explained_once_then_said_briefly(settings_file, tmp_path):
    d = tmp_path / "unknown"
    d.mkdir()
    for n in ("r1.jpg", "r2.jpg"):
        shutil.copy(SAMPLES / "rocket.jpg", d / n)
    s, runner, said = _session(settings_file)
    s.open_paths(d)
    _settle(s, runner, lambda: s.current.described is not None)
    first = s.current
    full = [m.text for m in said if m.kind is Kind.DESCRIPTION]
    assert len(full) == 1 and full[0].startswith("No alt text: the picture is unlike")
    assert full[0].endswith("Write one in the Alt text box and save it with Ctrl+S.") and len(full[0].split()) > 30
    s.select(str(d / "r2.jpg"))
    _settle(s, runner, lambda: s.current.described is not None)
    brief = [m.text for m in said if m.kind is Kind.DESCRIPTION][-1]
    assert brief == "No alt text: nothing was recognised."
    assert s.current.reason == first.reason and "the alt text is empty" in s.current.reason  # kept for the details
    s.close()


# -- a person's words end the review -----------------------------------------------------------
def test_saving_alt_text_ends_the_needs_review_reason(settings_file, pair):
    s, runner, _ = _session(settings_file)
    s.open_paths(pair / "rocket.jpg")
    _settle(s, runner, lambda: s.current.described is not None)
    p = s.current
    assert p.alt_text == "" and "the alt text is empty" in p.reason
    assert s.save_current("A rocket lifting off at dusk.")
    assert p.reason is None and p.status is PictureStatus.SAVED
    assert read_review(pair / "rocket.jpg.xmp") == (False, None)  # a person's words need no review
    s.close()


# -- a watched picture ----------------------------------------------------------------------
@pytest.mark.slow  # 1.2 s measured on two busy cores
def test_a_watched_picture_is_listed_as_written_and_needing_review(settings_file, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    s, runner, said = _session(settings_file)
    s.add_watch_folder(inbox)
    shutil.copy(SAMPLES / "chelsea.png", inbox / "chelsea.png")
    key = str(inbox / "chelsea.png")
    _settle(s, runner, lambda: key in s.pictures and s.pictures[key].status
            not in (PictureStatus.NEW, PictureStatus.DESCRIBING))
    p = s.pictures[key]
    assert (inbox / "chelsea.txt").read_text(encoding="utf-8").strip() == p.alt_text
    assert p.status is PictureStatus.WRITTEN_REVIEW
    assert p.label == "chelsea.png, alt text written by CapDesk, needs review"
    s.remove_watch_folders([str(inbox)])
    s.close()


# -- the ledger and the XMP keep the flag; older files still read ----------------------------------
def test_a_ledger_from_before_the_review_flag_is_read_and_stays_readable_by_it(tmp_path):
    db = tmp_path / "old.sqlite"
    old = sqlite3.connect(db)
    cols = ("path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, image TEXT NOT NULL, image_path TEXT NOT NULL, "
            "alt_text TEXT, source TEXT, model TEXT, confidence REAL, written_at REAL")
    old.executescript(f"CREATE TABLE sidecars ({cols}); CREATE TABLE intents ({cols});"
                      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);")
    old.execute("INSERT INTO sidecars VALUES ('/p/a.txt', 'x', '1:2', '/p/a.jpg', 'A cat.', 'machine', 'm', 0.9, 1)")
    old.commit()
    old.close()
    lg = Ledger(db)
    assert lg.error is None and lg.set_aside is None  # kept, not rebuilt
    rec = lg.get(Path("/p/a.txt"))
    assert rec["alt_text"] == "A cat." and rec["review"] is None and rec["reason"] is None
    lg.intend(Path("/p/b.txt"), "y", "1:2", Path("/p/b.jpg"), AltText(""), True, "nothing recognised")
    lg.confirm(Path("/p/b.txt"))
    assert lg.get(Path("/p/b.txt"))["review"] is True and lg.get(Path("/p/b.txt"))["reason"] == "nothing recognised"
    lg.close()
    # An earlier CapDesk writes the same ledger as it always did; its new words carry no stale flag.
    earlier = sqlite3.connect(db)
    earlier.execute("INSERT OR REPLACE INTO sidecars VALUES "
                    "('/p/b.txt', 'z', '1:2', '/p/b.jpg', 'A rocket.', 'machine', 'm', 0.8, 2)")
    earlier.execute("INSERT OR REPLACE INTO intents SELECT * FROM sidecars WHERE path = '/p/b.txt'")
    earlier.commit()
    earlier.close()
    lg = Ledger(db)
    rec = lg.get(Path("/p/b.txt"))
    assert rec["alt_text"] == "A rocket." and rec["review"] is None
    lg.close()


def test_the_xmp_review_flag_is_set_changed_and_absent_in_older_files(tmp_path):
    xmp = tmp_path / "a.jpg.xmp"
    older = render_xmp(None, AltText("A cat.", model="m", confidence=0.9))
    xmp.write_text(older, encoding="utf-8")
    assert read_review(xmp) == (None, None) and read_alt_text(xmp) == "A cat."
    flagged = render_xmp(older.replace("<rdf:Description ", '<rdf:Description xmlns:ex="urn:ex" ex:Keep="yes" '),
                         AltText("Probably a cat."), review=True, reason="the model was unsure")
    xmp.write_text(flagged, encoding="utf-8")
    assert read_review(xmp) == (True, "the model was unsure") and 'ex:Keep="yes"' in flagged
    xmp.write_text(render_xmp(flagged, AltText("Our cat.", "human"), review=False), encoding="utf-8")
    assert read_review(xmp) == (False, None) and read_alt_text(xmp) == "Our cat."
    assert 'ex:Keep="yes"' in xmp.read_text(encoding="utf-8")


def test_the_writer_keeps_the_flag_in_both_places(tmp_path):
    image = tmp_path / "a.png"
    shutil.copy(SAMPLES / "chelsea.png", image)
    w = SidecarWriter(SidecarOptions(), Ledger(tmp_path / "ledger.sqlite"))
    w.write(image, AltText("May contain: a cat.", model="m"), review=True, reason="withheld")
    rec = w.own_record(image)
    assert rec["review"] is True and rec["reason"] == "withheld"
    assert read_review(tmp_path / "a.png.xmp") == (True, "withheld")
    assert [o.action for o in w.write(image, AltText("May contain: a cat.", model="m"), review=True,
                                      reason="withheld")] == ["unchanged", "unchanged"]
    w.ledger.close()
