"""Review before writing: ``--write facts`` keeps every guess out of the files, and the review file
round-trips (written, two rows edited, applied) with only those two alt texts changed, byte for byte
elsewhere, in an HTML page, an EPUB and a Word document; a file changed since the review is left."""

from __future__ import annotations

import csv
import difflib
import html
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import make_epub, raw_entries

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.review import CHANGED, COLUMNS, apply_review, digests_path, write_review

PAGE = """<!doctype html>
<html lang="en"><body>
<p><img src="img/coffee.png"></p>
<p><img src="img/astronaut.png" class="x"> <img src="img/chelsea.png"></p>
<p><img src="img/rocket.jpg" alt="A rocket lifts off."></p>
</body></html>
"""


def make_word(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_paragraph("Three pictures, none described.")
    for name in ("coffee.png", "astronaut.png", "chelsea.png"):
        d.add_picture(str(SAMPLES / name))
    d.save(str(path))
    return path


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.fixture
def folder(tmp_path) -> Path:
    d = tmp_path / "site"
    (d / "img").mkdir(parents=True)
    for name in ("coffee.png", "astronaut.png", "chelsea.png", "rocket.jpg"):
        shutil.copy(SAMPLES / name, d / "img" / name)
    (d / "index.html").write_text(PAGE, encoding="utf-8")
    make_epub(d / "book.epub")
    make_word(d / "report.docx")
    return d


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


def save_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:  # as a spreadsheet saves it: new line ends
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def inserted(old: bytes, new: bytes) -> list[bytes]:
    """What ``new`` adds to ``old``; fails on anything removed or replaced."""
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    assert all(op in ("equal", "insert") for op, *_ in ops), [(op, old[a:b], new[c:d]) for op, a, b, c, d in ops]
    return [new[c:d] for op, _, _, c, d in ops if op == "insert"]


def test_write_facts_writes_no_guess_and_lists_the_rest(folder, describer):
    result = run_alt_fill([folder], describer, write="facts")
    assert not result.failed
    written = [r for r in result.images if r.status == FillStatus.FILLED]
    held = [r for r in result.images if r.status == FillStatus.REVIEW]
    assert written and held  # the samples give both: objects seen ("A cat.") and "Probably a person standing."
    assert all(not r.alt_text.startswith("Probably") and r.wording == "fact" and r.written for r in written)
    # Held: "Probably a person standing." and "A cup of coffee. Probably a table." (the detector alone sees
    # the table: a guess, never a fact).
    assert all("Probably" in r.proposed and r.wording == "probably" and "--write facts" in r.note
               and not r.alt_text and not r.written for r in held)
    # Every document has the coffee (held); the book's person has alt text.
    assert {Path(r.page).name for r in held} == {"index.html", "report.docx", "book.epub"}
    assert b"Probably" not in (folder / "index.html").read_bytes()
    for name in ("book.epub", "report.docx"):
        with zipfile.ZipFile(folder / name) as z:
            assert not any(b"Probably" in z.read(n) for n in z.namelist()), name


def _edit(rows: list[dict[str, str]]) -> dict[str, list[str]]:
    """In each file, the first two pictures that would be written or were held back as "Probably" get a
    person's own text; every other row is set to no. The texts chosen, by file."""
    chosen: dict[str, list[str]] = {}
    for r in rows:
        name = Path(r["document"]).name
        mine = chosen.setdefault(name, [])
        if len(mine) < 2 and (r["write"] == "yes" or r["said_as"] == "guess"):
            r["text"] = f"{name} {len(mine) + 1}: a person's \"own\" words & <more>"
            r["write"] = "yes"
            mine.append(r["text"])
        else:
            r["write"] = "no"
    return chosen


def test_review_file_round_trips_with_only_the_edited_alt_texts(folder, describer, tmp_path):
    review = tmp_path / "review.csv"
    result = run_alt_fill([folder], describer, dry_run=True, write="facts")
    write_review(result, review)
    rows = read_rows(review)
    assert len(rows) == len(result.images) == 4 + 4 + 3  # every picture found, one row each
    assert {r["write"] for r in rows if r["said_as"] == "guess"} == {"no"}
    kept = next(r for r in rows if r["picture"] == "img/rocket.jpg")
    assert (kept["text"], kept["write"]) == ("A rocket lifts off.", "no")
    originals = tmp_path / "originals"
    shutil.copytree(folder, originals)
    chosen = _edit(rows)
    assert {n: len(t) for n, t in chosen.items()} == {"index.html": 2, "book.epub": 2, "report.docx": 2}
    save_rows(review, rows)
    done = apply_review(review, backup_dir=tmp_path / "backups")
    assert not done.failed, [(p.page, p.error) for p in done.pages]
    assert sorted((Path(p.page).name, p.status) for p in done.pages) == [
        ("book.epub", "changed"), ("index.html", "changed"), ("report.docx", "changed")]
    # The page: two alt attributes inserted, nothing else.
    new_page = (folder / "index.html").read_bytes()
    for text in chosen["index.html"]:
        attr = f' alt="{html.escape(text, quote=True)}"'.encode()
        assert new_page.count(attr) == 1
        new_page = new_page.replace(attr, b"")
    assert new_page == (originals / "index.html").read_bytes()
    # The documents: one part changed, by the two texts only; every other entry byte for byte.
    for name, part in (("book.epub", "OEBPS/text/chapter1.xhtml"), ("report.docx", "word/document.xml")):
        old, new = raw_entries(originals / name), raw_entries(folder / name)
        assert [n for n, _, _ in old] == [n for n, _, _ in new]
        assert {n for (n, _, a), (_, _, b) in zip(old, new) if a != b} == {part}
        with zipfile.ZipFile(originals / name) as zo, zipfile.ZipFile(folder / name) as zn:
            added = b"".join(inserted(zo.read(part), zn.read(part))).decode()
        assert "Probably" not in added and "A cat" not in added
    # Read back as readers read them: the two texts, where they were chosen, and nothing else new.
    from lxml import etree

    with zipfile.ZipFile(folder / "book.epub") as z:
        chapter = etree.fromstring(z.read("OEBPS/text/chapter1.xhtml"))
    ns = {"h": "http://www.w3.org/1999/xhtml", "s": "http://www.w3.org/2000/svg"}
    assert chapter.xpath("//h:img/@alt", namespaces=ns)[0] == chosen["book.epub"][0]
    assert chapter.xpath("//s:image/s:title/text()", namespaces=ns) == [chosen["book.epub"][1]]
    import docx

    descr = [s._inline.docPr.get("descr") for s in docx.Document(str(folder / "report.docx")).inline_shapes]
    assert descr == [*chosen["report.docx"], None]
    assert all(Path(p.backup).read_bytes() == (originals / Path(p.page).name).read_bytes() for p in done.pages)
    # Applied again, nothing changes: the review's digests now describe the files as written.
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    again = apply_review(review, backup_dir=tmp_path / "backups2")
    assert not again.failed and {p.status for p in again.pages} == {"unchanged"}
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def cli(capsys, *args: str) -> tuple[int, str]:
    """The command run in this process (the model loads in a second, a new process takes five)."""
    from capdesk.cli.main import main  # (capdesk.cli.main, once imported, hides the package's main)

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


def test_a_file_changed_since_the_review_is_left_and_named(folder, describer, tmp_path, capsys):
    review = tmp_path / "review.csv"
    write_review(run_alt_fill([folder], describer, dry_run=True), review)
    assert digests_path(review).read_text().count("  ") == 3
    rows = read_rows(review)
    page = folder / "index.html"
    page.write_text(PAGE.replace("<body>", "<body><h1>Edited</h1>"), encoding="utf-8")  # saved meanwhile
    edited = page.read_bytes()
    word = (folder / "report.docx").read_bytes()
    code, err = cli(capsys, "--review-in", str(review))
    assert code == 1, err
    assert f"{page}: {CHANGED}" in err
    assert page.read_bytes() == edited and b"alt=" not in edited.split(b"coffee")[1][:5]
    assert (folder / "report.docx").read_bytes() != word  # the others were written
    assert sum(1 for r in rows if r["write"] == "yes") >= 3
    assert "2 changed, 1 failed" in err


def test_cli_write_facts_and_review_out(folder, tmp_path, capsys):
    review = tmp_path / "r.csv"
    report = tmp_path / "report.html"
    code, err = cli(capsys, "--write", "facts", "--dry-run", "-q", "--review-out", str(review),
                    "--report", str(report), str(folder / "report.docx"), "--provider", "cpu")
    assert code == 0, err
    assert "left for review" in err and "proposed: Probably" in err
    rows = read_rows(review)
    assert [r["location"] for r in rows] == ["picture 1", "picture 2", "picture 3"]
    assert [r["write"] for r in rows].count("no") == 2  # the astronaut's and the coffee's guesses
    page = report.read_text()
    # The report shows each document picture beside its text, the one held back included (a small JPEG each).
    assert page.count('<img src="data:image/jpeg;base64,') == 3 and "Proposed, not written: Probably" in page
    code, err = cli(capsys, "--review-in", str(review), str(folder))
    assert code == 2 and "takes no PATH" in err


def test_a_held_text_accepted_after_the_facts_were_written_goes_in(tmp_path, describer):
    """The review of a run that wrote the facts: its rows still find their pictures, although the alt
    text written earlier on their line moved them."""
    (tmp_path / "img").mkdir()
    for name in ("chelsea.png", "astronaut.png"):  # the cat is said plainly (two witnesses agree)
        shutil.copy(SAMPLES / name, tmp_path / "img" / name)
    page = tmp_path / "one-line.html"
    page.write_text('<p><img src="img/chelsea.png"><img src="img/astronaut.png"></p>\n', encoding="utf-8")
    review = tmp_path / "review.csv"
    result = run_alt_fill([page], describer, write="facts", backup_dir=tmp_path / "backups")
    write_review(result, review)
    written = page.read_bytes()
    rows = read_rows(review)
    assert [(r["write"], r["said_as"]) for r in rows] == [("yes", "fact"), ("no", "guess")]
    rows[1]["write"], rows[1]["text"] = "yes", "An astronaut in an orange suit."
    save_rows(review, rows)
    done = apply_review(review, backup_dir=tmp_path / "backups2")
    assert [r.status for r in done.images] == [FillStatus.KEPT, FillStatus.FILLED], done.images
    accepted = b'astronaut.png" alt="An astronaut in an orange suit.">'
    assert page.read_bytes() == written.replace(b'astronaut.png">', accepted)
