"""Every review row names its picture beyond doubt: rows shuffled and one edited, each accepted text lands
on its own picture (two pictures of one PowerPoint slide, of one Impress page, in Word, Writer, an EPUB
chapter and a web page, each pair showing the same picture file); a row whose identity names another
picture, or no picture, or that shares its identity with another row, is refused by name. The pictures
are not described here (the describer is stood in for): the review's texts are a person's."""

from __future__ import annotations

import csv
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import FRAME, ODF_MANIFEST, ODF_NS, make_epub, store

from capdesk.altfill import fill
from capdesk.altfill.review import COLUMNS, apply_review, write_review
from capdesk.altfill.rows import FillStatus

ODP_TWO = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS} xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0">
<office:body><office:presentation>
<draw:page draw:name="One">{FRAME.format(name="", pic="coffee.png", alt="")}\
{FRAME.format(name="", pic="coffee.png", alt="")}</draw:page>
</office:presentation></office:body></office:document-content>
""".replace('draw:name=""', "")
ODT_TWO = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS}><office:body><office:text>
<text:p>{FRAME.format(name="Left", pic="coffee.png", alt="")} \
{FRAME.format(name="Right", pic="coffee.png", alt="")}</text:p>
</office:text></office:body></office:document-content>
"""
PAGE = ('<!doctype html>\n<html lang="en"><body>\n<p><img src="img/coffee.png"> <img src="img/coffee.png"></p>\n'
        '</body></html>\n')
CHAPTER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang="en"><head><title>One</title></head>
<body><p><img src="../images/coffee.png"/> <img src="../images/coffee.png"/></p></body></html>
"""


def _odf(path: Path, content: str, kind: str) -> Path:
    mime = f"application/vnd.oasis.opendocument.{'text' if kind == 'odt' else 'presentation'}"
    with zipfile.ZipFile(path, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", content)
        store(z, "Pictures/coffee.png", (SAMPLES / "coffee.png").read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    return path


def _pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    p = pptx.Presentation()
    s = p.slides.add_slide(p.slide_layouts[6])
    for x in (0.5, 5):  # the same picture twice, side by side: one media part, two shapes
        s.shapes.add_picture(str(SAMPLES / "coffee.png"), Inches(x), Inches(1), Inches(4))
    p.save(str(path))
    return path


def _docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_paragraph("The same photo twice.")
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.save(str(path))
    return path


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    def nothing_said(describer, paths, batch_size=8):  # the review's texts are a person's, not the model's
        return [fill.Described(str(p), error="not described in this test") for p in paths]

    monkeypatch.setattr(fill, "describe_paths", nothing_said)
    d = tmp_path / "docs"
    (d / "img").mkdir(parents=True)
    shutil.copy(SAMPLES / "coffee.png", d / "img" / "coffee.png")
    (d / "page.html").write_text(PAGE, encoding="utf-8")
    _pptx(d / "slides.pptx")
    _odf(d / "slides.odp", ODP_TWO, "odp")
    _odf(d / "text.odt", ODT_TWO, "odt")
    _docx(d / "report.docx")
    make_epub(d / "book.epub", chapter=CHAPTER)
    return d


def _review(folder: Path, tmp_path: Path) -> tuple[Path, list[dict[str, str]]]:
    path = tmp_path / "review.csv"
    write_review(fill.run_alt_fill([folder], describer=None, dry_run=True), path)  # type: ignore[arg-type]
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return path, rows


def _save(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _alts(folder: Path) -> dict[tuple[str, str], str]:
    """Each picture's alt text now, by (file, identity), read straight from the files."""
    from capdesk.altfill.review import _pictures_now

    out = {}
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.suffix != ".png":
            _, pictures = _pictures_now(f)
            out.update({(f.name, pid): alt for pid, _, alt in pictures})
    return out


def test_every_row_has_an_identity_of_its_own(folder, tmp_path):
    _, rows = _review(folder, tmp_path)
    by_doc: dict[str, list[str]] = {}
    for r in rows:
        by_doc.setdefault(Path(r["document"]).name, []).append(r["picture_id"])
    assert {k: len(v) for k, v in by_doc.items()} == {n: 2 for n in (
        "page.html", "slides.pptx", "slides.odp", "text.odt", "report.docx", "book.epub")}
    for name, ids in by_doc.items():
        assert all(ids) and len(set(ids)) == 2, (name, ids)
        # the two pictures of each show the same picture file: only the identity tells them apart
        assert len({(r["location"], r["picture"]) for r in rows if r["document"].endswith(name)}) <= 2
    assert by_doc["slides.pptx"] == ["ppt/slides/slide1.xml: cNvPr id 2", "ppt/slides/slide1.xml: cNvPr id 3"]
    assert by_doc["text.odt"] == ["content.xml: frame 1 (Left)", "content.xml: frame 2 (Right)"]
    assert all(re.fullmatch(r"word/document\.xml: docPr id \d+", i) for i in by_doc["report.docx"])
    assert by_doc["book.epub"] == ["OEBPS/text/chapter1.xhtml: picture 1", "OEBPS/text/chapter1.xhtml: picture 2"]
    assert by_doc["page.html"] == ["picture 1", "picture 2"]
    docs = [r for r in rows if not r["document"].endswith(".html")]
    assert all(re.fullmatch(r"[0-9a-f]{64}", r["picture_sha256"]) for r in docs)  # the picture inside the document


def test_rows_shuffled_and_one_edited_each_text_lands_on_its_own_picture(folder, tmp_path):
    path, rows = _review(folder, tmp_path)
    for r in rows:
        r["text"], r["write"] = f"Photo {r['picture_id']} of {Path(r['document']).name}.", "yes"
    rows.reverse()  # sorted the other way in a spreadsheet: each pair's second picture now comes first
    rows[0]["text"] = "A cup of coffee, edited."
    want = {(Path(r["document"]).name, r["picture_id"]): r["text"] for r in rows}
    _save(path, rows)
    result = apply_review(path)
    assert not result.failed, [(r.page, r.error) for r in result.images if r.error]
    assert _alts(folder) == want


def test_a_row_whose_identity_names_another_picture_is_refused_by_name(folder, tmp_path):
    path, rows = _review(folder, tmp_path)
    pptx = [r for r in rows if r["document"].endswith("slides.pptx")]
    odp = [r for r in rows if r["document"].endswith("slides.odp")]
    docx = [r for r in rows if r["document"].endswith("report.docx")]
    pptx[0].update(text="Moved onto the other shape.", write="yes", picture_id=pptx[1]["picture_id"])
    pptx[1].update(text="The other shape's own.", write="yes")  # two rows now claim one shape: neither goes in
    odp[0].update(text="A shape that is not there.", write="yes", picture_id="content.xml: frame 9")
    docx[0].update(text="Said to be the second.", write="yes", picture_id=docx[1]["picture_id"])
    _save(path, [pptx[0], pptx[1], odp[0], docx[0]])
    result = apply_review(path)
    errors = {(Path(r.page).name, r.error) for r in result.images if r.status == FillStatus.FAILED}
    assert ("slides.pptx", "lines 2, 3 of the review all name picture 'ppt/slides/slide1.xml: cNvPr id 3', so "
            "none of their texts was written") in errors
    assert ("slides.odp", "no picture 'content.xml: frame 9' in it (the review's line 4), so its text was not "
            "written") in errors
    moved = next(e for n, e in errors if n == "report.docx")
    assert moved.startswith(f"line 5 of the review names picture {docx[1]['picture_id']!r} as") \
        and "so its text was not written" in moved
    assert set(_alts(folder).values()) == {""}  # nothing written anywhere


def test_a_picture_swapped_inside_the_document_does_not_get_its_text(folder, tmp_path):
    path, rows = _review(folder, tmp_path)
    odt = [r for r in rows if r["document"].endswith("text.odt")]
    odt[1].update(text="The right-hand photo.", write="yes", picture_sha256="0" * 64)  # not the bytes reviewed
    _save(path, [odt[1]])
    result = apply_review(path)
    bad = [r for r in result.images if r.status == FillStatus.FAILED]
    assert [r.error for r in bad] == ["picture changed since the review: Pictures/coffee.png "
                                      "(content.xml: frame 2 (Right))"]
    assert set(_alts(folder).values()) == {""}


def test_a_tagged_pdf_s_rows_name_their_figures_by_object_number(folder, tmp_path):
    from capdesk.altfill.pdf import scan_pdf

    pdf = shutil.copy(Path(__file__).parent / "fixtures" / "tagged-figures.pdf", folder / "figures.pdf")
    path, rows = _review(folder, tmp_path)
    rows = [r for r in rows if r["document"].endswith("figures.pdf")]
    assert [r["picture_id"] for r in rows] == [f"structure element {n} 0 R" for n in (7, 11, 15, 19)]
    for r, text in zip(rows[:2], ("A cup of coffee.", "A cat on a rug.")):
        r.update(text=text, write="yes")
    _save(path, [rows[1], rows[0]])
    result = apply_review(path)
    assert not result.failed, [(r.page, r.error) for r in result.images if r.error]
    assert [f.alt for f in scan_pdf(Path(pdf)).figures[:2]] == ["A cup of coffee.", "A cat on a rug."]
