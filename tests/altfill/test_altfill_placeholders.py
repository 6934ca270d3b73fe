"""Alt text that is only a file name, a path or pandoc's ``fig:`` counts as missing and is replaced
(HTML and EPUB); an OpenDocument entry written with a data descriptor keeps it; document runs are
counted as documents."""

from __future__ import annotations

import io
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import CHAPTER, ODF_MANIFEST, ODT_CONTENT, make_epub, raw_entries

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.rows import AltFillResult, PageRow, files_said
from capdesk.altfill.spots import is_file_name


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.mark.parametrize("text, placeholder", [
    ("fig:", True), ("fig:  coffee.png", True), ("images/coffee.png", True), ("C:\\pics\\cat.JPG", True),
    ("coffee.png", True), ("A cup of coffee.", False), ("Figure 1: a cup of coffee", False),
    ("my holiday photos/cat.jpg", False), ("", False)])
def test_file_names_paths_and_pandoc_markers_are_placeholders(text, placeholder):
    assert is_file_name(text) is placeholder


def test_a_file_name_as_alt_text_is_replaced_and_nothing_else_changes(tmp_path, describer):
    (tmp_path / "img").mkdir()
    shutil.copy(SAMPLES / "coffee.png", tmp_path / "img" / "coffee.png")
    page = tmp_path / "index.html"
    before = ('<p><img src="img/coffee.png" alt="fig:  img/coffee.png" class="a">'
              "<img alt=coffee.png src=img/coffee.png><img src=img/coffee.png alt='A mug.'></p>\n")
    page.write_text(before, encoding="utf-8")
    result = run_alt_fill([page], describer, backup_dir=tmp_path / "backups", write="all")
    text = result.images[0].alt_text
    assert text and [r.status for r in result.images] == [FillStatus.FILLED, FillStatus.FILLED, FillStatus.KEPT]
    assert "file name" in result.images[0].note
    assert page.read_text(encoding="utf-8") == (
        f'<p><img src="img/coffee.png" alt="{text}" class="a">'
        f"<img alt=\"{text}\" src=img/coffee.png><img src=img/coffee.png alt='A mug.'></p>\n")
    # An EPUB chapter's file-name alt text is replaced the same way, and the book is not called described
    # before it is.
    book = make_epub(tmp_path / "book.epub", CHAPTER.replace('class="photo"', 'alt="coffee.png" class="photo"'))
    done = run_alt_fill([book], describer, dry_run=True, write="all")
    first = done.images[0]
    assert (first.status, first.after.count("alt=")) == (FillStatus.FILLED, 1) and "coffee.png" not in first.alt_text


class _Pipe(io.RawIOBase):
    """A stream zipfile cannot seek back in: it writes each entry with a data descriptor (flag bit 3)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.data += b
        return len(b)


def test_odf_entries_written_with_a_data_descriptor_keep_it(tmp_path, describer):
    mime = "application/vnd.oasis.opendocument.text"
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), mime)
        z.writestr(zipfile.ZipInfo("content.xml"), ODT_CONTENT, zipfile.ZIP_DEFLATED)
        z.writestr(zipfile.ZipInfo("Pictures/coffee.png"), (SAMPLES / "coffee.png").read_bytes())
        z.writestr(zipfile.ZipInfo("Pictures/astronaut.png"), (SAMPLES / "astronaut.png").read_bytes())
        z.writestr(zipfile.ZipInfo("META-INF/manifest.xml"), ODF_MANIFEST.replace("MIME", mime))
    doc = tmp_path / "notes.odt"
    doc.write_bytes(bytes(pipe.data))
    with zipfile.ZipFile(doc) as z:
        assert z.getinfo("content.xml").flag_bits & 0x8
    old = {n: raw for n, _, raw in raw_entries(doc)}
    result = run_alt_fill([doc], describer, backup_dir=tmp_path / "backups", write="all")
    assert result.pages[0].status == "changed", result.pages[0]
    with zipfile.ZipFile(doc) as z:
        info = z.getinfo("content.xml")
        assert info.flag_bits == 0x8 and z.testzip() is None
        assert b"<svg:desc>" in z.read("content.xml")
        at = info.header_offset
        nlen, elen = struct.unpack_from("<2H", doc.read_bytes(), at + 26)
        descriptor = doc.read_bytes()[at + 30 + nlen + elen + info.compress_size:][:16]
        assert descriptor == b"PK\x07\x08" + struct.pack("<3I", info.CRC, info.compress_size, info.file_size)
    new = {n: raw for n, _, raw in raw_entries(doc)}
    assert {n for n in old if old[n] != new[n]} == {"content.xml"}


def test_document_runs_are_counted_as_documents():
    result = AltFillResult(pages=[PageRow("a.epub", "changed", kind="epub"), PageRow("b.pdf", "failed", kind="pdf")])
    assert result.summary().startswith("2 documents (1 changed, 1 failed)")
    assert files_said([PageRow("a.html", "changed"), PageRow("b.docx", "unchanged", kind="docx")]) == \
        "1 page and 1 document"
    assert files_said([PageRow("a.html", "changed"), PageRow("b.html", "changed")]) == "2 pages"
    from capdesk.altfill.report import _html

    assert "<h1>Alt text filled in documents</h1>" in _html(result, Path("."))
