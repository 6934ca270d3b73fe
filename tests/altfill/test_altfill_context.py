"""A figure's caption and the document's language go with its picture: a picture with a caption and no
trusted description gets the caption's words (said as ``caption``), never a guess; English alt text in
a page in another language says so (``lang="en"`` on the <img>), and a Word or OpenDocument file in
another language is said to be in it in the report. Only the alt text (and that mark) changes."""

from __future__ import annotations

import html
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from PIL import Image
from test_altfill_docs_build import CONTAINER, NAV, ODF_MANIFEST, ODF_NS, OPF3, store

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.rows import caption_text


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.mark.parametrize("caption, text", [
    ("Waxing crescent moon", "Waxing crescent moon."), ("Figure 2: Waxing crescent moon", "Waxing crescent moon."),
    ("Fig. 3. a red swatch", "A red swatch."), ("Illustration 1: Full moon", "Full moon."), ("Figure 4", ""),
    ("Şekil 1: Dolunay", "Dolunay."), ("Full moon!", "Full moon!")])
def test_a_caption_gives_its_words_without_the_figure_label(caption, text):
    assert caption_text(caption) == text


PAGE = """<!DOCTYPE html>
<html lang="LANG"><body>
<figure><img src="rocket.jpg"><figcaption>Figure 1: Waxing <em>crescent</em> moon</figcaption></figure>
<figure><img src="red.png" class="swatch"><figcaption>Kırmızı renk örneği</figcaption></figure>
<p><img src="chelsea.png"></p>
</body></html>
"""


def _site(folder: Path, lang: str) -> Path:
    folder.mkdir()
    for name in ("rocket.jpg", "chelsea.png"):
        shutil.copy(SAMPLES / name, folder / name)
    Image.new("RGB", (160, 120), (200, 20, 20)).save(folder / "red.png")
    page = folder / "index.html"
    page.write_text(PAGE.replace("LANG", lang), encoding="utf-8")
    return page


def test_captions_give_the_alt_text_and_english_is_marked_in_a_turkish_page(tmp_path, describer):
    page = _site(tmp_path / "tr", "tr")
    before = page.read_text(encoding="utf-8")
    result = run_alt_fill([page], describer, backup_dir=tmp_path / "backups")
    moon, red, cat = result.images
    # No picture with a caption got the describer's guess or "A blank red image.": the caption's words did.
    assert (moon.status, moon.alt_text, moon.said_as) == (FillStatus.FILLED, "Waxing crescent moon.", "caption")
    assert (red.status, red.alt_text, red.said_as) == (FillStatus.FILLED, "Kırmızı renk örneği.", "caption")
    assert "caption" in red.reason and "blank" in red.reason and moon.caption == "Figure 1: Waxing crescent moon"
    # The cat has no caption: the describer's English text, marked English; the captions' words are not.
    assert cat.status == FillStatus.FILLED and cat.said_as != "caption" and cat.lang == "en" and not red.lang
    after = before.replace('<img src="rocket.jpg">', '<img src="rocket.jpg" alt="Waxing crescent moon.">')
    after = after.replace('src="red.png" class', 'src="red.png" alt="Kırmızı renk örneği." class')
    cat_alt = html.escape(cat.alt_text)
    after = after.replace('<img src="chelsea.png">', f'<img src="chelsea.png" alt="{cat_alt}" lang="en">')
    assert page.read_text(encoding="utf-8") == after
    assert result.pages[0].lang == "tr" and "English" in result.pages[0].note
    from capdesk.altfill.report import write_report

    write_report(result, tmp_path / "report.html")
    shown = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Its caption: Figure 1: Waxing crescent moon" in shown and "alt text taken from its caption" in shown
    # In an English page nothing is marked; --write facts writes the captions too (the author's words).
    english = _site(tmp_path / "en", "en")
    done = run_alt_fill([english], describer, write="facts", backup_dir=tmp_path / "backups")
    assert [(r.status, r.said_as) for r in done.images[:2]] == [(FillStatus.FILLED, "caption")] * 2
    assert "lang=" not in english.read_text(encoding="utf-8").replace('<html lang="en">', "")


def _docx_with_captions(path: Path) -> Path:
    import docx
    from docx.oxml.ns import qn
    from lxml import etree

    d = docx.Document()
    d.add_picture(str(SAMPLES / "rocket.jpg"))
    d.add_paragraph("Figure 1: Waxing crescent moon", style="Caption")
    d.add_paragraph("A photo without a caption:")
    d.add_picture(str(SAMPLES / "chelsea.png"))
    rpr = d.styles.element.find(qn("w:docDefaults")).find(qn("w:rPrDefault")).find(qn("w:rPr"))
    lang = rpr.find(qn("w:lang"))
    if lang is None:
        lang = etree.SubElement(rpr, qn("w:lang"))
    lang.set(qn("w:val"), "tr-TR")
    d.save(str(path))
    return path


ODT_CAPTIONED = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS} xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0">
<office:automatic-styles><style:style style:name="P1" style:family="paragraph" style:parent-style-name="Illustration"/>
</office:automatic-styles><office:body><office:text>
<text:p><draw:frame draw:name="Frame1" text:anchor-type="as-char" svg:width="4cm"><draw:text-box>
<text:p text:style-name="P1"><draw:frame draw:name="Moon" text:anchor-type="as-char" svg:width="4cm" \
svg:height="3cm"><draw:image xlink:href="Pictures/rocket.jpg" xlink:type="simple" xlink:show="embed" \
xlink:actuate="onLoad"/></draw:frame>\
Illustration <text:sequence text:name="Illustration">1</text:sequence>: Full moon over the sea</text:p>
</draw:text-box></draw:frame></text:p>
</office:text></office:body></office:document-content>
"""
ODT_STYLES = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" \
xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" office:version="1.2"><office:styles>
<style:default-style style:family="paragraph"><style:text-properties fo:language="he" fo:country="IL"/>\
</style:default-style>
</office:styles></office:document-styles>
"""


def test_word_and_opendocument_captions_and_languages(tmp_path, describer):
    word = _docx_with_captions(tmp_path / "moon.docx")
    odt = tmp_path / "moon.odt"
    mime = "application/vnd.oasis.opendocument.text"
    with zipfile.ZipFile(odt, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", ODT_CAPTIONED)
        store(z, "styles.xml", ODT_STYLES)
        store(z, "Pictures/rocket.jpg", (SAMPLES / "rocket.jpg").read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime).replace("coffee.png", "rocket.jpg"))
    old_content = zipfile.ZipFile(odt).read("content.xml")
    result = run_alt_fill([word, odt], describer, backup_dir=tmp_path / "backups")
    rows = {(Path(r.page).name, r.location): r for r in result.images}
    moon = rows[("moon.docx", "picture 1")]
    assert (moon.alt_text, moon.said_as, moon.caption) == ("Waxing crescent moon.", "caption",
                                                           "Figure 1: Waxing crescent moon")
    cat = rows[("moon.docx", "picture 2")]
    assert not cat.caption and cat.said_as != "caption" and cat.lang == "en"
    pages = {Path(p.page).name: p for p in result.pages}
    assert pages["moon.docx"].lang == "tr-TR" and "tr-TR" in pages["moon.docx"].note
    assert "not marked" in pages["moon.docx"].note
    import docx

    assert [s._inline.docPr.get("descr") for s in docx.Document(str(word)).inline_shapes] == [
        "Waxing crescent moon.", cat.alt_text]
    full = rows[("moon.odt", "picture 1 (Moon)")]
    assert (full.alt_text, full.said_as) == ("Full moon over the sea.", "caption")
    assert pages["moon.odt"].lang == "he-IL"
    new_content = zipfile.ZipFile(odt).read("content.xml")
    piece = f"<svg:desc>{full.alt_text}</svg:desc>".encode()
    assert new_content == old_content.replace(b'onLoad"/></draw:frame>', b'onLoad"/>' + piece + b"</draw:frame>")


CHAPTER_TR = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="tr" xml:lang="tr">
<head><title>Bölüm 1</title></head>
<body>
  <figure><img src="../images/astronaut.png"/><figcaption>Şekil 1: Uzay giysili <b>astronot</b></figcaption></figure>
  <p><img src="../images/chelsea.png" alt=""/></p>
  <p><img src="../images/coffee.png"/></p>
  <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="200">
    <image xlink:href="../images/chelsea.png" width="300" height="200"/>
  </svg>
</body>
</html>
"""


def test_an_epub_chapter_in_turkish(tmp_path, describer):
    book = tmp_path / "kitap.epub"
    with zipfile.ZipFile(book, "w") as z:
        store(z, "mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        store(z, "META-INF/container.xml", CONTAINER)
        store(z, "OEBPS/content.opf", OPF3.replace("<dc:language>en", "<dc:language>tr"))
        store(z, "OEBPS/nav.xhtml", NAV)
        store(z, "OEBPS/text/chapter1.xhtml", CHAPTER_TR)
        for name in ("coffee.png", "astronaut.png", "chelsea.png"):
            store(z, f"OEBPS/images/{name}", (SAMPLES / name).read_bytes(), zipfile.ZIP_STORED)
    result = run_alt_fill([book], describer, include_empty=True, backup_dir=tmp_path / "backups", write="all")
    astro, cat, cup, drawn = result.images
    assert astro.caption == "Şekil 1: Uzay giysili astronot" and astro.said_as in ("caption", "fact")
    text = zipfile.ZipFile(book).read("OEBPS/text/chapter1.xhtml").decode("utf-8")
    expected = CHAPTER_TR
    if astro.said_as == "caption":
        assert astro.alt_text == "Uzay giysili astronot."
        expected = expected.replace('astronaut.png"/>', 'astronaut.png" alt="Uzay giysili astronot."/>')
    else:
        expected = expected.replace('astronaut.png"/>', f'astronaut.png" alt="{html.escape(astro.alt_text)}" lang="en" '
                                                        'xml:lang="en"/>')
    english = ' lang="en" xml:lang="en"/>'
    expected = expected.replace('chelsea.png" alt=""/>', f'chelsea.png" alt="{html.escape(cat.alt_text)}"{english}')
    expected = expected.replace('coffee.png"/>', f'coffee.png" alt="{html.escape(cup.alt_text)}"{english}')
    expected = expected.replace('height="200"/>', f'height="200"><title xml:lang="en">{html.escape(drawn.alt_text)}'
                                                  "</title></image>")
    assert text == expected and drawn.lang == "en"
    assert result.pages[0].lang == "tr" and 'lang="en"' in result.pages[0].note


def test_a_pdf_in_another_language_marks_the_english_alt_text(tmp_path, describer):
    pikepdf = pytest.importorskip("pikepdf")
    pdf = tmp_path / "rapor.pdf"
    with pikepdf.open(Path(__file__).parent / "fixtures" / "tagged-figures.pdf") as src:
        src.Root.Lang = pikepdf.String("tr-TR")
        src.save(pdf)
    original = pdf.read_bytes()
    result = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups")
    filled = [r for r in result.images if r.status == FillStatus.FILLED]
    assert filled and all(r.lang == "en" for r in filled) and pdf.read_bytes().startswith(original)
    assert result.pages[0].lang == "tr-TR" and "/Lang (en)" in result.pages[0].note
    with pikepdf.open(pdf) as done:
        marked = [(str(k.Alt), str(k.Lang)) for k in _figures(done.Root.StructTreeRoot.K) if "/Lang" in k]
    assert marked == [(r.alt_text, "en") for r in filled]


def _figures(k):
    import pikepdf

    if isinstance(k, pikepdf.Array):
        for kid in k:
            yield from _figures(kid)
    elif isinstance(k, pikepdf.Dictionary) and "/S" in k:
        if k.S == "/Figure":
            yield k
        if "/K" in k:
            yield from _figures(k.K)


def test_a_word_caption_above_belongs_to_the_picture_below_unless_it_is_the_one_before_s(tmp_path):
    import docx

    from capdesk.altfill.office import find_office
    from capdesk.altfill.zipsafe import ZipDoc

    d = docx.Document()
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.add_paragraph("Figure 1: A cup", style="Caption")
    d.add_picture(str(SAMPLES / "chelsea.png"))  # no caption of its own: Figure 1 is the cup's
    d.add_paragraph("Text between.")
    d.add_paragraph("Figure 2: A rocket", style="Caption")  # above its picture
    d.add_picture(str(SAMPLES / "rocket.jpg"))
    d.save(str(tmp_path / "c.docx"))
    _parts, spots = find_office(ZipDoc((tmp_path / "c.docx").read_bytes()), "docx")
    assert [s.caption for s in spots] == ["Figure 1: A cup", "", "Figure 2: A rocket"]
