"""A reviewed write can declare an EPUB described: ``--review-in FILE.csv --epub-metadata`` adds
schema:accessibilityFeature alternativeText to the package document when every picture has a text
alternative once the reviewed texts are written (the rule of a fill), says so, and leaves the package
alone when a picture is left without one."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import pytest
from test_altfill_docs_build import OPF3, make_epub

from capdesk.altfill.documents import FEATURE_ADDED
from capdesk.altfill.review import COLUMNS
from capdesk.altfill.rows import AltFillResult, PageRow
from capdesk.session.altfill_review import books_marked

FEATURE = '<meta property="schema:accessibilityFeature">alternativeText</meta>'


def cli(capsys, *args: str) -> tuple[int, str]:
    from capdesk.cli.main import main

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


def opf(book: Path) -> str:
    with zipfile.ZipFile(book) as z:
        return z.read("OEBPS/content.opf").decode("utf-8")


@pytest.fixture
def reviewed(tmp_path, capsys) -> tuple[Path, Path, list[dict[str, str]]]:
    """A book, the review file of a dry run over it, and that file's rows."""
    book = make_epub(tmp_path / "book.epub")
    review = tmp_path / "review.csv"
    code, err = cli(capsys, "--dry-run", "-q", "--review-out", str(review), str(book), "--provider", "cpu")
    assert code == 0, err
    with open(review, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # coffee (no alt), the astronaut (alt text), coffee again (alt="", decorative), the cat (no alt)
    assert [r["picture"].rsplit("/", 1)[-1] for r in rows] == ["coffee.png", "astronaut.png", "coffee.png",
                                                               "chelsea.png"]
    assert all(rows[i]["text"] for i in (0, 1, 3)) and rows[2]["text"] == ""
    return book, review, rows


def save(review: Path, rows: list[dict[str, str]]) -> None:
    with open(review, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def test_every_row_accepted_with_epub_metadata_marks_the_book(reviewed, tmp_path, capsys):
    book, review, rows = reviewed
    for r in rows:  # all accepted, the decorative picture's empty text among them
        r["write"] = "yes"
    rows[3]["text"] = "A tabby cat looking at the camera."
    save(review, rows)
    report = tmp_path / "report.json"
    code, err = cli(capsys, "--review-in", str(review), "--epub-metadata", "--report", str(report))
    assert code == 0, err
    assert opf(book) == OPF3.replace("\n  </metadata>", f"\n    {FEATURE}\n  </metadata>")
    assert f"{book}: every picture has a text alternative" in err and FEATURE_ADDED.lstrip("; ") in err
    assert "now says so" in report.read_text(encoding="utf-8")
    with zipfile.ZipFile(book) as z:
        chapter = z.read("OEBPS/text/chapter1.xhtml").decode("utf-8")
    assert "<title>A tabby cat looking at the camera.</title>" in chapter
    assert '<img src="../images/coffee.png" alt=""/>' in chapter  # the decorative picture stays so


def test_a_row_left_no_leaves_the_book_unmarked(reviewed, capsys):
    book, review, rows = reviewed
    rows[0]["write"], rows[3]["write"] = "yes", "no"  # the cat keeps no alt text
    save(review, rows)
    code, err = cli(capsys, "--review-in", str(review), "--epub-metadata")
    assert code == 0, err
    assert "accessibilityFeature" not in opf(book)
    assert "now says so" not in err and "every picture has a text alternative" not in err
    with zipfile.ZipFile(book) as z:
        assert rows[0]["text"] in z.read("OEBPS/text/chapter1.xhtml").decode("utf-8")  # the accepted one written


def test_without_epub_metadata_a_reviewed_write_only_hints(reviewed, capsys):
    book, review, rows = reviewed
    rows[0]["write"] = rows[3]["write"] = "yes"  # the coffee's text ("Probably a table") is a guess: accepted
    save(review, rows)
    code, err = cli(capsys, "--review-in", str(review))
    assert code == 0, err
    assert "accessibilityFeature" not in opf(book) and "--epub-metadata would say so" in err


def test_the_windows_review_list_marks_the_book_as_the_fill_dialog_asked(tmp_path):
    """Write accepted, with "Mark EPUB books ..." ticked in Fill alt text: the same road as --review-in."""
    from capdesk.altfill.fill import run_alt_fill
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.session.altfill_review import ACCEPTED, WriteAcceptedJob, review_choices

    book = make_epub(tmp_path / "book.epub")
    dry = run_alt_fill([book], Describer(provider="cpu", options=DescribeOptions(ocr="never")), dry_run=True)
    choices = review_choices(dry)
    assert len(choices) == 2  # coffee and the cat; the astronaut has alt text, the other coffee is decorative
    for c in choices:
        c.state = ACCEPTED
    job = WriteAcceptedJob(None, dry, choices, epub_metadata=True)  # type: ignore[arg-type]
    job.result, _ = job._work()
    assert opf(book) == OPF3.replace("\n  </metadata>", f"\n    {FEATURE}\n  </metadata>")
    said = job._outcome()
    assert "book.epub now says in its accessibility details that every picture has a text alternative" in said


def test_the_window_says_which_books_were_marked():
    result = AltFillResult(pages=[
        PageRow("/a/marked.epub", "changed", kind="epub", note="every picture has a text alternative" + FEATURE_ADDED),
        PageRow("/a/open.epub", "changed", kind="epub"),
        PageRow("/a/report.docx", "changed", kind="docx", note="every picture has a text alternative")])
    said = books_marked(result)
    assert "marked.epub now says in its accessibility details" in said
    assert "open.epub not marked as described" in said and "report.docx" not in said
    assert books_marked(AltFillResult(pages=[PageRow("/a/report.docx", "changed", kind="docx")])) == ""
