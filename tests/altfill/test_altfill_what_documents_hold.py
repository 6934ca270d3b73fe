"""What real documents hold: old-style (VML) pictures in Word, pictures in Word headers and in
OpenDocument master pages, EMF pictures and embedded objects' previews (skipped by their right name,
never failing the run), spreadsheets in a folder (one line each), EPUB manifest links with #fragments,
and --include-empty taking away the decorative marks it overrides. Only the alt text (and those marks)
changes."""

from __future__ import annotations

import html
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES
from test_altfill_docs_build import CONTAINER, NAV, ODF_MANIFEST, ODF_NS, OPF3, make_docx, make_epub, store

from capdesk.altfill.fill import FillStatus, run_alt_fill

V = 'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"'
VML_PICTURE = (f'<w:p><w:r><w:pict {V}><v:shape id="Cat" type="#_x0000_t75" style="width:90pt;height:60pt">'
               '<v:imagedata r:id="RID" o:title=""/></v:shape></w:pict></w:r></w:p>')
VML_EMF = (f'<w:p><w:r><w:pict {V}><v:shape id="Chart" type="#_x0000_t75" style="width:90pt;height:60pt">'
           '<v:imagedata r:id="rIdEmf" o:title=""/></v:shape></w:pict></w:r></w:p>')
OLE_OBJECT = (f'<w:p><w:r><w:object {V}><v:shape id="Eq" type="#_x0000_t75" style="width:40pt;height:20pt">'
              '<v:imagedata r:id="rIdEmf" o:title=""/></v:shape>'
              '<o:OLEObject Type="Embed" ProgID="Equation.3" ShapeID="Eq" DrawAspect="Content" ObjectID="_1"/>'
              "</w:object></w:r></w:p>")


def emf() -> bytes:
    """The smallest EMF a reader opens: its header record and its end record."""
    header = struct.pack("<II4i4iIIIHHIIII2i2i", 1, 88, 0, 0, 100, 100, 0, 0, 2646, 2646, 0x464D4520, 0x10000,
                         108, 2, 1, 0, 0, 0, 0, 1024, 768, 320, 240)
    return header + struct.pack("<5I", 14, 20, 0, 16, 20)


def _rewrite(path: Path, change: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path) as z:
        entries = [(i, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w") as z:
        for info, data in entries:
            z.writestr(info, change.pop(info.filename, data))
        for name, data in change.items():
            store(z, name, data)


def _word(path: Path) -> Path:
    """A Word file holding a picture in its header, an old-style (VML) picture, an EMF picture in VML,
    an equation object with its EMF preview, and the decorative picture of ``make_docx``."""
    import docx

    make_docx(path)
    d = docx.Document(str(path))
    d.sections[0].header.paragraphs[0].add_run().add_picture(str(SAMPLES / "coffee.png"))
    rid, _ = d.part.get_or_add_image(str(SAMPLES / "chelsea.png"))
    d.save(str(path))
    with zipfile.ZipFile(path) as z:
        body = z.read("word/document.xml").decode("utf-8")
        rels = z.read("word/_rels/document.xml.rels").decode("utf-8")
        types = z.read("[Content_Types].xml").decode("utf-8")
    at = body.index("<w:sectPr")
    body = body[:at] + VML_PICTURE.replace("RID", rid) + VML_EMF + OLE_OBJECT + body[at:]
    rels = rels.replace("</Relationships>", '<Relationship Id="rIdEmf" Type="http://schemas.openxmlformats.org/'
                        'officeDocument/2006/relationships/image" Target="media/chart.emf"/></Relationships>')
    types = types.replace("</Types>", '<Default Extension="emf" ContentType="image/x-emf"/></Types>')
    _rewrite(path, {"word/document.xml": body.encode(), "word/_rels/document.xml.rels": rels.encode(),
                    "[Content_Types].xml": types.encode(), "word/media/chart.emf": emf()})
    return path


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def test_word_vml_header_emf_and_object_pictures(tmp_path, describer):
    word = _word(tmp_path / "old.docx")
    old = zipfile.ZipFile(word).read("word/document.xml")
    result = run_alt_fill([word], describer, include_empty=True, backup_dir=tmp_path / "backups", write="all")
    assert not result.failed, [(r.location, r.error) for r in result.images if r.error]
    rows = {r.location: r for r in result.images}
    header = next(r for loc, r in rows.items() if loc.startswith("word/header"))
    assert header.status == FillStatus.FILLED and header.alt_text
    vml = rows["picture 4"]
    assert (vml.status, vml.src) == (FillStatus.FILLED, "word/media/image3.png") and vml.alt_text
    chart, equation = rows["picture 5"], rows["picture 6"]
    assert chart.status == FillStatus.SKIPPED and "an EMF picture" in chart.note and "WMF" not in chart.note
    assert equation.status == FillStatus.SKIPPED and "embedded object" in equation.note
    decorative = rows["picture 3"]
    assert decorative.status == FillStatus.FILLED and "no longer skip" in decorative.note
    # The only changes: the alt text of the pictures, and the decorative picture's mark turned off.
    new = zipfile.ZipFile(word).read("word/document.xml")
    cat, cup = html.escape(vml.alt_text).encode(), html.escape(rows["picture 1"].alt_text).encode()
    expected = old.replace(b'name="Picture 1"/>', b'name="Picture 1" descr="' + cup + b'"/>', 1)
    expected = expected.replace(b'height:60pt"><v:imagedata r:id="rId',
                                b'height:60pt" alt="' + cat + b'"><v:imagedata r:id="rId', 1)
    expected = expected.replace(b'name="Picture 3"', b'name="Picture 3" descr="' + html.escape(
        decorative.alt_text).encode() + b'"', 1).replace(b'decorative" val="1"', b'decorative" val="0"')
    assert new == expected
    import docx

    assert len(docx.Document(str(word)).inline_shapes) == 3  # still a Word file python-docx reads


STYLES_WITH_LOGO = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles {ODF_NS} xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0">
<office:master-styles><style:master-page style:name="Standard"><style:header><text:p>
<draw:frame draw:name="Logo" text:anchor-type="as-char" svg:width="2cm" svg:height="1cm"><draw:image \
xlink:href="Pictures/coffee.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>
</text:p></style:header></style:master-page></office:master-styles></office:document-styles>
"""
CONTENT_WITH_OBJECT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS} xmlns:loext="urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0">
<office:body><office:text>
<text:p><draw:frame draw:name="Border" loext:decorative="true" svg:width="4cm" svg:height="3cm">\
<draw:image xlink:href="Pictures/astronaut.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>\
</draw:frame></text:p>
<text:p><draw:frame draw:name="Formula" svg:width="4cm" svg:height="1cm"><draw:object xlink:href="./Object 1" \
xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/><draw:image xlink:href="./ObjectReplacements/Object 1" \
xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>
</office:text></office:body></office:document-content>
"""


def test_opendocument_header_decorative_mark_and_object_preview(tmp_path, describer):
    odt = tmp_path / "letter.odt"
    mime = "application/vnd.oasis.opendocument.text"
    with zipfile.ZipFile(odt, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", CONTENT_WITH_OBJECT)
        store(z, "styles.xml", STYLES_WITH_LOGO)
        for name in ("coffee.png", "astronaut.png"):
            store(z, f"Pictures/{name}", (SAMPLES / name).read_bytes(), zipfile.ZIP_STORED)
        store(z, "ObjectReplacements/Object 1", b"VCLMTF" + bytes(64))
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    plain = run_alt_fill([odt], describer, dry_run=True, write="all")
    assert {r.location: r.status for r in plain.images}["picture 1 (Border)"] == FillStatus.KEPT
    result = run_alt_fill([odt], describer, include_empty=True, backup_dir=tmp_path / "backups", write="all")
    assert not result.failed
    rows = {r.location: r for r in result.images}
    logo = rows["header of page style 'Standard', picture 1 (Logo)"]
    assert logo.status == FillStatus.FILLED and logo.written
    border, formula = rows["picture 1 (Border)"], rows["picture 2 (Formula)"]
    assert border.status == FillStatus.FILLED and formula.status == FillStatus.SKIPPED
    assert "embedded object" in formula.note
    with zipfile.ZipFile(odt) as z:
        styles, content = z.read("styles.xml").decode(), z.read("content.xml").decode()
    assert styles == STYLES_WITH_LOGO.replace('onLoad"/></draw:frame>',
                                              f'onLoad"/><svg:desc>{html.escape(logo.alt_text)}</svg:desc></draw:frame>')
    assert content == CONTENT_WITH_OBJECT.replace('loext:decorative="true"', 'loext:decorative="false"').replace(
        'astronaut.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>',
        f'astronaut.png" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/><svg:desc>'
        f'{html.escape(border.alt_text)}</svg:desc>')


def test_include_empty_takes_away_the_marks_that_hide_a_picture(tmp_path, describer):
    shutil.copy(SAMPLES / "coffee.png", tmp_path / "coffee.png")
    page = tmp_path / "index.html"
    before = ('<p><img src="coffee.png" role="presentation" class="a">\n'
              "<img role='none' alt='' src=coffee.png aria-hidden=\"true\"></p>\n")
    page.write_text(before, encoding="utf-8")
    result = run_alt_fill([page], describer, include_empty=True, backup_dir=tmp_path / "backups", write="all")
    text = html.escape(result.images[0].alt_text)
    assert [r.status for r in result.images] == [FillStatus.FILLED] * 2 and text
    assert page.read_text(encoding="utf-8") == (f'<p><img src="coffee.png" alt="{text}" class="a">\n'
                                                f"<img alt='{text}' src=coffee.png></p>\n")
    # In an EPUB chapter too, and an SVG picture's aria-hidden goes with it.
    chapter = NAV.replace("<body>", '<body><p><img src="images/coffee.png" aria-hidden="true"/></p>'
                          '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                          '<image xlink:href="images/coffee.png" role="presentation"/></svg>')
    book = make_epub(tmp_path / "book.epub", opf=OPF3.replace('href="nav.xhtml"', 'href="nav.xhtml#toc"'))
    _rewrite(book, {"OEBPS/nav.xhtml": chapter.encode()})
    done = run_alt_fill([book], describer, include_empty=True, backup_dir=tmp_path / "backups", write="all")
    assert not done.failed, done.pages[0].error
    nav = zipfile.ZipFile(book).read("OEBPS/nav.xhtml").decode()
    assert "aria-hidden" not in nav and "presentation" not in nav
    assert nav == chapter.replace('coffee.png" aria-hidden="true"/>', f'coffee.png" alt="{text}"/>').replace(
        'coffee.png" role="presentation"/>', f'coffee.png"><title>{text}</title></image>')


def test_a_manifest_link_with_a_fragment_is_read(tmp_path, describer):
    book = make_epub(tmp_path / "book.epub", opf=OPF3.replace('href="text/chapter1.xhtml"',
                                                              'href="text/chapter1.xhtml#start"'))
    result = run_alt_fill([book], describer, dry_run=True)
    assert result.pages[0].status == "would change" and not result.pages[0].error
    assert "text/chapter1.xhtml#start carry a #fragment" in result.pages[0].note
    assert len(result.images) == 4


XLSX_PARTS = {
    "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="png" ContentType="image/png"/><Default Extension="rels" '
    'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
    'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override '
    'PartName="/xl/drawings/drawing1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>'
    "</Types>",
    "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
    'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
    '2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
    "xl/workbook.xml": '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/'
    'spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sales" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
    'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
    'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    "xl/worksheets/sheet1.xml": '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
    'openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships"><sheetData/><drawing r:id="rId1"/></worksheet>',
    "xl/worksheets/_rels/sheet1.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://'
    'schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/drawing" Target="../drawings/drawing1.xml"/>'
    "</Relationships>",
    "xl/drawings/drawing1.xml": '<?xml version="1.0" encoding="UTF-8"?><xdr:wsDr xmlns:xdr="http://schemas.'
    'openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/'
    '2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><xdr:oneCellAnchor>'
    '<xdr:from><xdr:col>1</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row><xdr:rowOff>0</xdr:rowOff>'
    '</xdr:from><xdr:ext cx="1905000" cy="1270000"/><xdr:pic><xdr:nvPicPr><xdr:cNvPr id="2" name="Picture 1"/>'
    '<xdr:cNvPicPr/></xdr:nvPicPr><xdr:blipFill><a:blip r:embed="rId1"/><a:stretch><a:fillRect/></a:stretch>'
    '</xdr:blipFill><xdr:spPr><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic>'
    "<xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>",
    "xl/drawings/_rels/drawing1.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://'
    'schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/image" Target="../media/image1.png"/></Relationships>',
}
ODS_CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS} xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0">
<office:body><office:spreadsheet><table:table table:name="Plan"><table:table-row><table:table-cell>\
<draw:frame draw:name="Photo" svg:width="4cm" svg:height="3cm"><draw:image xlink:href="Pictures/coffee.png" \
xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></table:table-cell></table:table-row>
</table:table></office:spreadsheet></office:body></office:document-content>
"""


def test_spreadsheets_pictures_are_filled_and_those_in_cells_named(tmp_path, describer):
    with zipfile.ZipFile(tmp_path / "sales.xlsx", "w") as z:
        for name, text in XLSX_PARTS.items():
            store(z, name, text)
        store(z, "xl/media/image1.png", (SAMPLES / "coffee.png").read_bytes())
        store(z, "xl/media/image2.png", (SAMPLES / "chelsea.png").read_bytes())  # placed in a cell: no drawing
    mime = "application/vnd.oasis.opendocument.spreadsheet"
    with zipfile.ZipFile(tmp_path / "plan.ods", "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", ODS_CONTENT)
        store(z, "Pictures/coffee.png", (SAMPLES / "coffee.png").read_bytes())
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    old_drawing = XLSX_PARTS["xl/drawings/drawing1.xml"].encode()
    result = run_alt_fill([tmp_path], describer, backup_dir=tmp_path.parent / "backups", write="all")
    rows = {(Path(r.page).name, r.location): r for r in result.images}
    pages = {Path(p.page).name: p for p in result.pages}
    sheet, ods = rows[("sales.xlsx", "sheet 'Sales'")], rows[("plan.ods", "sheet 'Plan', picture 1 (Photo)")]
    assert sheet.status == ods.status == FillStatus.FILLED and not result.failed
    assert (pages["sales.xlsx"].kind, pages["sales.xlsx"].status) == ("xlsx", "changed")
    assert "1 of its pictures (xl/media/image2.png)" in pages["sales.xlsx"].note
    with zipfile.ZipFile(tmp_path / "sales.xlsx") as z:
        assert z.read("xl/drawings/drawing1.xml") == old_drawing.replace(
            b'name="Picture 1"/>', b'name="Picture 1" descr="' + html.escape(sheet.alt_text).encode() + b'"/>')


def test_a_chapter_saying_no_language_has_its_book_s(tmp_path):
    # The package language alone says a chapter's language when the chapter does not.
    from capdesk.altfill.epub import find_epub
    from capdesk.altfill.zipsafe import ZipDoc

    book = tmp_path / "b.epub"
    with zipfile.ZipFile(book, "w") as z:
        store(z, "mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        store(z, "META-INF/container.xml", CONTAINER)
        store(z, "OEBPS/content.opf", OPF3.replace("<dc:language>en", "<dc:language>he"))
        store(z, "OEBPS/nav.xhtml", NAV.replace(' lang="en" xml:lang="en"', "").replace(
            "<body>", '<body><img src="images/coffee.png"/>'))
        store(z, "OEBPS/text/chapter1.xhtml", NAV)
        store(z, "OEBPS/images/coffee.png", (SAMPLES / "coffee.png").read_bytes())
    spots = find_epub(ZipDoc(book.read_bytes())).spots
    assert spots[0].make_en is not None and 'lang="en"' in spots[0].make_en("x")


def test_the_vml_copy_word_keeps_for_old_readers_is_not_counted_again(tmp_path):
    import docx

    from capdesk.altfill.office import find_office
    from capdesk.altfill.zipsafe import ZipDoc

    word = tmp_path / "both.docx"
    d = docx.Document()
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.save(str(word))
    with zipfile.ZipFile(word) as z:
        body = z.read("word/document.xml").decode("utf-8")
    start, end = body.index("<w:drawing>"), body.index("</w:drawing>") + len("</w:drawing>")
    rid = body[body.index('r:embed="') + 9:].split('"')[0]
    both = ('<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
            f"<mc:Choice Requires=\"wps\">{body[start:end]}</mc:Choice><mc:Fallback>"
            f"{VML_PICTURE.replace('RID', rid)[len('<w:p><w:r>'):-len('</w:r></w:p>')]}</mc:Fallback>"
            "</mc:AlternateContent>")
    _rewrite(word, {"word/document.xml": (body[:start] + both + body[end:]).encode()})
    _parts, spots = find_office(ZipDoc(word.read_bytes()), "docx")
    assert [(s.location, s.picture) for s in spots] == [("picture 1", "word/media/image1.png")]


def test_a_chart_is_listed_and_takes_a_person_s_text_from_the_review_file(tmp_path, describer):
    import csv

    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    from capdesk.altfill.review import apply_review, write_review

    deck = tmp_path / "sales.pptx"
    p = pptx.Presentation()
    slide = p.slides.add_slide(p.slide_layouts[6])
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Sales", (3, 5))
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(4), Inches(3), data)
    p.save(str(deck))
    result = run_alt_fill([deck], describer, dry_run=True)
    [chart] = result.images
    assert (chart.status, chart.location, chart.src) == (FillStatus.SKIPPED, "slide 1", "chart 1")
    assert chart.note.startswith("a chart, drawn from its data") and not result.failed
    review = tmp_path / "review.csv"
    write_review(result, review)
    [line] = list(csv.DictReader(review.open(newline="", encoding="utf-8")))
    line["write"], line["text"] = "yes", "Sales by region: South 5, North 3."
    with review.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(line))
        w.writeheader()
        w.writerow(line)
    done = apply_review(review, backup_dir=tmp_path / "backups")
    assert not done.failed and done.pages[0].status == "changed"
    frame = pptx.Presentation(str(deck)).slides[0].shapes[0]
    assert frame.has_chart and frame._element.nvGraphicFramePr.cNvPr.get("descr") == line["text"]


def test_a_logo_on_the_slide_master_is_filled(tmp_path, describer):
    import copy

    import pptx
    from pptx.util import Inches

    deck = tmp_path / "branded.pptx"
    p = pptx.Presentation()
    slide = p.slides.add_slide(p.slide_layouts[6])
    pic = slide.shapes.add_picture(str(SAMPLES / "coffee.png"), Inches(1), Inches(1), Inches(2))
    pic._element.nvPicPr.cNvPr.set("descr", "A mug of coffee.")
    _part, rid = p.slide_master.part.get_or_add_image_part(str(SAMPLES / "chelsea.png"))
    logo = copy.deepcopy(pic._element)
    logo.nvPicPr.cNvPr.attrib.pop("descr")
    logo.blipFill.blip.rEmbed = rid
    p.slide_master.shapes._spTree.append(logo)
    p.save(str(deck))
    result = run_alt_fill([deck], describer, backup_dir=tmp_path / "backups")
    rows = {r.location: r for r in result.images}
    assert rows["slide 1"].status == FillStatus.KEPT
    assert rows["slide master 1"].status == FillStatus.FILLED and rows["slide master 1"].written
    master = pptx.Presentation(str(deck)).slide_master
    assert [s._element.nvPicPr.cNvPr.get("descr") for s in master.shapes if s.shape_type == 13] == [
        rows["slide master 1"].alt_text]


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (libreoffice-impress-nogui)")
@pytest.mark.slow  # one conversion: 2.4 s measured on two busy cores
def test_libreoffice_shows_the_alt_text_of_master_and_layout_pictures(tmp_path, describer):
    """PowerPoint reads a master's or a layout's picture's alt text where it reads a slide's, p:cNvPr/@descr;
    LibreOffice turns each layout a slide uses, with its master, into a master page and keeps that descr as
    the frame's svg:desc in styles.xml (LibreOffice 7.4 leaves out a layout no slide uses, picture and all)."""
    import copy
    import subprocess

    import pptx
    from pptx.util import Inches

    deck = tmp_path / "branded.pptx"
    p = pptx.Presentation()
    layout = p.slide_layouts[6]
    slide = p.slides.add_slide(layout)
    pic = slide.shapes.add_picture(str(SAMPLES / "astronaut.png"), Inches(1), Inches(1), Inches(2))
    pic._element.nvPicPr.cNvPr.set("descr", "An astronaut.")
    for owner, picture in ((p.slide_master, "chelsea.png"), (layout, "coffee.png")):
        _part, rid = owner.part.get_or_add_image_part(str(SAMPLES / picture))
        logo = copy.deepcopy(pic._element)
        logo.nvPicPr.cNvPr.attrib.pop("descr")
        logo.blipFill.blip.rEmbed = rid
        owner.shapes._spTree.append(logo)
    p.save(str(deck))
    result = run_alt_fill([deck], describer, backup_dir=tmp_path / "backups", write="all")
    rows = {r.location: r for r in result.images}
    master, drawn = rows["slide master 1"], rows["slide layout 7"]
    assert master.status == drawn.status == FillStatus.FILLED and master.alt_text != drawn.alt_text
    again = pptx.Presentation(str(deck))
    assert [s._element.nvPicPr.cNvPr.get("descr") for s in again.slide_master.shapes
            if s.shape_type == 13] == [master.alt_text]
    assert [s._element.nvPicPr.cNvPr.get("descr") for s in again.slide_layouts[6].shapes
            if s.shape_type == 13] == [drawn.alt_text]
    out = tmp_path / "converted"
    proc = subprocess.run(["soffice", f"-env:UserInstallation={(tmp_path / 'lo-profile').as_uri()}", "--headless",
                           "--convert-to", "odp", "--outdir", str(out), str(deck)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(out / "branded.odp") as z:
        styles = z.read("styles.xml").decode()
    for row in (master, drawn):
        assert f"<svg:desc>{html.escape(row.alt_text, quote=False)}</svg:desc>" in styles, row.location
