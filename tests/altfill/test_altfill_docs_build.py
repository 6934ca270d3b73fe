"""Real documents for the alt-fill tests: an EPUB 3 and an EPUB 2 built by hand, a DOCX and a PPTX
made with python-docx and python-pptx, an ODT and an ODP built by hand, all holding the sample
pictures; and a reader of a zip's entries as raw bytes, to tell what changed."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from conftest import SAMPLES

PERSON_ALT = "Eileen Collins, commander, smiling in her orange flight suit."

CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""
OPF3 = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="en">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:6f1b7a52-3c1e-4c2a-9a55-3f7d2d1e0b11</dc:identifier>
    <dc:title>Pictures</dc:title>
    <dc:language>en</dc:language>
    <meta property="dcterms:modified">2025-06-28T12:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="text/chapter1.xhtml" media-type="application/xhtml+xml" properties="svg"/>
    <item id="coffee" href="images/coffee.png" media-type="image/png"/>
    <item id="astro" href="images/astronaut.png" media-type="image/png"/>
    <item id="cat" href="images/chelsea.png" media-type="image/png"/>
  </manifest>
  <spine>
    <itemref idref="nav"/>
    <itemref idref="c1"/>
  </spine>
</package>
"""
NAV = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>Contents</title></head>
<body><nav epub:type="toc"><ol><li><a href="text/chapter1.xhtml">Chapter 1</a></li></ol></nav></body>
</html>
"""
CHAPTER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang="en">
<head><title>Chapter 1</title></head>
<body>
  <h1>Chapter 1</h1>
  <p><img src="../images/coffee.png" class="photo"/></p>
  <p><img src="../images/astronaut.png" alt="PERSON"/></p>
  <p><img src="../images/coffee.png" alt=""/></p>
  <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="200">
    <image xlink:href="../images/chelsea.png" width="300" height="200"/>
  </svg>
</body>
</html>
""".replace("PERSON", PERSON_ALT)


def store(z: zipfile.ZipFile, name: str, data: bytes | str, compress: int = zipfile.ZIP_DEFLATED) -> None:
    info = zipfile.ZipInfo(name, date_time=(2025, 6, 28, 12, 0, 0))
    info.compress_type = compress
    z.writestr(info, data.encode() if isinstance(data, str) else data)


def make_epub(path: Path, chapter: str = CHAPTER, opf: str = OPF3, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        store(z, "mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        store(z, "META-INF/container.xml", CONTAINER)
        store(z, "OEBPS/content.opf", opf)
        store(z, "OEBPS/nav.xhtml", NAV)
        store(z, "OEBPS/text/chapter1.xhtml", chapter)
        for name in ("coffee.png", "astronaut.png", "chelsea.png"):
            store(z, f"OEBPS/images/{name}", (SAMPLES / name).read_bytes(), zipfile.ZIP_STORED)
        for name, data in (extra or {}).items():
            store(z, name, data)
    return path


DECORATIVE = ('<a:extLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
              '<a:ext uri="{C183D7F6-B498-43B3-948B-1728B52AA6E4}">'
              '<adec:decorative xmlns:adec="http://schemas.microsoft.com/office/drawing/2017/decorative" val="1"/>'
              "</a:ext></a:extLst>")


def make_docx(path: Path) -> Path:
    import docx
    from lxml import etree

    d = docx.Document()
    d.add_paragraph("A photo with no alt text, then one a person described.")
    d.add_picture(str(SAMPLES / "coffee.png"))
    d.add_picture(str(SAMPLES / "astronaut.png"))
    d.inline_shapes[1]._inline.docPr.set("descr", PERSON_ALT)
    d.add_picture(str(SAMPLES / "chelsea.png"))  # marked decorative, as Word marks it
    d.inline_shapes[2]._inline.docPr.append(etree.fromstring(DECORATIVE))
    d.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    p = pptx.Presentation()
    s1 = p.slides.add_slide(p.slide_layouts[6])
    s1.shapes.add_picture(str(SAMPLES / "coffee.png"), Inches(1), Inches(1), Inches(3))  # descr: its file name
    s2 = p.slides.add_slide(p.slide_layouts[6])
    pic = s2.shapes.add_picture(str(SAMPLES / "astronaut.png"), Inches(1), Inches(1), Inches(3))
    pic._element.nvPicPr.cNvPr.set("descr", PERSON_ALT)
    p.save(str(path))
    return path


ODF_MANIFEST = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="MIME"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="Pictures/coffee.png" manifest:media-type="image/png"/>
 <manifest:file-entry manifest:full-path="Pictures/astronaut.png" manifest:media-type="image/png"/>
</manifest:manifest>
"""
ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
          'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
          'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"')
FRAME = ('<draw:frame draw:name="{name}" text:anchor-type="as-char" svg:width="4cm" svg:height="3cm">'
         '<draw:image xlink:href="Pictures/{pic}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
         '{alt}</draw:frame>')
PERSON_DESC = f"<svg:desc>{PERSON_ALT}</svg:desc>"
ODT_CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS}><office:body><office:text>
<text:p>A photo: {FRAME.format(name="Photo", pic="coffee.png", alt="")}</text:p>
<text:p>A person's: {FRAME.format(name="Person", pic="astronaut.png", alt=PERSON_DESC)}</text:p>
</office:text></office:body></office:document-content>
"""
ODP_CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ODF_NS} xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0">
<office:body><office:presentation>
<draw:page draw:name="One">{FRAME.format(name="Photo", pic="coffee.png", alt="<svg:title>coffee.png</svg:title>")}
</draw:page>
<draw:page draw:name="Two">{FRAME.format(name="Person", pic="astronaut.png", alt=PERSON_DESC)}
</draw:page>
</office:presentation></office:body></office:document-content>
"""


def make_odf(path: Path, kind: str = "odt") -> Path:
    mime = f"application/vnd.oasis.opendocument.{'text' if kind == 'odt' else 'presentation'}"
    with zipfile.ZipFile(path, "w") as z:
        store(z, "mimetype", mime, zipfile.ZIP_STORED)
        store(z, "content.xml", ODT_CONTENT if kind == "odt" else ODP_CONTENT)
        for name in ("coffee.png", "astronaut.png"):
            store(z, f"Pictures/{name}", (SAMPLES / name).read_bytes(), zipfile.ZIP_STORED)
        store(z, "META-INF/manifest.xml", ODF_MANIFEST.replace("MIME", mime))
    return path


def raw_entries(path: Path) -> list[tuple[str, int, bytes]]:
    """Each entry in order: (name, compression method, its local header and compressed data as stored)."""
    raw = path.read_bytes()
    out = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            at = info.header_offset
            nlen, elen = struct.unpack_from("<2H", raw, at + 26)
            out.append((info.filename, info.compress_type, raw[at:at + 30 + nlen + elen + info.compress_size]))
    return out


def entry_text(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as z:
        return z.read(name)
