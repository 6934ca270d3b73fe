"""The review file as a publisher uses it in a spreadsheet: the columns in the order a person works
(``write``, ``text``, ``picture``, ``context``, then the rest, every column of before still there and read
by name), ``said_as`` in plain words (the old words still read), which picture by its file name or a PDF's
page; the file is the person's and is never rewritten, and applied again it changes nothing and says
"already written". The HTML report shows every picture beside its text, HEIC and AVIF included."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES
from PIL import Image
from test_pdf_captions import make_pdf

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.review import ALREADY, CHANGED, COLUMNS, apply_review, digests_path, read_review, write_review
from capdesk.altfill.rows import SAID_WORDS

# The columns before they were put in a person's order, in their order then.
OLD_COLUMNS = ("document", "location", "picture", "text", "said_as", "reason", "trust", "write", "context",
               "document_sha256", "picture_sha256", "roots", "picture_roots")
OLD_SAID = {"fact", "probably", "withheld", "none", "caption", ""}


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def cli(capsys, *args: str) -> tuple[int, str]:
    from capdesk.cli.main import main

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or ()), list(reader)


def save(path: Path, columns, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


@pytest.fixture
def folder(tmp_path) -> Path:
    d = tmp_path / "site"
    (d / "img").mkdir(parents=True)
    for name in ("coffee.png", "astronaut.png"):
        shutil.copy(SAMPLES / name, d / "img" / name)
    shutil.copy(SAMPLES / "coffee.png", d / "img" / "café au lait.png")
    (d / "index.html").write_text('<p><img src="img/coffee.png"></p>\n<p><img src="img/astronaut.png"></p>\n'
                                  '<p><img src="img/caf%C3%A9%20au%20lait.png" alt="A cup."></p>\n', encoding="utf-8")
    make_pdf(d / "moons.pdf")
    return d


def test_the_columns_are_in_a_persons_order_and_say_which_picture_in_plain_words(folder, tmp_path, capsys):
    review = tmp_path / "review.csv"
    code, err = cli(capsys, str(folder), "--dry-run", "-q", "--ocr", "never", "--provider", "cpu",
                    "--review-out", str(review))
    assert code == 0, err
    columns, rows = read_rows(review)
    assert columns == list(COLUMNS) and columns[:4] == ["write", "text", "picture", "context"]
    assert set(OLD_COLUMNS) < set(columns)  # no column of before taken away or renamed
    by_name = {r["picture_name"]: r for r in rows}
    assert set(by_name) == {"coffee.png", "astronaut.png", "café au lait.png", "page 1"}
    assert [r["picture_name"] for r in rows if r["document"].endswith("moons.pdf")] == ["page 1"] * 3
    assert {r["said_as"] for r in rows} <= set(SAID_WORDS.values())
    assert (by_name["astronaut.png"]["said_as"], by_name["astronaut.png"]["write"]) == ("guess", "no")
    # The coffee's table is seen by the detector alone: "A cup of coffee. Probably a table." is a guess.
    assert by_name["coffee.png"]["said_as"] == "guess" and by_name["café au lait.png"]["said_as"] == (
        "already in the document")
    moons = [r for r in rows if r["document"].endswith("moons.pdf")]
    assert [r["said_as"] for r in moons[:2]] == ["from the caption"] * 2


def test_both_words_of_said_as_are_read(tmp_path, folder, describer):
    review = tmp_path / "review.csv"
    write_review(run_alt_fill([folder / "index.html"], describer, dry_run=True), review)
    columns, rows = read_rows(review)
    for r, word in zip(rows, ("probably", "guess", "tags only")):
        r["said_as"] = word
    save(review, columns, rows)
    got, _ = read_review(review)
    assert [r.said_as for r in got] == ["probably", "probably", "maybe"]


def test_the_review_is_never_rewritten_and_applied_again_says_already_written(folder, tmp_path, capsys):
    review = tmp_path / "review.csv"
    code, err = cli(capsys, str(folder), "--dry-run", "-q", "--ocr", "never", "--provider", "cpu",
                    "--review-out", str(review))
    assert code == 0, err
    columns, rows = read_rows(review)
    for r in rows:
        if r["picture_name"] == "astronaut.png":
            r["write"], r["text"] = "yes", "An astronaut in an orange suit."
    save(review, columns, rows)
    saved, side = review.read_bytes(), digests_path(review).read_bytes()
    code, err = cli(capsys, "--review-in", str(review), "-q")
    assert code == 0, err
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert 'alt="An astronaut in an orange suit."' in page
    assert review.read_bytes() == saved and digests_path(review).read_bytes() == side  # the person's file, as saved
    written = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    code, err = cli(capsys, "--review-in", str(review), "-q")
    assert code == 0, err
    assert f"capdesk: {folder / 'index.html'}: {ALREADY}" in err.splitlines()
    assert f"capdesk: {folder / 'moons.pdf'}: {ALREADY}" in err.splitlines()
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == written
    assert review.read_bytes() == saved
    # Another text put on a reviewed picture since: the file changed, and is left and named as before.
    (folder / "index.html").write_text(page.replace("An astronaut in an orange suit.", "Someone else's words."),
                                       encoding="utf-8")
    code, err = cli(capsys, "--review-in", str(review), "-q")
    assert code == 1 and f"capdesk: {folder / 'index.html'}: {CHANGED}" in err.splitlines(), err
    assert "Someone else's words." in (folder / "index.html").read_text(encoding="utf-8")


def test_a_review_in_the_old_column_order_and_words_still_applies(folder, tmp_path, describer):
    review = tmp_path / "review.csv"
    write_review(run_alt_fill([folder / "index.html"], describer, dry_run=True, write="all"), review)
    _, rows = read_rows(review)
    old = {"fact": "fact", "guess": "probably", "already in the document": ""}
    for r in rows:
        r["said_as"] = old.get(r["said_as"], "withheld")
        if r["picture_name"] == "astronaut.png":
            r["write"], r["text"] = "yes", "An astronaut in an orange suit."
    old_review = tmp_path / "old order.csv"
    save(old_review, OLD_COLUMNS, rows)
    assert read_rows(old_review)[0] == list(OLD_COLUMNS)
    done = apply_review(old_review, backup_dir=tmp_path / "backups")
    assert not done.failed and [r.status for r in done.images][:2] == [FillStatus.FILLED, FillStatus.FILLED]
    assert 'alt="An astronaut in an orange suit."' in (folder / "index.html").read_text(encoding="utf-8")


def test_the_html_report_shows_every_picture_heic_and_avif_too(tmp_path, describer):
    pillow_heif = pytest.importorskip("pillow_heif", reason="needs pillow-heif (pip install -e .)")
    photo = Image.open(SAMPLES / "chelsea.png").convert("RGB")
    pillow_heif.from_pillow(photo).save(str(tmp_path / "IMG_0001.HEIC"), quality=80)
    photo.save(tmp_path / "cat.avif", quality=60)
    shutil.copy(SAMPLES / "coffee.png", tmp_path / "coffee.png")
    page = tmp_path / "index.html"
    page.write_text('<img src="IMG_0001.HEIC">\n<img src="cat.avif">\n<img src="coffee.png">\n', encoding="utf-8")
    result = run_alt_fill([page], describer, dry_run=True, write="all")
    assert [r.status for r in result.images] == [FillStatus.FILLED] * 3, [r.error for r in result.images]
    from capdesk.altfill.report import write_report

    write_report(result, tmp_path / "report.html")
    shown = (tmp_path / "report.html").read_text(encoding="utf-8")
    # The HEIC and AVIF pictures as small JPEGs in the report; the PNG a browser shows, by a link to it.
    assert shown.count('<img src="data:image/jpeg;base64,') == 2 and '<img src="coffee.png"' in shown
    assert 'src="IMG_0001.HEIC"' not in shown and 'src="cat.avif"' not in shown
    assert "said as: fact" in shown
