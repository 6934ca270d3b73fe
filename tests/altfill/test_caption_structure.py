"""A caption belongs to the picture it captions by the document's own structure, never by nearness
alone: two framed pictures side by side in Writer where only the second has a caption, and two Word
pictures in one paragraph above a caption paragraph; the first picture gets no caption of another."""

from __future__ import annotations

import zipfile
from pathlib import Path

from conftest import SAMPLES
from test_altfill_docs_build import ODF_MANIFEST, ODF_NS, store

from capdesk.altfill.documents import scan_document

STYLES = ('<office:automatic-styles><style:style style:name="P1" style:family="paragraph" '
          'style:parent-style-name="Illustration"/></office:automatic-styles>')
IMAGE = ('<draw:frame draw:name="{name}" text:anchor-type="{anchor}" svg:width="4cm" svg:height="3cm">'
         '<draw:image xlink:href="Pictures/{pic}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
         '</draw:frame>')
SPITFIRE = IMAGE.format(name="Spitfire", pic="coffee.png", anchor="paragraph")
THUNDERBOLT = IMAGE.format(name="Thunderbolt", pic="astronaut.png", anchor="as-char")
# LibreOffice's captioned frame (Insert > Caption): an outer frame whose text box holds the caption paragraph,
# the picture drawn in it; the uncaptioned picture beside it anchored to the paragraph before.
BESIDE_A_CAPTIONED_FRAME = f"""<text:p>{SPITFIRE}</text:p>
<text:p text:style-name="P1">{THUNDERBOLT}Illustration <text:sequence text:name="Illustration">2</text:sequence>: \
Thunderbolt.</text:p>"""
IN_A_TEXT_BOX = f"""<text:p>{SPITFIRE}<draw:frame draw:name="Frame1" text:anchor-type="paragraph" svg:width="4cm">\
<draw:text-box><text:p text:style-name="P1">{THUNDERBOLT}Illustration 2: Thunderbolt.</text:p></draw:text-box>\
</draw:frame></text:p>"""
# Both in one paragraph, a caption paragraph after them: it names the group, or one of them, never the first alone.
ONE_PARAGRAPH = f"""<text:p>{SPITFIRE}{THUNDERBOLT}</text:p>
<text:p text:style-name="P1">Illustration 2: Thunderbolt.</text:p>"""


def _odt(path: Path, body: str) -> Path:
    content = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {ODF_NS} '
               'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0">'
               f"{STYLES}<office:body><office:text>\n{body}\n</office:text></office:body></office:document-content>")
    mime = "application/vnd.oasis.opendocument.text"
    with zipfile.ZipFile(path, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", content)
        for name in ("coffee.png", "astronaut.png"):
            store(z, f"Pictures/{name}", (SAMPLES / name).read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    return path


def _captions(path: Path) -> dict[str, str]:
    doc = scan_document(path)
    assert doc.row.status != "failed", doc.row.error
    return {s.src.rsplit("/", 1)[-1]: s.caption for s in doc.spots}


def test_a_writer_caption_is_the_captioned_frame_s_never_its_neighbour_s(tmp_path):
    for n, body in enumerate((BESIDE_A_CAPTIONED_FRAME, IN_A_TEXT_BOX)):
        got = _captions(_odt(tmp_path / f"planes{n}.odt", body))
        assert got == {"coffee.png": "", "astronaut.png": "Illustration 2: Thunderbolt."}, body


def test_a_caption_under_two_writer_pictures_is_neither_s_alone(tmp_path):
    got = _captions(_odt(tmp_path / "planes.odt", ONE_PARAGRAPH))
    assert got["coffee.png"] == ""


def test_a_word_caption_under_two_pictures_in_one_paragraph_is_not_the_first_s(tmp_path):
    import docx

    d = docx.Document()
    run = d.add_paragraph().add_run()
    run.add_picture(str(SAMPLES / "coffee.png"))
    run.add_picture(str(SAMPLES / "astronaut.png"))
    d.add_paragraph("Figure 2: Thunderbolt.", style="Caption")
    d.add_picture(str(SAMPLES / "rocket.jpg"))
    d.add_paragraph("Figure 3: A rocket lifts off.", style="Caption")
    d.save(str(tmp_path / "planes.docx"))
    got = _captions(tmp_path / "planes.docx")
    assert got["image1.png"] == "" and got["image3.jpg"] == "Figure 3: A rocket lifts off."
