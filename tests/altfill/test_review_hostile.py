"""A review file is plain text that anyone who edits it can change, and the files it names sit in folders
others may write in. ``--review-in`` writes only inside the folders the review was made for and only onto
the picture it was reviewed on; it reads every file it names with a bound, never waiting on a FIFO; a
review too large, or saved under another name, is said in one line or applied as the original is; and the
apostrophe that keeps a spreadsheet from running a cell is taken off every cell it was put on."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import threading
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES

from capdesk.altfill import file_checks, review_file
from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.review import COLUMNS, ReviewError, apply_review, digests_path, read_review, write_review
from capdesk.altfill.review_bind import OUTSIDE_REVIEW

NOTES = b"# my notes\n![](photo.png)\n"


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def cli(capsys, *args: str) -> tuple[int, str]:
    from capdesk.cli.main import main

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def save(path: Path, rows: list[dict[str, str]], columns=COLUMNS) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:  # as a person's script or spreadsheet saves it
        w = csv.DictWriter(f, list(columns), lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


@pytest.fixture
def site(tmp_path, describer) -> tuple[Path, Path, list[dict[str, str]]]:
    """A site of two pages (one picture each), the review of a dry run over it, and that review's rows;
    beside the site, a private page the review was not made for."""
    d = tmp_path / "site"
    d.mkdir()
    shutil.copy(SAMPLES / "coffee.png", d / "c.png")
    shutil.copy(SAMPLES / "astronaut.png", d / "b.png")
    (d / "a.html").write_text('<img src="c.png">\n', encoding="utf-8")
    (d / "b.html").write_text('<img src="b.png">\n', encoding="utf-8")
    private = tmp_path / "private"
    private.mkdir()
    (private / "notes.md").write_bytes(NOTES)
    shutil.copy(SAMPLES / "chelsea.png", private / "photo.png")
    review = tmp_path / "rev.csv"
    write_review(run_alt_fill([d], describer, dry_run=True), review)
    rows = rows_of(review)
    assert [Path(r["document"]).name for r in rows] == ["a.html", "b.html"]
    for r in rows:
        r["write"] = "yes"
    return d, review, rows


def forged_row(like: dict[str, str], document: str) -> dict[str, str]:
    """A row for a document the review was not made for, with that document's true digest."""
    digest = hashlib.sha256(Path(document).read_bytes()).hexdigest()
    return dict(like, document=document, location="line 2", picture="photo.png", text="Injected by the review file",
                write="yes", document_sha256=digest, picture_sha256="")


# b1: the review names any document the user can write


def test_a_row_naming_a_document_outside_the_review_s_folders_is_refused_by_name(site, tmp_path, capsys):
    d, review, rows = site
    notes = tmp_path / "private" / "notes.md"
    (d / "linked.md").symlink_to(notes)  # a link in the site leading out of it
    named = [str(notes), f"{d}/../private/notes.md", str(d / "linked.md")]
    save(review, rows + [forged_row(rows[0], n) for n in named])
    code, err = cli(capsys, "--review-in", str(review), "-q")
    assert code == 1, err
    assert notes.read_bytes() == NOTES  # never written, by any of its names
    said = [line for line in err.splitlines() if any(line.startswith(f"capdesk: {n}: ") for n in named)]
    assert len(said) == 3, err  # one line each
    assert f"capdesk: {notes}: {OUTSIDE_REVIEW}" in err and "named through '..'" in err
    assert f"capdesk: {d / 'linked.md'}: {OUTSIDE_REVIEW}" in err
    # The rest of the review is written.
    assert 'alt="' in (d / "a.html").read_text() and 'alt="' in (d / "b.html").read_text()


def test_the_review_records_the_folders_of_its_run(site):
    d, review, _ = site
    [(roots, pictures)] = {(r["roots"], r["picture_roots"]) for r in rows_of(review)}
    assert str(d) in roots and str(d) in pictures
    rows, _ = read_review(review)
    assert all(r.roots and str(d) in r.roots for r in rows)


def test_a_review_saved_under_another_name_applies_and_then_changes_nothing(site, tmp_path, capsys):
    d, review, rows = site
    renamed = tmp_path / "review (edited).csv"
    save(renamed, rows)  # "Save As": the side digests file stays with the old name
    assert not digests_path(renamed).exists()
    code, err = cli(capsys, "--review-in", str(renamed), "-q")
    assert code == 0, err
    written = {p.name: p.read_bytes() for p in d.iterdir()}
    assert b'alt="' in written["a.html"]
    # Its digests now say the pages as written: applied again, nothing changes and nothing fails.
    again = apply_review(renamed)
    assert not again.failed and {p.status for p in again.pages} == {"unchanged"}
    assert {p.name: p.read_bytes() for p in d.iterdir()} == written


def test_an_old_review_with_its_side_digests_still_applies_but_not_through_a_link(site, tmp_path, capsys):
    d, review, rows = site
    old = tmp_path / "old.csv"
    notes = tmp_path / "private" / "notes.md"
    (d / "linked.md").symlink_to(notes)
    sums = digests_path(review).read_text() + f"{hashlib.sha256(NOTES).hexdigest()}  {d / 'linked.md'}\n"
    digests_path(old).write_text(sums)
    # A review from before the digest columns, with its side file: one row names a link out of the site.
    save(old, rows + [forged_row(rows[0], str(d / "linked.md"))], COLUMNS[:9])
    code, err = cli(capsys, "--review-in", str(old), "-q")
    assert code == 1 and f"{d / 'linked.md'}: {OUTSIDE_REVIEW}" in err, err
    assert notes.read_bytes() == NOTES
    assert 'alt="' in (d / "a.html").read_text()


# b2: every file a review names is read with a bound, without waiting


def test_a_fifo_and_a_device_are_named_at_once_and_the_rest_written(site, capsys):
    d, review, rows = site
    fifo = d / "fifo.html"
    os.mkfifo(fifo)
    device = dict(rows[0], document="/dev/zero", roots='["/dev"]', document_sha256="0" * 64)  # roots edited too
    save(review, [rows[1], dict(rows[0], document=str(fifo), document_sha256="0" * 64), device])
    done: dict[str, object] = {}
    worker = threading.Thread(target=lambda: done.update(result=cli(capsys, "--review-in", str(review))), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # a regression waits on the FIFO: a writer lets it go before the test fails
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail("--review-in waited on a FIFO")
    code, err = done["result"]
    assert code == 1
    assert f"{fifo}: not a regular file (a FIFO)" in err
    assert "/dev/zero: not a regular file (a device)" in err
    assert "Traceback" not in err and 'alt="' in (d / "b.html").read_text()


def test_a_page_past_its_bound_is_not_read_and_the_rest_written(site, monkeypatch, capsys):
    d, review, rows = site
    big = d / "big.html"  # an 8 GB sparse file in the real world; past the bound this test sets here
    big.write_bytes(b"<p>" + b"x" * 4096 + b'<img src="c.png"></p>\n')
    monkeypatch.setattr(file_checks, "MAX_PAGE_BYTES", 1024)  # every page is read through file_checks
    big_row = dict(rows[0], document=str(big), document_sha256=hashlib.sha256(big.read_bytes()).hexdigest())
    save(review, [rows[1], big_row])
    code, err = cli(capsys, "--review-in", str(review))
    assert code == 1 and f"{big}: larger than 1 KiB (4 KiB)" in err, err
    assert 'alt="' not in big.read_text() and 'alt="' in (d / "b.html").read_text()


# b3: a huge cell, a huge review


def test_a_cell_past_the_csv_module_s_limit_is_read(site):
    d, review, rows = site
    rows[0]["text"] = "x" * 200_000
    save(review, rows)
    done = apply_review(review)
    assert not done.failed and len((d / "a.html").read_text()) > 200_000


def test_a_review_past_its_bound_is_one_line_naming_it(site, monkeypatch, capsys):
    _, review, rows = site
    rows[0]["text"] = "x" * 10_000
    save(review, rows)
    monkeypatch.setattr(review_file, "MAX_REVIEW_BYTES", 8192)
    with pytest.raises(ReviewError, match="larger than 8 KiB"):
        read_review(review)
    code, err = cli(capsys, "--review-in", str(review))
    assert code == 2 and err.count("\n") == 1 and str(review) in err and "Traceback" not in err


# b4: a picture replaced after the review


def test_a_picture_replaced_after_the_review_does_not_get_its_text(site, capsys):
    d, review, rows = site
    save(review, rows)
    shutil.copy(SAMPLES / "page.png", d / "c.png")  # same name, another picture
    before = (d / "a.html").read_bytes()
    code, err = cli(capsys, "--review-in", str(review))
    assert code == 1
    assert "picture changed since the review: c.png" in err
    assert (d / "a.html").read_bytes() == before
    assert 'alt="' in (d / "b.html").read_text()  # the picture that is the same gets its text


def test_a_picture_swapped_for_a_link_out_of_the_site_does_not_get_its_text(site, tmp_path):
    d, review, rows = site
    save(review, rows)
    (d / "c.png").unlink()
    (d / "c.png").symlink_to(tmp_path / "private" / "photo.png")
    done = apply_review(review)
    [row] = [r for r in done.images if r.src == "c.png"]
    assert row.status == FillStatus.FAILED and row.error == "picture changed since the review: c.png"
    assert 'alt="' not in (d / "a.html").read_text()


# b5: the formula guard, undone for every cell it was put on


def make_dash_epub(path: Path) -> Path:
    chapter = "-intro.xhtml"
    opf = ('<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x'
           '</dc:identifier><dc:title>t</dc:title><dc:language>en</dc:language><meta property="dcterms:modified">'
           f'2020-01-01T00:00:00Z</meta></metadata><manifest><item id="c1" href="{chapter}" '
           'media-type="application/xhtml+xml"/><item id="i1" href="a.png" media-type="image/png"/><item id="nav" '
           'href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/></manifest><spine>'
           '<itemref idref="c1"/></spine></package>')
    xhtml = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title>'
             '</head><body><p>Intro</p><img src="a.png"/></body></html>')
    nav = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
           'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>n</title></head><body><nav epub:type="toc"><ol>'
           f'<li><a href="{chapter}">c</a></li></ol></nav></body></html>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:'
                   'tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf" '
                   'media-type="application/oebps-package+xml"/></rootfiles></container>')
        z.writestr("content.opf", opf)
        z.writestr(chapter, xhtml)
        z.writestr("nav.xhtml", nav)
        z.writestr("a.png", (SAMPLES / "coffee.png").read_bytes())
    return path


def test_a_chapter_named_with_a_dash_finds_its_review_row(tmp_path, describer):
    book = make_dash_epub(tmp_path / "book.epub")
    review = tmp_path / "rev.csv"
    write_review(run_alt_fill([book], describer, dry_run=True), review)
    rows = rows_of(review)
    assert rows[0]["location"].startswith("'-intro.xhtml")  # guarded as a spreadsheet would run it
    for r in rows:
        r["write"], r["text"] = "yes", "A reviewed text."
    save(review, rows)
    done = apply_review(review)
    assert not done.failed, [(r.location, r.error) for r in done.images]
    with zipfile.ZipFile(book) as z:
        assert 'alt="A reviewed text."' in z.read("-intro.xhtml").decode("utf-8")


def test_every_guarded_cell_reads_back_as_it_was(tmp_path):
    cells = {c: f"-{c}" for c in COLUMNS}
    cells.update(write="yes", roots='["/x"]', picture_roots='["/x"]')
    review = tmp_path / "r.csv"
    review.write_bytes(review_file.write_rows([cells]))
    digests_path(review).write_text("")
    [raw] = rows_of(review)
    assert raw["location"] == "'-location" and raw["document"] == "'-document"
    [r], _ = read_review(review)
    assert (r.document, r.location, r.picture, r.text) == ("-document", "-location", "-picture", "-text")
    assert (r.document_sha256, r.picture_sha256) == ("-document_sha256", "-picture_sha256")
