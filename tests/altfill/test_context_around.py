"""The text around a picture goes with it as evidence for the person reviewing: the paragraph before and
after it (or its own paragraph's words, when it stands in one), each side cut at a word near 200
characters, never its caption. It is on the report row (``context``), in the review file's last
column, in the HTML and JSON reports, and changes no alt text; a review file written before the column
existed still applies."""

from __future__ import annotations

import csv
import difflib
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import CHAPTER, FRAME, ODF_MANIFEST, ODF_NS, make_epub, store

from capdesk.altfill.context import CONTEXT_MAX, PICTURE_MARK
from capdesk.altfill.documents import scan_document
from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.review import COLUMNS

WORDS = " ".join(f"word{i}" for i in range(80))  # 560 characters, every word told apart from the others
PAGE = f"""<!DOCTYPE html>
<html lang="en"><head><title>Breakfast</title><script>var s = "<p>not text</p>";</script></head><body>
<h1>Breakfast</h1>
<p>{WORDS} and the cup on the left is ours.</p>
<figure><img src="coffee.png"><figcaption>Figure 1: The cup</figcaption></figure>
<p>After breakfast we walked to the <em>harbour</em>. {WORDS}</p>
<p>Our cat <img src="chelsea.png"> sleeps all day.</p>
</body></html>
"""
BARE = """<!DOCTYPE html>
<html lang="en"><body>
<figure><img src="coffee.png"><figcaption>Figure 1: The cup</figcaption></figure>
<p><img src="chelsea.png"></p>
</body></html>
"""


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def sides(context: str) -> tuple[str, str]:
    before, mark, after = context.partition(PICTURE_MARK)
    assert mark, context
    return before.strip(), after.strip()


def test_a_web_page_gives_each_picture_the_text_around_it_and_no_alt_text_changes(tmp_path, describer):
    for name in ("coffee.png", "chelsea.png"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    page, bare = tmp_path / "breakfast.html", tmp_path / "bare.html"
    page.write_text(PAGE, encoding="utf-8")
    bare.write_text(BARE, encoding="utf-8")
    old = page.read_bytes()
    result = run_alt_fill([page, bare], describer, backup_dir=tmp_path / "backups")
    cup, cat, bare_cup, bare_cat = result.images
    before, after = sides(cup.context)
    # The paragraphs on either side, cut at a word near the limit: the end of the one before, the start
    # of the one after; not the caption, the title or the script.
    assert before.endswith("the cup on the left is ours.") and before.startswith("… word")
    assert after.startswith("After breakfast we walked to the harbour. word0 word1") and after.endswith(" …")
    for side, text in ((before[2:], f"{WORDS} and the cup on the left is ours."),
                       (after[:-2], f"After breakfast we walked to the harbour. {WORDS}")):
        assert len(side) <= CONTEXT_MAX and side in text
        assert side.split()[0] in text.split() and side.split()[-1] in text.split()  # whole words only
    assert "The cup" not in cup.context and "Breakfast" not in cup.context and "not text" not in cup.context
    assert cup.caption == "Figure 1: The cup"
    # A picture inside a paragraph: its own paragraph's words on either side.
    assert cat.context == f"Our cat {PICTURE_MARK} sleeps all day."
    # The same pictures with no text around them get the same alt text: the context is evidence only.
    assert not bare_cup.context and not bare_cat.context
    assert (cup.alt_text, cup.said_as, cat.alt_text) == (bare_cup.alt_text, bare_cup.said_as, bare_cat.alt_text)
    assert cup.status == cat.status == FillStatus.FILLED
    new = page.read_bytes()
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    assert [new[c:d][:6] for op, _, _, c, d in ops if op != "equal"] == [b' alt="'] * 2
    assert all(op in ("equal", "insert") for op, *_ in ops)
    from capdesk.altfill.report import write_report

    write_report(result, tmp_path / "report.html")
    write_report(result, tmp_path / "report.json")
    shown = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Text around it: Our cat [picture] sleeps all day." in shown
    rows = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["images"]
    assert [r["context"] for r in rows] == [cup.context, cat.context, "", ""]


def make_word(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_paragraph("Before the picture: the harbour at dawn.")
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.add_paragraph("Figure 1: A harbour", style="Caption")
    d.add_paragraph("After the picture: boats leave at noon.")
    d.save(str(path))
    return path


ODT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS}><office:body><office:text>
<text:p>Before the frame: <text:span>tea</text:span> in the garden.</text:p>
<text:p>{FRAME.format(name="Photo", pic="coffee.png", alt="")}</text:p>
<text:p>After the frame:<text:s/>cake, {WORDS}</text:p>
</office:text></office:body></office:document-content>
"""


def make_odt(path: Path) -> Path:
    mime = "application/vnd.oasis.opendocument.text"
    with zipfile.ZipFile(path, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", ODT)
        store(z, "Pictures/coffee.png", (SAMPLES / "coffee.png").read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    return path


def cli(capsys, *args: str) -> tuple[int, str]:
    from capdesk.cli.main import main

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or ()), list(reader)


def _save(path: Path, columns: tuple[str, ...], rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, columns, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


# The columns of a review file from before the context column, in their order then.
OLD_EIGHT = ("document", "location", "picture", "text", "said_as", "reason", "trust", "write")


def test_word_and_opendocument_context_round_trips_through_the_review_file(tmp_path, capsys):
    word, odt = make_word(tmp_path / "harbour.docx"), make_odt(tmp_path / "garden.odt")
    review = tmp_path / "review.csv"
    code, err = cli(capsys, "--dry-run", "-q", "--review-out", str(review), str(word), str(odt),
                    "--provider", "cpu")
    assert code == 0, err
    columns, rows = _rows(review)
    # Every column, in the order a person works down a row: the context right after the picture.
    assert columns == list(COLUMNS) and COLUMNS[:4] == ("write", "text", "picture", "context")
    assert set(OLD_EIGHT) < set(COLUMNS)
    by_doc = {Path(r["document"]).name: r for r in rows}
    # Word: the paragraphs before and after, the caption between passed over.
    assert by_doc["harbour.docx"]["context"] == ("Before the picture: the harbour at dawn. [picture] "
                                                 "After the picture: boats leave at noon.")
    before, after = sides(by_doc["garden.odt"]["context"])
    assert before == "Before the frame: tea in the garden."
    assert after.startswith("After the frame: cake, word0") and after.endswith(" …") and len(after) <= CONTEXT_MAX + 2
    # A review file from before the column (eight columns): its accepted row is written.
    old = tmp_path / "old.csv"
    shutil.copy(review.with_name("review.csv.sha256"), old.with_name("old.csv.sha256"))
    edited = [dict(r, write="no") for r in rows]
    for r in edited:
        if r["document"].endswith("harbour.docx"):
            r.update(text="Edited: the harbour at dawn.", write="yes")
    _save(old, OLD_EIGHT, edited)
    code, err = cli(capsys, "--review-in", str(old), "-q")
    assert code == 0, err
    # The file with the context column applies as well (its context is never read back).
    for r in edited:
        r["write"] = "no"
        if r["document"].endswith("garden.odt"):
            r.update(text="Edited: a cup in the garden.", write="yes")
    _save(review, COLUMNS, edited)
    odt_before = zipfile.ZipFile(odt).read("content.xml")
    code, err = cli(capsys, "--review-in", str(review), "-q", "--report", str(tmp_path / "applied.html"))
    assert code == 0, err
    assert "Text around it: Before the frame: tea in the garden. [picture] After the frame: cake," in (
        tmp_path / "applied.html").read_text(encoding="utf-8")
    docx_xml = zipfile.ZipFile(word).read("word/document.xml").decode("utf-8")
    assert docx_xml.count('descr="Edited: the harbour at dawn."') == 1
    odt_after = zipfile.ZipFile(odt).read("content.xml")
    assert odt_after == odt_before.replace(b"</draw:frame>", b"<svg:desc>Edited: a cup in the garden.</svg:desc>"
                                                             b"</draw:frame>", 1)


CHAPTER_AROUND = CHAPTER.replace(
    '<p><img src="../images/coffee.png" class="photo"/></p>',
    '<p>Before the cup: a quiet morning.</p><figure><img src="../images/coffee.png"/>'
    "<figcaption>Plate 1: A cup</figcaption></figure><p>After the cup: <b>the</b> rain.</p>")


def test_epub_powerpoint_and_pdf_pictures_get_their_context_too(tmp_path):
    book = scan_document(make_epub(tmp_path / "b.epub", CHAPTER_AROUND))
    cup = book.spots[0]
    assert (cup.caption, cup.context) == ("Plate 1: A cup", "Before the cup: a quiet morning. [picture] "
                                                            "After the cup: the rain.")
    import pptx
    from pptx.util import Inches

    p = pptx.Presentation()
    slide = p.slides.add_slide(p.slide_layouts[6])
    slide.shapes.add_textbox(Inches(1), Inches(0.2), Inches(6), Inches(1)).text_frame.text = "Harbour at dawn"
    slide.shapes.add_picture(str(SAMPLES / "coffee.png"), Inches(1), Inches(1), Inches(3))
    slide.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(1)).text_frame.text = "Boats leave at noon"
    p.save(str(tmp_path / "s.pptx"))
    assert [s.context for s in scan_document(tmp_path / "s.pptx").spots] == [
        "Harbour at dawn [picture] Boats leave at noon"]
    from test_pdf_captions import make_pdf

    from capdesk.altfill.pdf import scan_pdf

    moon, swatch, plain = scan_pdf(make_pdf(tmp_path / "moons.pdf")).figures
    # The caption is passed over, and so is the figure between: the nearest paragraph is the text.
    assert moon.context == "[picture] Between the pictures, some words."
    assert plain.context == "Between the pictures, some words. [picture]"
