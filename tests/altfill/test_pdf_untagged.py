"""capdesk alt-fill on an untagged PDF: its pictures listed (page, place, size) and described, in the review
file and the report with the note to add alt text in the source, the PDF never changed, the run not a failure,
and a review that asks to write one of those rows refused with the same note. The PDFs are built here: three
photos on two pages, a thin rule and a logo embedded anew on each page."""

from __future__ import annotations

import csv
import json
import zlib
from pathlib import Path

import pytest
from PIL import Image

from capdesk.altfill import pdf as pdf_module
from capdesk.altfill import pdf_untagged
from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.pdf import scan_pdf
from capdesk.altfill.pdf_untagged import UNTAGGED_NOTE, list_pictures, untagged_said
from capdesk.altfill.report import write_report
from capdesk.altfill.review import apply_review, write_review

pikepdf = pytest.importorskip("pikepdf")

SAMPLES = Path(__file__).parents[2] / "resources" / "samples"
PAGE = (612, 792)  # US Letter, in points


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def _image(pdf, picture: Image.Image):
    """An image XObject of ``picture``'s RGB pixels (Flate), as a PDF writer embeds one."""
    rgb = picture.convert("RGB")
    return pikepdf.Stream(pdf, zlib.compress(rgb.tobytes()), Type=pikepdf.Name.XObject,
                          Subtype=pikepdf.Name.Image, Width=rgb.width, Height=rgb.height,
                          ColorSpace=pikepdf.Name.DeviceRGB, BitsPerComponent=8, Filter=pikepdf.Name.FlateDecode)


def _sample(name: str, size: tuple[int, int]) -> Image.Image:
    with Image.open(SAMPLES / name) as im:
        return im.convert("RGB").resize(size)


def _page(pdf, draws: list[tuple[str, object, tuple[float, float, float, float]]]) -> None:
    """A page drawing each (name, image, (x, y, width, height) from its bottom left, in points)."""
    page = pdf.add_blank_page(page_size=PAGE)
    page.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary({f"/{n}": im for n, im, _ in draws}))
    ops = "".join(f"q {w} 0 0 {h} {x} {y} cm /{n} Do Q\n" for n, _, (x, y, w, h) in draws)
    page.Contents = pikepdf.Stream(pdf, ops.encode())


def untagged(path: Path) -> Path:
    """Two pages: a cup of coffee and a cat on the first, a rocket on the second; a thin rule under the
    first photo; a logo at the top of both, embedded twice (the same bytes)."""
    logo = Image.new("RGB", (48, 48), (0, 60, 140))
    with pikepdf.new() as pdf:
        _page(pdf, [("Logo", _image(pdf, logo), (36, 740, 36, 36)),
                    ("Im1", _image(pdf, _sample("coffee.png", (120, 90))), (72, 480, 240, 180)),
                    ("Rule", _image(pdf, Image.new("RGB", (400, 2), 0)), (72, 470, 400, 2)),
                    ("Im2", _image(pdf, _sample("chelsea.png", (100, 80))), (330, 480, 200, 160))])
        _page(pdf, [("Logo", _image(pdf, logo), (36, 740, 36, 36)),
                    ("Im3", _image(pdf, _sample("rocket.jpg", (80, 120))), (100, 200, 160, 240))])
        pdf.save(path)
    return path


def test_an_untagged_pdf_lists_its_pictures_with_their_page_place_and_size(tmp_path):
    doc = scan_pdf(untagged(tmp_path / "leaflet.pdf"))
    assert doc.untagged and doc.row.status == "unchanged" and not doc.row.error
    listing = list_pictures(doc)
    got = [(p.page, p.draw.name, p.box, (p.width, p.height)) for p in listing.pictures]
    # Places from the page's top left: a photo at y 480 pt from the bottom, 180 pt high, is 132 pt from the top.
    assert got == [(1, "/Im1", (72.0, 132.0, 240.0, 180.0), (120, 90)),
                   (1, "/Im2", (330.0, 152.0, 200.0, 160.0), (100, 80)),
                   (2, "/Im3", (100.0, 352.0, 160.0, 240.0), (80, 120))]
    assert [p.number for p in listing.pictures] == [1, 2, 3]
    assert listing.pictures[0].location == \
        "page 1, picture 1: 240 x 180 pt at 72, 132 pt from the top left (120 x 90 px)"
    assert listing.tiny == 1 and list(listing.repeated.values()) == [2] and listing.repeated_draws == 2
    note = pdf_untagged.listed_note(listing)
    assert "3 pictures were listed for review" in note and UNTAGGED_NOTE in note
    assert "1 tiny image" in note and "1 image repeated on 2 pages" in note


def test_the_run_lists_describes_and_reports_them_and_never_changes_the_pdf(tmp_path, describer):
    pdf = untagged(tmp_path / "leaflet.pdf")
    original = pdf.read_bytes()
    result = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups", write="facts")
    assert pdf.read_bytes() == original and not (tmp_path / "backups").exists()
    assert not result.failed
    page = result.pages[0]
    assert (page.status, page.images, page.error) == ("listed for review", 3, None)
    assert page.note.startswith("not tagged: it has no structure for alt text to belong to, so nothing was written; "
                                "its 3 pictures were listed for review")
    rows = result.images
    assert [(r.line, r.column, r.src, r.box, r.pixels) for r in rows] == [
        (1, 1, "page 1, Im1", [72.0, 132.0, 240.0, 180.0], [120, 90]),
        (1, 2, "page 1, Im2", [330.0, 152.0, 200.0, 160.0], [100, 80]),
        (2, 3, "page 2, Im3", [100.0, 352.0, 160.0, 240.0], [80, 120])]
    for r in rows:
        assert r.listed_only and r.needs_review and r.note == UNTAGGED_NOTE and r.reason.startswith(UNTAGGED_NOTE)
        assert r.status in (FillStatus.REVIEW, FillStatus.UNDESCRIBED) and not r.written and not r.alt_text
    assert any(r.proposed for r in rows)  # the photos are described: texts to paste
    assert "3 pictures of 1 untagged PDF listed in the report" in untagged_said(result)

    review = tmp_path / "review.csv"
    write_review(result, review)
    lines = list(csv.DictReader(review.open(newline="", encoding="utf-8")))
    assert [(r["write"], r["picture_name"]) for r in lines] == [("no", "page 1"), ("no", "page 1"), ("no", "page 2")]
    assert all(r["reason"].startswith(UNTAGGED_NOTE) for r in lines)
    assert [r["text"] for r in lines] == [r.proposed for r in rows]
    assert lines[2]["location"] == "page 2, picture 3: 160 x 240 pt at 100, 352 pt from the top left (80 x 120 px)"

    write_report(result, tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [r["listed_only"] for r in data["images"]] == [True] * 3 and data["pages"][0]["note"] == page.note
    write_report(result, tmp_path / "report.html")
    shown = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert UNTAGGED_NOTE in shown and "page 2, picture 3: 160 x 240 pt" in shown
    assert "Text to paste into the source:" in shown
    assert pdf.read_bytes() == original


def test_a_review_that_asks_to_write_a_listed_row_is_refused_with_the_note(tmp_path, describer):
    pdf = untagged(tmp_path / "leaflet.pdf")
    original = pdf.read_bytes()
    review = tmp_path / "review.csv"
    write_review(run_alt_fill([pdf], describer, dry_run=True), review)
    lines = list(csv.DictReader(review.open(newline="", encoding="utf-8")))
    lines[0]["write"], lines[0]["text"] = "yes", "A cup of coffee on a saucer."
    with review.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    done = apply_review(review, backup_dir=tmp_path / "backups")
    assert pdf.read_bytes() == original and done.failed
    assert [(r.status, r.error) for r in done.images] == [
        (FillStatus.FAILED, f"not written, listed only: {UNTAGGED_NOTE}")]
    assert all(p.status != "changed" for p in done.pages)


def test_the_command_line_lists_them_with_exit_status_0_and_refuses_them_at_review_in(tmp_path):
    from conftest import run_cli

    pdf = untagged(tmp_path / "leaflet.pdf")
    original = pdf.read_bytes()
    review, report = tmp_path / "review.csv", tmp_path / "report.html"
    r = run_cli("alt-fill", str(pdf), "-q", "--ocr", "never", "--beam", "1", "--review-out", str(review),
                "--report", str(report))
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    assert any(line.startswith(f"capdesk: {pdf}: not tagged:") and "3 pictures were listed for review" in line
               for line in err), r.stderr
    assert sum(f"{UNTAGGED_NOTE}" in line and "page 1, picture 1: 240 x 180 pt" in line for line in err) == 1
    assert "1 listed for review" in r.stderr and pdf.read_bytes() == original and UNTAGGED_NOTE in report.read_text()
    text = review.read_text(encoding="utf-8").replace("\nno,", "\nyes,", 1)
    review.write_text(text, encoding="utf-8")
    r = run_cli("alt-fill", "--review-in", str(review))
    assert r.returncode == 1 and f"not written, listed only: {UNTAGGED_NOTE}" in r.stderr, r.stderr
    assert pdf.read_bytes() == original


def test_the_windows_review_leaves_them_out_of_its_choices_and_says_them(tmp_path, describer):
    from types import SimpleNamespace

    from capdesk.session.altfill_job import AltFillJob
    from capdesk.session.altfill_review import review_choices

    pdf = untagged(tmp_path / "leaflet.pdf")
    result = run_alt_fill([pdf], describer, dry_run=True)
    assert review_choices(result) == [] and "untagged PDF listed in the report" in untagged_said(result)
    # What the window's job says at its end (its own words, from the run's result).
    said = AltFillJob._outcome(SimpleNamespace(result=result, dry_run=True, report=str(tmp_path / "r.html")))
    assert "3 pictures of 1 untagged PDF listed in the report with a text to paste" in said, said


def _many(path: Path, pages: int, per_page: int) -> Path:
    with pikepdf.new() as pdf:
        for p in range(pages):
            _page(pdf, [(f"Im{i}", _image(pdf, Image.new("RGB", (40, 40), (p * 40 % 256, i * 9 % 256, 90))),
                         (10 + 60 * (i % 9), 10 + 60 * (i // 9), 40, 40)) for i in range(per_page)])
        pdf.save(path)
    return path


@pytest.mark.parametrize("bound, value, said", [
    ("MAX_LISTED", 5, "only the first 5 pictures were listed"),
    ("MAX_DRAWS", 7, "only the first 7 images drawn were looked at"),
    ("MAX_PAGES", 2, "only its first 2 pages were looked at"),
])
def test_the_listing_stops_at_its_bounds_and_says_so(tmp_path, monkeypatch, bound, value, said):
    monkeypatch.setattr(pdf_untagged, bound, value)
    doc = scan_pdf(_many(tmp_path / "many.pdf", 3, 4))
    listing = list_pictures(doc)
    assert len(listing.pictures) <= min(value * (4 if bound == "MAX_PAGES" else 1), 12)
    assert said in pdf_untagged.listed_note(listing)


def test_forms_that_draw_forms_reach_the_operations_ceiling_and_the_pdf_is_named(tmp_path, monkeypatch, describer):
    """A page drawing a form that draws a form a hundred times, and so on: the work grows as a power; the
    search stops at its ceiling of operations and the document is named, the run goes on."""
    monkeypatch.setattr(pdf_module, "MAX_OPERATIONS", 20_000)
    path = tmp_path / "forms.pdf"
    with pikepdf.new() as pdf:
        inner = pikepdf.Stream(pdf, b"q Q " * 10, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Form,
                               BBox=[0, 0, 10, 10])
        for _ in range(3):
            inner = pikepdf.Stream(pdf, b"/F Do " * 100, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Form,
                                   BBox=[0, 0, 10, 10], Resources=pikepdf.Dictionary(
                                       XObject=pikepdf.Dictionary(F=inner)))
        _page(pdf, [("F", inner, (0, 0, 1, 1))])
        pdf.save(path)
    original = path.read_bytes()
    result = run_alt_fill([path], describer, backup_dir=tmp_path / "backups")
    assert result.pages[0].status == "failed" and "more than 20,000 operations" in result.pages[0].error
    assert path.read_bytes() == original and result.images == []


def test_a_page_of_text_only_beside_a_picture_page_is_read_and_the_picture_listed(tmp_path):
    """A page whose resources name fonts but no images (most pages of a manual): nothing to list there."""
    path = tmp_path / "manual.pdf"
    with pikepdf.new() as pdf:
        page = pdf.add_blank_page(page_size=PAGE)
        font = pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
        page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
        page.Contents = pikepdf.Stream(pdf, b"BT /F1 12 Tf 72 700 Td (Chapter 1) Tj ET")
        _page(pdf, [("Im1", _image(pdf, _sample("coffee.png", (120, 90))), (72, 480, 240, 180))])
        pdf.save(path)
    listing = list_pictures(scan_pdf(path))
    assert [(p.page, p.draw.name) for p in listing.pictures] == [(2, "/Im1")]
