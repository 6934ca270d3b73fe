from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.mark.slow  # 3 s measured on two busy cores
def test_batch_on_mixed_folder(mixed_folder, tmp_path):
    before = _digests(mixed_folder)
    report = tmp_path / "report.json"
    r = run_cli("batch", str(mixed_folder), "--report", str(report), "--quiet")
    assert r.returncode == 1, r.stderr
    rows = {os.path.basename(row["path"]): row for row in json.loads(report.read_text())["rows"]}
    good = ["chelsea.png", "Café ☕ überraschung.png", "rocket.jpg", "tiny.bmp"]
    bad = {"empty.jpg": "empty", "notes.png": "not an image", "huge.png": "too large", "truncated.jpg": ""}
    for name in good:
        stem = name.rsplit(".", 1)[0]
        assert rows[name]["status"] == "captioned", rows[name]
        assert (mixed_folder / f"{stem}.txt").read_text(encoding="utf-8").strip() == rows[name]["alt_text"]
        assert (mixed_folder / f"{name}.xmp").exists()
    for name, why in bad.items():
        assert rows[name]["status"] == "failed" and why in rows[name]["error"]
        assert name in r.stderr
        assert not (mixed_folder / f"{name}.xmp").exists()
    after = _digests(mixed_folder)
    assert {k: v for k, v in after.items() if k in before} == before  # originals byte-identical


@pytest.mark.slow  # 2 s measured on two busy cores
def test_second_run_changes_nothing_and_edits_survive(tmp_path):
    from conftest import SAMPLES

    d = tmp_path / "photos"
    d.mkdir()
    for n in ("chelsea.png", "coffee.png"):
        (d / n).write_bytes((SAMPLES / n).read_bytes())
    assert run_cli("batch", str(d), "-q").returncode == 0
    (d / "coffee.txt").write_text("Espresso in my favourite cup.\n", encoding="utf-8")
    snap = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in d.iterdir()}
    r = run_cli("batch", str(d), "-q", "--report", str(tmp_path / "r.csv"))
    assert r.returncode == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in d.iterdir()} == snap
    with open(tmp_path / "r.csv", newline="") as fh:
        rows = {row["path"].rsplit("/", 1)[-1]: row for row in csv.DictReader(fh)}
    assert {n: r["status"] for n, r in rows.items()} == {"chelsea.png": "skipped", "coffee.png": "skipped"}
    # An up-to-date picture's row carries the alt text its sidecar holds, a person's edit included.
    assert rows["coffee.png"]["alt_text"] == "Espresso in my favourite cup."
    assert rows["chelsea.png"]["alt_text"] == (d / "chelsea.txt").read_text(encoding="utf-8").strip() != ""


@pytest.mark.slow  # 2.3 s measured on two busy cores
def test_html_report_shows_images_with_alt_text(tmp_path):
    from conftest import SAMPLES

    d = tmp_path / "site"
    d.mkdir()
    (d / "a <b>.png").write_bytes((SAMPLES / "chelsea.png").read_bytes())
    out = tmp_path / "review.html"
    assert run_cli("batch", str(d), "-q", "--report", str(out), "--sidecar", "txt").returncode == 0
    page = out.read_text(encoding="utf-8")
    alt = (d / "a <b>.txt").read_text(encoding="utf-8").strip()
    assert 'src="site/a%20%3Cb%3E.png"' in page
    assert f'alt="{alt}"' in page and "a &lt;b&gt;.png" in page and "a <b>.png" not in page


def test_usage_errors():
    assert run_cli("batch", "x", "--sidecar", "doc").returncode == 2
    assert run_cli("batch", "x", "--report", "r.pdf").returncode == 2
    assert run_cli("batch", "x", "--xmp-name", "weird").returncode == 2


@pytest.mark.slow  # 28 s measured on two busy cores
def test_interrupt_keeps_everything_written(tmp_path):
    from conftest import SAMPLES

    d = tmp_path / "many"
    d.mkdir()
    for i in range(60):  # the cat: its alt text is never empty, so a written file can be told from a half one
        (d / f"img{i:03d}.png").write_bytes((SAMPLES / "chelsea.png").read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "batch", str(d), "-q", "--sidecar", "txt",
                             "--report", str(tmp_path / "r.json")], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()  # wait for real progress, not for a guessed time
    assert first.strip()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopping after the current image" in err
    report = json.loads((tmp_path / "r.json").read_text())
    written = sorted(p for p in d.iterdir() if p.suffix == ".txt")
    assert written, "nothing was written before the interrupt"
    for p in written:
        assert p.read_text().strip()  # complete files, never half-written
    assert not [p for p in d.iterdir() if p.name.startswith(".")]  # no temp files left behind
    assert report["interrupted"] is True and len(report["rows"]) < 60
    # the next run finishes the job without redoing what is done
    r = run_cli("batch", str(d), "-q", "--sidecar", "txt")
    assert r.returncode == 0 and len([p for p in d.iterdir() if p.suffix == ".txt"]) == 60


def test_threshold_is_one_rule_for_wording_and_review(tmp_path):
    """--threshold is the describer's threshold: under it a caption is said as 'Probably ...' and flagged,
    in the sidecar and the report alike (the GUI's Confidence threshold does the same)."""
    from conftest import SAMPLES

    d = tmp_path / "photos"
    d.mkdir()
    (d / "astronaut.png").write_bytes((SAMPLES / "astronaut.png").read_bytes())
    report = tmp_path / "r.json"
    r = run_cli("batch", str(d), "-q", "--threshold", "0.99", "--report", str(report), "--ocr", "never")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(report.read_text())["rows"]
    assert row["alt_text"].startswith("Probably ") and row["needs_review"] and "unsure" in row["reason"]
    assert (d / "astronaut.txt").read_text(encoding="utf-8").strip() == row["alt_text"]
    for bad in ("1.5", "-0.1", "nan", "high"):
        r = run_cli("batch", str(d), "--threshold", bad)
        assert r.returncode == 2 and "--threshold" in r.stderr and "from 0 to 1" in r.stderr, bad


@pytest.mark.slow  # 2.4 s measured on two busy cores
def test_avif_pictures_in_a_folder_are_described(tmp_path):
    """AVIF (the format of many phone and web pictures) is found in folders, not only when named."""
    from conftest import SAMPLES
    from PIL import Image

    d = tmp_path / "photos"
    d.mkdir()
    Image.open(SAMPLES / "chelsea.png").convert("RGB").save(d / "chelsea.avif", quality=90)
    report = tmp_path / "report.json"
    r = run_cli("batch", str(d), "--report", str(report), "--quiet")
    assert r.returncode == 0, r.stderr
    rows = json.loads(report.read_text())["rows"]
    assert [os.path.basename(row["path"]) for row in rows] == ["chelsea.avif"]
    assert rows[0]["status"] == "captioned", rows[0]
    assert (d / "chelsea.txt").read_text(encoding="utf-8").strip() == rows[0]["alt_text"]
