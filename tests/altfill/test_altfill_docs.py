"""capdesk alt-fill on documents: an EPUB 3, a DOCX, a PPTX, an ODT and an ODP holding the sample
pictures, described by the real model; read back by python-docx, python-pptx, EPUBCheck and
LibreOffice where they are installed; and the documents that must be refused."""

from __future__ import annotations

import difflib
import html
import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli
from test_altfill_docs_build import (
    OPF3,
    PERSON_ALT,
    entry_text,
    make_docx,
    make_epub,
    make_odf,
    make_pptx,
    raw_entries,
)

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.spots import is_file_name
from capdesk.altfill.zipsafe import OLE_MAGIC
from capdesk.folders.reading import describe_paths

CHANGED_PART = {"book.epub": "OEBPS/text/chapter1.xhtml", "report.docx": "word/document.xml",
                "talk.pptx": "ppt/slides/slide1.xml", "notes.odt": "content.xml", "slides.odp": "content.xml"}


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.fixture(scope="module")
def said(describer) -> dict[str, tuple[str, float | None, bool]]:
    """Each sample's (description, trust, review), asked for on its own: what alt-fill must write and report."""
    names = ("coffee.png", "chelsea.png", "astronaut.png", "rocket.jpg")
    out = {n: (d.description, d.trust, d.review) for n, d in zip(names, describe_paths(describer, [SAMPLES / n
                                                                                                  for n in names]))}
    assert out["coffee.png"][0] and out["chelsea.png"][0] and out["rocket.jpg"][0] == "", out
    return out


@pytest.fixture
def docs(tmp_path) -> Path:
    d = tmp_path / "archive"
    (d / "2024").mkdir(parents=True)
    make_epub(d / "book.epub")
    make_docx(d / "report.docx")
    make_pptx(d / "2024" / "talk.pptx")
    make_odf(d / "notes.odt")
    make_odf(d / "2024" / "slides.odp", "odp")
    return d


# The only change in each changed part: the alt text, and in the SVG <image/> a <title> child (its
# "/>" opened up); PowerPoint's file name as description, and an ODF title that is only one, replaced.
EDITS = {
    "book.epub": lambda cup, cat: [('coffee.png" class', f'coffee.png" alt="{cup}" class'),
                                   ('height="200"/>', f'height="200"><title>{cat}</title></image>')],
    "report.docx": lambda cup, cat: [('name="Picture 1"/>', f'name="Picture 1" descr="{cup}"/>')],
    "talk.pptx": lambda cup, cat: [('descr="coffee.png"', f'descr="{cup}"')],
    "notes.odt": lambda cup, cat: [('onLoad"/></draw:frame>', f'onLoad"/><svg:desc>{cup}</svg:desc></draw:frame>')],
    "slides.odp": lambda cup, cat: [("<svg:title>coffee.png<", f"<svg:title>{cup}<")],
}


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def changes(old: bytes, new: bytes) -> list[tuple[str, bytes, bytes]]:
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(op, old[i1:i2], new[j1:j2]) for op, i1, i2, j1, j2 in ops if op != "equal"]


def assert_only_part_changed(before: Path, after: Path, parts: set[str]) -> None:
    """Every entry but ``parts`` byte for byte as it was (header, compressed data, method), in the same order."""
    old, new = raw_entries(before), raw_entries(after)
    assert [n for n, _, _ in old] == [n for n, _, _ in new]
    differ = {n for (n, m, raw), (_, m2, raw2) in zip(old, new) if raw != raw2 or m != m2}
    assert differ == parts, differ
    assert [m for _, m, _ in old] == [m for _, m, _ in new]  # a changed part keeps its compression too
    with zipfile.ZipFile(after) as z:
        assert z.testzip() is None


@pytest.mark.slow  # 1.2 s measured on two busy cores
def test_documents_get_alt_text_and_nothing_else_changes(docs, tmp_path, describer, said):
    originals = tmp_path / "originals"
    shutil.copytree(docs, originals)
    result = run_alt_fill([docs], describer, recursive=True, backup_dir=tmp_path / "backups", write="all")
    assert not result.failed and not result.interrupted
    assert sorted((Path(p.page).name, p.status, p.kind) for p in result.pages) == [
        ("book.epub", "changed", "epub"), ("notes.odt", "changed", "odt"), ("report.docx", "changed", "docx"),
        ("slides.odp", "changed", "odp"), ("talk.pptx", "changed", "pptx")]
    cup, cat = html.escape(said["coffee.png"][0], quote=True), html.escape(said["chelsea.png"][0], quote=True)
    for name, part in CHANGED_PART.items():
        rel = next(p for p in originals.rglob(name)).relative_to(originals)
        assert_only_part_changed(originals / rel, docs / rel, {part})
        old, new = entry_text(originals / rel, part), entry_text(docs / rel, part)
        expected = old
        for before, after in EDITS[name](cup, cat):
            assert expected.count(before.encode()) == 1
            expected = expected.replace(before.encode(), after.encode())
        assert new == expected, changes(old, new)
    first = zipfile.ZipFile(docs / "book.epub").infolist()[0]
    assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    # Real readers see the alt text; the person's text and the decorative picture are as they were.
    import docx
    import pptx

    d = docx.Document(str(docs / "report.docx"))
    assert [s._inline.docPr.get("descr") for s in d.inline_shapes] == [said["coffee.png"][0], PERSON_ALT, None]
    p = pptx.Presentation(str(docs / "2024" / "talk.pptx"))
    assert [sh._element.nvPicPr.cNvPr.get("descr") for s in p.slides for sh in s.shapes] == [
        said["coffee.png"][0], PERSON_ALT]
    # The report: each picture where a person finds it, with the describer's trust and review.
    rows = {(Path(r.page).name, r.location): r for r in result.images}
    assert set(rows) == {
        ("book.epub", "OEBPS/text/chapter1.xhtml, line 7"), ("book.epub", "OEBPS/text/chapter1.xhtml, line 8"),
        ("book.epub", "OEBPS/text/chapter1.xhtml, line 9"), ("book.epub", "OEBPS/text/chapter1.xhtml, line 11"),
        ("report.docx", "picture 1"), ("report.docx", "picture 2"), ("report.docx", "picture 3"),
        ("talk.pptx", "slide 1"), ("talk.pptx", "slide 2"), ("notes.odt", "picture 1 (Photo)"),
        ("notes.odt", "picture 2 (Person)"), ("slides.odp", "page 1 (Photo)"), ("slides.odp", "page 2 (Person)")}
    text, trust, review = said["coffee.png"]
    filled = rows[("talk.pptx", "slide 1")]
    assert (filled.status, filled.alt_text, filled.needs_review, filled.written) == ("filled", text, review, True)
    assert filled.trust == (None if trust is None else round(trust, 4)) and filled.src == "ppt/media/image1.png"
    assert "file name" in filled.note
    kept = rows[("report.docx", "picture 2")]
    assert (kept.status, kept.alt_text) == (FillStatus.KEPT, PERSON_ALT)
    assert rows[("report.docx", "picture 3")].status == FillStatus.KEPT and "decorative" in rows[
        ("report.docx", "picture 3")].note
    assert rows[("book.epub", "OEBPS/text/chapter1.xhtml, line 9")].note.startswith('alt=""')
    # The originals are kept, with the document's permissions.
    backup = next(Path(p.backup) for p in result.pages if p.page.endswith("book.epub"))
    assert backup.read_bytes() == (originals / "book.epub").read_bytes()
    # A second run changes nothing.
    before = snapshot(docs)
    again = run_alt_fill([docs], describer, recursive=True, backup_dir=tmp_path / "backups2", write="all")
    assert snapshot(docs) == before and {p.status for p in again.pages} == {"unchanged"}
    assert {r.status for r in again.images} == {FillStatus.KEPT}


def test_dry_run_shows_each_change_and_writes_nothing(docs, describer, said):
    before = snapshot(docs)
    result = run_alt_fill([docs / "book.epub", docs / "report.docx"], describer, dry_run=True, write="all")
    assert snapshot(docs) == before
    assert [p.status for p in result.pages] == ["would change", "would change"]
    diff = result.diffs[str(docs / "report.docx")].decode()
    cup = html.escape(said["coffee.png"][0], quote=True)
    assert f'-<wp:docPr id="1" name="Picture 1"/>\n+<wp:docPr id="1" name="Picture 1" descr="{cup}"/>' in diff
    assert "book.epub/OEBPS/text/chapter1.xhtml" in result.diffs[str(docs / "book.epub")].decode()


def test_epub_metadata_is_added_only_when_every_picture_has_alt_text(tmp_path, describer):
    book = make_epub(tmp_path / "book.epub")
    plain = run_alt_fill([book], describer, epub_metadata=False, backup_dir=tmp_path / "b", write="all")
    assert "--epub-metadata" in plain.pages[0].note and entry_text(book, "OEBPS/content.opf") == OPF3.encode()
    done = run_alt_fill([book], describer, epub_metadata=True, backup_dir=tmp_path / "b", write="all")
    opf = entry_text(book, "OEBPS/content.opf")
    meta = '\n    <meta property="schema:accessibilityFeature">alternativeText</meta>\n  </metadata>'
    assert opf == OPF3.replace("\n  </metadata>", meta).encode()
    assert done.pages[0].status == "changed" and "now says so" in done.pages[0].note
    assert "conform" not in json.dumps([p.note for p in done.pages])  # never claimed
    # A picture with nothing certain to say (the rocket) leaves the book without the claim.
    chapter = (tmp_path / "c.xhtml")
    from test_altfill_docs_build import CHAPTER

    chapter.write_text(CHAPTER.replace("../images/chelsea.png", "../images/rocket.jpg"))
    rocket = make_epub(tmp_path / "rocket.epub", chapter.read_text(),
                       OPF3.replace('href="images/chelsea.png"', 'href="images/rocket.jpg"').replace(
                           'id="cat" href="images/rocket.jpg" media-type="image/png"',
                           'id="cat" href="images/rocket.jpg" media-type="image/jpeg"'),
                       {"OEBPS/images/rocket.jpg": (SAMPLES / "rocket.jpg").read_bytes()})
    res = run_alt_fill([rocket], describer, epub_metadata=True, backup_dir=tmp_path / "b", write="all")
    assert [r.status for r in res.images if r.src.endswith("rocket.jpg")] == [FillStatus.UNDESCRIBED]
    assert res.pages[0].note is None
    assert entry_text(rocket, "OEBPS/content.opf").count(b"accessibilityFeature") == 0


def _bad_documents(folder: Path) -> dict[str, str]:
    """Documents that must be refused, and a word the one-line reason must hold."""
    folder.mkdir()
    make_epub(folder / "drm.epub", extra={"META-INF/encryption.xml": (
        b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        b'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        b'<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        b'<enc:CipherData><enc:CipherReference URI="OEBPS/text/chapter1.xhtml"/></enc:CipherData>'
        b"</enc:EncryptedData></encryption>")})
    make_epub(folder / "rights.epub", extra={"META-INF/rights.xml": b"<rights/>"})
    (folder / "locked.docx").write_bytes(OLE_MAGIC + b"\0" * 4096)  # what Word writes when a password is set
    make_epub(folder / "bomb.epub", extra={"OEBPS/zeros.bin": b"\0" * (20 << 20)})
    make_epub(folder / "escape.epub", extra={"../../evil.xhtml": b"<p/>"})
    from test_altfill_docs_build import CHAPTER

    make_epub(folder / "broken.epub", chapter=CHAPTER.replace("</body>", "</bdy>"))
    return {"drm.epub": "DRM", "rights.epub": "DRM", "locked.docx": "password-protected", "bomb.epub": "zip bomb",
            "escape.epub": "leads out of the zip", "broken.epub": "not well-formed"}


def test_bad_documents_are_named_and_left_and_the_rest_goes_on(tmp_path, describer, said):
    bad = tmp_path / "in"
    reasons = _bad_documents(bad)
    make_docx(bad / "good.docx")
    before = snapshot(bad)
    result = run_alt_fill([bad], describer, backup_dir=tmp_path / "b", write="all")
    rows = {Path(p.page).name: p for p in result.pages}
    for name, word in reasons.items():
        assert rows[name].status == "failed" and word in rows[name].error, (name, rows[name].error)
        assert "\n" not in rows[name].error
        assert (bad / name).read_bytes() == before[name][0]
    assert rows["good.docx"].status == "changed" and result.failed
    # The CLI names each in one line and says 1.
    again = tmp_path / "again"
    _bad_documents(again)
    proc = run_cli("alt-fill", str(again), "-q", "--report", str(tmp_path / "r.json"))
    assert proc.returncode == 1, proc.stderr
    for name, word in reasons.items():
        lines = [ln for ln in proc.stderr.splitlines() if f"{name}:" in ln]
        assert len(lines) == 1 and word in lines[0], (name, proc.stderr)


def test_a_document_saved_meanwhile_is_left_and_permissions_are_kept(tmp_path, describer):
    docx_path = make_docx(tmp_path / "r.docx")
    os.chmod(docx_path, 0o640)
    theirs = make_pptx(tmp_path / "theirs.pptx").read_bytes()

    def save_meanwhile(page: Path) -> None:
        page.write_bytes(theirs)

    res = run_alt_fill([docx_path], describer, backup_dir=tmp_path / "b", before_write=save_meanwhile, write="all")
    assert res.pages[0].status == "failed" and "changed while" in res.pages[0].error
    assert docx_path.read_bytes() == theirs and res.failed
    make_docx(docx_path)
    original = docx_path.read_bytes()
    res = run_alt_fill([docx_path], describer, backup_dir=tmp_path / "b", write="all")
    assert res.pages[0].status == "changed"
    backup = Path(res.pages[0].backup)
    assert backup.read_bytes() == original
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640 == stat.S_IMODE(docx_path.stat().st_mode)


def test_placeholders_are_file_names_only():
    assert is_file_name("IMG_2041.JPG") and is_file_name("coffee.png") and is_file_name("Picture 1.jpeg")
    assert is_file_name("image1", "word/media/image1") and not is_file_name("A cup of coffee.")
    assert not is_file_name("See fig. 2.png above for the chart") and not is_file_name("")


def _epubcheck() -> list[str] | None:
    exe = shutil.which("epubcheck")
    if exe is None:
        return None
    with open(exe, "rb") as fh:  # Debian ships an executable jar, which runs only where binfmt knows jars
        jar = fh.read(2) == b"PK"
    return ["java", "-jar", exe] if jar and shutil.which("java") else [exe]


@pytest.mark.skipif(_epubcheck() is None, reason="needs EPUBCheck (Debian package epubcheck)")
@pytest.mark.slow  # 11 s measured on two busy cores
def test_epubcheck_finds_nothing_new_after_a_fill(tmp_path, describer):
    book = make_epub(tmp_path / "book.epub")

    def check() -> list[tuple[str, str]]:
        out = tmp_path / "check.json"
        subprocess.run([*_epubcheck(), str(book), "--json", str(out)], capture_output=True, timeout=300)
        return sorted((m["severity"], m["ID"]) for m in json.loads(out.read_text())["messages"]
                      if m["severity"] in ("FATAL", "ERROR", "WARNING"))

    before = check()
    res = run_alt_fill([book], describer, epub_metadata=True, backup_dir=tmp_path / "b")
    assert res.pages[0].status == "changed"
    assert check() == before == []


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (libreoffice-writer-nogui, "
                                                            "libreoffice-impress-nogui)")
@pytest.mark.slow  # 5 s measured on two busy cores
def test_libreoffice_opens_the_filled_documents_and_shows_the_alt_text(docs, tmp_path, describer, said):
    run_alt_fill([docs], describer, recursive=True, backup_dir=tmp_path / "b", write="all")
    out = tmp_path / "converted"
    profile = (tmp_path / "lo-profile").as_uri()
    for src, to in ((docs / "report.docx", "odt"), (docs / "2024" / "talk.pptx", "odp"), (docs / "notes.odt", "docx")):
        proc = subprocess.run(["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", to,
                               "--outdir", str(out), str(src)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        converted = out / f"{src.stem}.{to}"
        part = "word/document.xml" if to == "docx" else "content.xml"
        text = entry_text(converted, part).decode()
        assert html.escape(said["coffee.png"][0], quote=False) in text and PERSON_ALT in text, (src, to)


def test_the_html_report_shows_the_pictures_left_as_they_were_too(tmp_path, describer):
    """A document's picture whose alt text its author wrote (or marked decorative) is kept as it is, and the
    report still shows it beside that text: a publisher checks every picture, not only those described."""
    from capdesk.altfill.report import write_report

    docx_path = make_docx(tmp_path / "r.docx")
    result = run_alt_fill([docx_path], describer, dry_run=True, previews=True)
    kept = [r for r in result.images if r.status == FillStatus.KEPT]
    assert {r.alt_text for r in kept} >= {PERSON_ALT}
    assert all(r.preview.startswith("data:image/jpeg;base64,") for r in kept), [(r.src, r.preview[:30]) for r in kept]
    report = tmp_path / "report.html"
    write_report(result, report)
    page = report.read_text(encoding="utf-8")
    assert f'alt="{html.escape(PERSON_ALT, quote=True)}"' in page
    assert page.count("<img ") == len(result.images)
    # Without previews (a JSON report, the window's review list) no picture is copied out for nothing.
    assert not any(r.preview for r in run_alt_fill([docx_path], describer, dry_run=True).images)


SVG = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>'


def test_an_svg_picture_is_described_by_its_png_copy_and_an_svg_alone_is_skipped(tmp_path, describer):
    """LibreOffice keeps an SVG picture with a PNG copy after it in the same frame; the copy is described
    and the frame gets its text. An SVG with no copy is skipped by its name for a person, never failing
    the run (two LibreOffice templates failed whole runs with "not an image")."""
    from test_altfill_docs_build import ODF_MANIFEST, ODF_NS, store

    both = ('<draw:frame draw:name="Logo"><draw:image xlink:href="Pictures/logo.svg"/>'
            '<draw:image xlink:href="Pictures/chelsea.png"/></draw:frame>')
    alone = '<draw:frame draw:name="Leaf"><draw:image xlink:href="Pictures/leaf.svg"/></draw:frame>'
    content = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS}><office:body>'
               f'<office:presentation><draw:page draw:name="One">{both}{alone}</draw:page></office:presentation>'
               '</office:body></office:document-content>')
    mime = "application/vnd.oasis.opendocument.presentation"
    deck = tmp_path / "deck.odp"
    with zipfile.ZipFile(deck, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", content)
        store(z, "Pictures/logo.svg", SVG)
        store(z, "Pictures/leaf.svg", SVG)
        store(z, "Pictures/chelsea.png", (SAMPLES / "chelsea.png").read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    result = run_alt_fill([deck], describer, write="all", backup_dir=tmp_path / "backups")
    assert result.pages[0].status == "changed", result.pages[0]
    logo, leaf = result.images
    assert logo.src == "Pictures/chelsea.png" and logo.status == FillStatus.FILLED and logo.alt_text
    assert leaf.status == FillStatus.SKIPPED and "an SVG picture" in leaf.note and not leaf.error
    assert f"<svg:desc>{html.escape(logo.alt_text, quote=False)}</svg:desc>" in entry_text(deck, "content.xml").decode()
