"""What one document or page costs alt-fill is bounded by its own size, and one that is too costly is named
and left, never the end of the run:

- a document's parts are read one at a time and let go of once their pictures are found, so that its
  memory does not grow with the number of its parts; the XML elements its parts hold together are
  bounded (``MAX_DOCUMENT_ELEMENTS``), and a document past the bound is named with the reason while
  the pages and documents beside it are filled;
- the text around each picture is read from one pass over its page or part, so a page of thousands of
  pictures (or one built of unclosed comments and CDATA openings) costs about what reading it once
  costs, not a pass per picture.
"""

from __future__ import annotations

import shutil
import signal
import time
import tracemalloc
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import make_docx

from capdesk.altfill import xmlscan
from capdesk.altfill.documents import scan_document
from capdesk.altfill.fill import FillStatus, run_alt_fill, scan_page

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"
IMG = '<img src="coffee.png">'


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def docx_with_headers(path: Path, parts: int, size: int) -> Path:
    """A real Word file (python-docx, with its pictures) and ``parts`` header parts of ``size`` bytes of
    "<a/>" each: thousands of elements a part, in a file of a few kB."""
    make_docx(path)
    header = f'<?xml version="1.0" encoding="UTF-8"?><w:hdr xmlns:w="{W}">' + "<a/>" * (size // 4) + "</w:hdr>"
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        for i in range(1, parts + 1):
            z.writestr(f"word/header{i}.xml", header)
    return path


def test_a_document_past_the_element_bound_is_named_and_the_page_beside_it_is_filled(tmp_path, describer,
                                                                                     monkeypatch):
    monkeypatch.setattr(xmlscan, "MAX_DOCUMENT_ELEMENTS", 20_000)  # 20 parts of 4,096 elements pass it
    docx_with_headers(tmp_path / "headers.docx", 20, 16 * 1024)
    shutil.copy(SAMPLES / "coffee.png", tmp_path)
    page = tmp_path / "a.html"
    page.write_text(f"<p>Breakfast.</p>{IMG}\n")

    result = run_alt_fill([tmp_path], describer, write="all")

    doc = next(r for r in result.pages if r.page.endswith("headers.docx"))
    assert doc.status == "failed"
    assert "20,000 XML elements" in doc.error and "word/header" in doc.error
    assert "\n" not in doc.error
    assert not any(r.page.endswith("headers.docx") for r in result.images)
    assert 'alt="' in page.read_text()
    assert [r.status for r in result.images if r.page == str(page)] == [FillStatus.FILLED]


def small_docx(path: Path, parts: int, size: int) -> Path:
    """A Word file written by hand, as small as Word reads (one picture in a paragraph of text), with
    ``parts`` header parts of ``size`` bytes of "<a/>" each."""
    ns = (f'xmlns:w="{W}" xmlns:wp="{WP}" xmlns:a="{A}" xmlns:pic="{PIC}" '
          'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')
    picture = (f'<w:r><w:drawing><wp:inline><wp:extent cx="100" cy="100"/><wp:docPr id="1" name="Picture 1"/>'
               f'<a:graphic><a:graphicData uri="{PIC}"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="p1"/>'
               '<pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rId1"/></pic:blipFill></pic:pic>'
               '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>')
    document = (f'<?xml version="1.0" encoding="UTF-8"?><w:document {ns}><w:body><w:p><w:r><w:t>A cup on the '
                f"table.</w:t></w:r>{picture}</w:p></w:body></w:document>")
    rels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="{id}" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/{type}" Target="{target}"/></Relationships>')
    types = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
             'content-types"><Default Extension="png" ContentType="image/png"/><Default Extension="xml" '
             'ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.'
             'openxmlformats-package.relationships+xml"/></Types>')
    header = f'<?xml version="1.0" encoding="UTF-8"?><w:hdr xmlns:w="{W}">' + "<a/>" * (size // 4) + "</w:hdr>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", types)
        z.writestr("_rels/.rels", rels.format(id="rId1", type="officeDocument", target="word/document.xml"))
        z.writestr("word/document.xml", document)
        z.writestr("word/_rels/document.xml.rels", rels.format(id="rId1", type="image", target="media/image1.png"))
        z.writestr("word/media/image1.png", (SAMPLES / "coffee.png").read_bytes())
        for i in range(1, parts + 1):
            z.writestr(f"word/header{i}.xml", header)
    return path


def test_a_documents_memory_does_not_grow_with_its_parts(tmp_path):
    """20 header parts of 1,024 elements each: about 0.4 MB of elements a part, 8 MB for all of them."""
    path = small_docx(tmp_path / "headers.docx", 20, 4 * 1024)
    scan_document(small_docx(tmp_path / "warm.docx", 0, 0))  # what is read once a run (modules) read before
    tracemalloc.start()
    try:
        doc = scan_document(path)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.row.status == "unchanged", doc.row.error
    assert [s.context for s in doc.spots] == ["A cup on the table. [picture]"]
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"
    assert held < 2 * 1024 * 1024, f"held {held:,} bytes"  # what the document keeps for the rest of the run


def test_a_part_past_the_element_bound_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(xmlscan, "MAX_PART_ELEMENTS", 1_000)
    doc = scan_document(small_docx(tmp_path / "header.docx", 1, 8 * 1024))  # 2,048 elements in word/header1.xml
    assert doc.row.status == "failed" and doc.spots == []
    assert doc.row.error == "word/header1.xml: more than 1,000 XML elements in one part, more than CapDesk reads"


def test_a_document_that_runs_out_of_memory_is_named_and_the_rest_of_the_run_is_filled(tmp_path, describer,
                                                                                       monkeypatch):
    from capdesk.altfill import office

    def parse(name, raw, *args):
        if name == "word/header1.xml":
            raise MemoryError
        return xmlscan.parse_part(name, raw, *args)

    monkeypatch.setattr(office, "parse_part", parse)
    small_docx(tmp_path / "a.docx", 1, 64)  # runs out of memory while its header is read
    small_docx(tmp_path / "b.docx", 0, 0)
    shutil.copy(SAMPLES / "coffee.png", tmp_path)
    page = tmp_path / "c.html"
    page.write_text(f"<p>Breakfast.</p>{IMG}\n")

    result = run_alt_fill([tmp_path], describer, write="all")

    rows = {Path(r.page).name: r for r in result.pages}
    assert rows["a.docx"].status == "failed" and rows["a.docx"].error == "too large to read in the memory left"
    assert rows["b.docx"].status == "changed" and rows["c.html"].status == "changed"
    assert 'alt="' in page.read_text()


def _minified(tmp_path: Path, n: int) -> Path:
    """A page on one line with no block between its pictures: each picture's block is the whole page."""
    page = tmp_path / f"m{n}.html"
    page.write_text("<html><body>" + f"word {IMG} " * n + "</body></html>")
    return page


def _cpu(page: Path) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        scan_page(page)
        best = min(best, time.process_time() - t)
    return best


def test_the_text_around_the_pictures_of_a_page_is_read_in_one_pass(tmp_path):
    small, large = _minified(tmp_path, 1000), _minified(tmp_path, 4000)
    found = scan_page(large).found
    assert len(found) == 4000
    assert found[-1].context.startswith("… word word") and found[-1].context.endswith("[picture]")
    assert found[0].context == "word [picture] word word word word " + found[0].context[35:]
    # Four times the pictures on a page four times as long: about four times the work, not sixteen.
    assert _cpu(large) < 8 * _cpu(small)


@contextmanager
def _deadline(seconds: int):
    """A bound on the time the block may take: past it, the block is stopped with TimeoutError."""
    def stop(*_):
        raise TimeoutError(f"not done in {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_page_of_an_unclosed_comment_and_cdata_openings_is_read_in_one_pass(tmp_path):
    n = 10_000
    page = tmp_path / "c.html"
    page.write_text("<!--" + IMG * n + IMG + "<![CDATA[" * n + IMG)
    with _deadline(20):
        scanned = scan_page(page)
    assert scanned.row.status != "failed", scanned.row.error
    assert len(scanned.found) == n
