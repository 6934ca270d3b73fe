"""capdesk alt-fill on PDF: a tagged PDF made by LibreOffice from a Word file of the sample pictures
(fixtures/tagged-figures.pdf, see fixtures/README.md), its Figures without /Alt filled as an
incremental update; checked by a second library (pikepdf, qpdf inside), the qpdf command where it is
installed, an independent PDF/UA checker (page-validation) and the page text; an untagged PDF left."""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.pdf import NOT_TAGGED, incremental_update, place_alt, scan_pdf
from capdesk.altfill.review import apply_review, write_review

FIXTURE = Path(__file__).parent / "fixtures" / "tagged-figures.pdf"
PERSON_ALT = "Eileen Collins, commander, smiling in her orange flight suit."
FIGURE_RULE = "PDFUA1-FIGURE-ALTERNATIVE-TEXT-001"

pikepdf = pytest.importorskip("pikepdf")


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def figures_alt(path: Path) -> list[str | None]:
    """Each /Figure's /Alt, in reading order, as pikepdf (qpdf) reads the file: a second reader."""
    out: list[str | None] = []
    with pikepdf.open(path) as pdf:
        stack = [pdf.Root.StructTreeRoot.K]
        while stack:
            k = stack.pop()
            if isinstance(k, pikepdf.Array):
                stack.extend(reversed(list(k)))
            elif isinstance(k, pikepdf.Dictionary) and "/S" in k:
                if k.S == "/Figure":
                    out.append(str(k.Alt) if "/Alt" in k else None)
                if "/K" in k:
                    stack.append(k.K)
    return out


def page_text(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [p.extract_text() for p in PdfReader(path).pages]


def sound(path: Path) -> None:
    """qpdf finds nothing wrong: through pikepdf always, and the qpdf command where it is installed."""
    with pikepdf.open(path) as pdf:
        assert pdf.check_pdf_syntax() == []
    if shutil.which("qpdf"):
        done = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True)
        assert done.returncode == 0 and "WARNING" not in done.stdout + done.stderr, done.stdout + done.stderr


def figures_flagged(path: Path) -> bool | None:
    """Whether the PDF/UA checker fails its figure-alternative rule (it reports a rule once, however
    many Figures fail it); None where it is not installed."""
    try:
        import page
    except ImportError:
        return None
    report = page.validate_pdf(str(path), profile="ua1")
    return any(f.rule_id == FIGURE_RULE for f in report.failures)


def test_tagged_pdf_figures_get_alt_as_an_incremental_update(tmp_path, describer):
    pdf = tmp_path / "report.pdf"
    shutil.copy(FIXTURE, pdf)
    original = pdf.read_bytes()
    assert figures_alt(pdf) == [None, None, PERSON_ALT, None]
    assert figures_flagged(pdf) in (None, True)
    # A dry run: the change shown, nothing written.
    dry = run_alt_fill([pdf], describer, dry_run=True, write="all")
    assert pdf.read_bytes() == original and dry.pages[0].status == "would change"
    assert b"/Alt (" in dry.diffs[str(pdf)]
    result = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups", write="all")
    assert result.pages[0].status == "changed" and result.pages[0].kind == "pdf", result.pages[0]
    rows = {r.location: r for r in result.images}
    assert list(rows) == ["page 1, figure 1", "page 1, figure 2", "page 1, figure 3", "page 1, figure 4"]
    assert [rows[k].status for k in rows] == [FillStatus.FILLED, FillStatus.FILLED, FillStatus.KEPT,
                                               FillStatus.UNDESCRIBED]  # the rocket: nothing certain to say
    assert "bounding box" in rows["page 1, figure 1"].note  # LibreOffice draws pictures as artifacts
    new = pdf.read_bytes()
    assert new.startswith(original) and len(new) > len(original)  # the original revision is untouched
    assert new.count(b"%%EOF") == original.count(b"%%EOF") + 1
    sound(pdf)
    assert page_text(pdf) == page_text(FIXTURE)
    alts = figures_alt(pdf)
    assert alts[:3] == [rows["page 1, figure 1"].alt_text, rows["page 1, figure 2"].alt_text, PERSON_ALT]
    assert alts[0] and alts[1] and alts[3] is None
    assert figures_flagged(pdf) in (None, True)  # the rocket still has none
    assert Path(result.pages[0].backup).read_bytes() == original
    # The rocket is for a person: the review file gives it the text written there; the checker is then satisfied.
    review = tmp_path / "review.csv"
    write_review(result, review)
    lines = list(csv.DictReader(review.open(newline="", encoding="utf-8")))
    assert [r["write"] for r in lines] == ["yes", "yes", "no", "no"]
    for r in lines:
        r["write"] = "no"
    lines[3]["write"], lines[3]["text"] = "yes", "A rocket lifting off."
    with review.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    before = pdf.read_bytes()
    done = apply_review(review, backup_dir=tmp_path / "backups2")
    assert not done.failed and done.pages[0].status == "changed"
    after = pdf.read_bytes()
    assert after.startswith(before) and after.startswith(original)
    sound(pdf)
    assert figures_alt(pdf) == [*alts[:3], "A rocket lifting off."]
    assert page_text(pdf) == page_text(FIXTURE)
    assert figures_flagged(pdf) in (None, False)
    # A second run changes nothing.
    again = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups3", write="all")
    assert pdf.read_bytes() == after and again.pages[0].status == "unchanged"


def test_an_untagged_pdf_is_named_in_one_line_and_left(tmp_path, describer):
    """Left as it is, named in one line, and its picture listed for review (tests/altfill/test_pdf_untagged.py)."""
    pdf = tmp_path / "scan.pdf"
    Image.open(Path(__file__).parents[2] / "resources" / "samples" / "coffee.png").convert("RGB").save(pdf)
    original = pdf.read_bytes()
    result = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups")
    assert [(p.status, p.error) for p in result.pages] == [("listed for review", None)]
    assert result.pages[0].note.startswith(NOT_TAGGED) and not result.failed
    assert [(r.location.split(":")[0], r.listed_only, r.written) for r in result.images] == \
        [("page 1, picture 1", True, False)]
    assert pdf.read_bytes() == original


def test_figures_found_by_marked_content_in_a_file_with_cross_reference_streams(tmp_path):
    """A Figure whose picture is its own marked content (MCID), in a file saved with object and
    cross-reference streams: found by its MCID, and the update is a cross-reference stream."""
    src = tmp_path / "mcid.pdf"
    with pikepdf.open(FIXTURE) as pdf:
        page = pdf.pages[0]
        content = page.Contents.read_bytes()
        at = content.index(b"/Im8 Do")
        start = content.rindex(b"/Artifact BMC", 0, at)
        page.Contents.write(content[:start] + b"/Figure <</MCID 40>> BDC" + content[start + len(b"/Artifact BMC"):])
        first = next(k for k in _elements(pdf.Root.StructTreeRoot) if k.S == "/Figure")
        first.K = 40
        del first.A  # no bounding box: only the marked content can say which picture it is
        pdf.save(src, object_stream_mode=pikepdf.ObjectStreamMode.generate)
    doc = scan_pdf(src)
    assert doc.row.status == "unchanged", doc.row.error
    fig = doc.figures[0]
    assert (fig.found_by, fig.draw.name) == ("marked content", "/Im8")
    assert [f.found_by for f in doc.figures[1:]] == ["bounding box"] * 3
    place_alt(doc, fig, _row(), "A cup of coffee.")
    data = incremental_update(doc)
    assert data.startswith(doc.raw) and b"/Type /XRef" in data[len(doc.raw):]
    out = tmp_path / "filled.pdf"
    out.write_bytes(data)
    sound(out)
    assert figures_alt(out)[0] == "A cup of coffee."


def _elements(tree):
    stack = [tree.K]
    while stack:
        k = stack.pop()
        if isinstance(k, pikepdf.Array):
            stack.extend(reversed(list(k)))
        elif isinstance(k, pikepdf.Dictionary) and "/S" in k:
            yield k
            if "/K" in k:
                stack.append(k.K)


def _row():
    from capdesk.altfill.rows import ImageRow

    return ImageRow("mcid.pdf", 1, 1, "page 1, Im8", FillStatus.KEPT)


def test_the_html_report_shows_a_figure_left_as_it_was(tmp_path, describer):
    """The Figure whose /Alt its author wrote is kept, and with previews (an HTML report) it is shown beside
    that text like the Figures described."""
    pdf = tmp_path / "report.pdf"
    shutil.copy(FIXTURE, pdf)
    result = run_alt_fill([pdf], describer, dry_run=True, previews=True)
    kept = [r for r in result.images if r.status == FillStatus.KEPT]
    assert [r.alt_text for r in kept] == [PERSON_ALT]
    assert kept[0].preview.startswith("data:image/jpeg;base64,")
