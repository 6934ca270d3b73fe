"""Web pages, zip documents and PDFs are one interface (``capdesk.altfill.formats``): the registry names each
family and the files it takes, and a page, a Word file and a tagged PDF built here each go through the same
steps (scan, pictures with their identity and context, plan, fill, verify, write) and read back with their
new alt text. The library, like the command line and the window, writes facts only unless asked for more;
every family reads its file through the same bounded read, which refuses what is not a regular file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import make_docx
from test_pdf_captions import make_pdf

from capdesk.altfill import file_checks, formats
from capdesk.altfill.documents import PictureStore
from capdesk.altfill.fill import FILL_SUFFIXES, FillStatus, run_alt_fill
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.places import Roots
from capdesk.altfill.rows import AltFillResult
from capdesk.folders.reading import describe_paths


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def test_the_registry_names_each_family_and_the_files_it_takes():
    assert formats.names() == ("page", "zip", "pdf")
    assert formats.suffixes() == FILL_SUFFIXES  # what a run takes is what is registered
    for name, fmt in [("a.html", "page"), ("a.MD", "page"), ("a.epub", "zip"), ("a.docx", "zip"),
                      ("a.ods", "zip"), ("a.pdf", "pdf")]:
        assert formats.for_file(name) is formats.get(fmt), name
    assert formats.for_file("a.txt") is None and formats.kind_of("a.txt") == "page"
    assert [formats.kind_of(n) for n in ("a.htm", "a.odp", "a.PDF")] == ["page", "odp", "pdf"]
    for fmt in formats.known():
        assert isinstance(fmt, formats.DocumentFormat) and fmt.label
    with pytest.raises(ValueError, match="already belong"):
        formats.register(type("Again", (type(formats.get("pdf")),), {"name": "pdf2"})())
    with pytest.raises(ValueError, match="unknown document format"):
        formats.get("rtf")


def _three_files(folder: Path) -> list[Path]:
    shutil.copy(SAMPLES / "chelsea.png", folder / "chelsea.png")
    page = folder / "index.html"
    page.write_text('<p>Our cat on the sofa.</p>\n<p><img src="chelsea.png"></p>\n', encoding="utf-8")
    return [page, make_docx(folder / "report.docx"), make_pdf(folder / "moons.pdf")]


def test_a_page_a_word_file_and_a_tagged_pdf_go_through_the_same_steps(tmp_path, describer):
    files = _three_files(tmp_path)
    options = AltFillOptions((str(tmp_path),), write="all")
    result = AltFillResult()
    store = PictureStore()
    planning = formats.Planning(options, Roots([tmp_path]), store, result, {})
    try:
        for path in files:
            fmt = formats.for_file(path)
            doc = fmt.scan(path, options)
            seen = fmt.pictures(doc)
            # Each picture found has an identity of its own; the page's and the PDF's the words around them.
            assert seen and len({p.picture_id for p in seen}) == len(seen) and all(p.picture_id for p in seen)
            wanted = fmt.plan(doc, planning, tmp_path)
            assert wanted, path.name
            said = dict(zip([w.key for w in wanted],
                            describe_paths(describer, [planning.files[w.key] for w in wanted])))
            for w in wanted:
                fmt.fill(doc, w, said[w.key], options.write)
            filled = [w.row for w in wanted if w.row.status == FillStatus.FILLED]
            assert filled, (path.name, [(w.row.status, w.row.note) for w in wanted])
            assert fmt.verify(doc, b"\xef\xbb\xbfnot what was read") != ""  # bytes that would not read back
            fmt.write(doc, result, Writing(backup_dir=tmp_path / "backups"))
            assert doc.row.status == "changed" and all(r.written for r in filled), (path.name, doc.row.error)
            again = fmt.pictures(fmt.scan(path, options))
            assert {r.alt_text for r in filled} <= {p.alt for p in again}, path.name
    finally:
        store.close()
    page_seen = formats.get("page").pictures(formats.get("page").scan(files[0]))
    assert "Our cat on the sofa." in page_seen[0].context
    pdf_seen = formats.get("pdf").pictures(formats.get("pdf").scan(files[2]))
    assert [p.location for p in pdf_seen] == ["page 1, figure 1", "page 1, figure 2", "page 1, figure 3"]


def test_the_library_writes_facts_only_unless_asked(tmp_path, describer):
    for name in ("chelsea.png", "astronaut.png"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    page = tmp_path / "index.html"
    page.write_text('<p><img src="chelsea.png"></p>\n<p><img src="astronaut.png"></p>\n', encoding="utf-8")
    result = run_alt_fill([page], describer, backup_dir=tmp_path / "backups")
    cat, astronaut = result.images
    assert cat.status == FillStatus.FILLED and cat.written
    # The astronaut's "Probably ..." is a guess: listed for review, as the command line and the window do.
    assert astronaut.status == FillStatus.REVIEW and "(--write facts)" in astronaut.note
    assert page.read_text(encoding="utf-8").count("alt=") == 1
    assert AltFillOptions().write == "facts"


@pytest.mark.parametrize("name", ["a.html", "a.docx", "a.pdf"])
def test_every_family_refuses_a_fifo_at_once_through_the_same_read(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    fmt = formats.for_file(fifo)
    doc = fmt.scan(fifo)  # a FIFO opened to be read would wait for a writer: it is refused before
    assert doc.row.status == "failed" and doc.row.error == "not a regular file (a FIFO)"
    assert fmt.max_bytes() in (file_checks.MAX_PAGE_BYTES, file_checks.MAX_DOCUMENT_BYTES)


def test_a_document_past_the_ceiling_is_refused_by_its_size_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(file_checks, "MAX_DOCUMENT_BYTES", 4096)
    big = make_docx(tmp_path / "big.docx")
    doc = formats.get("zip").scan(big)
    assert doc.row.status == "failed" and doc.row.error.startswith("larger than 4 KiB"), doc.row.error
