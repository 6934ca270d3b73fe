from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import SAMPLES

from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import (
    AltText,
    SidecarOptions,
    SidecarWriter,
    atomic_write,
    read_alt_text,
    render_xmp,
    sidecar_path,
)

needs_exiftool = pytest.mark.skipif(
    shutil.which("exiftool") is None, reason="needs exiftool (Debian: libimage-exiftool-perl)"
)

DARKTABLE_XMP = """<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:darktable="http://darktable.sf.net/"
   xmp:Rating="4"
   darktable:xmp_version="5">
   <dc:subject>
    <rdf:Bag>
     <rdf:li>holiday</rdf:li>
     <rdf:li>cat</rdf:li>
    </rdf:Bag>
   </dc:subject>
   <dc:creator><rdf:Seq><rdf:li>Ana Souza</rdf:li></rdf:Seq></dc:creator>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>
"""


@pytest.fixture
def image(tmp_path):
    p = tmp_path / "photo.png"
    shutil.copy(SAMPLES / "chelsea.png", p)
    return p


@pytest.fixture
def writer(tmp_path):
    return SidecarWriter(SidecarOptions(lang="en"), Ledger(tmp_path / "ledger.sqlite"))


def test_naming_styles(image):
    assert sidecar_path(image, "xmp", "ext").name == "photo.png.xmp"
    assert sidecar_path(image, "xmp", "stem").name == "photo.xmp"
    assert sidecar_path(image, "txt", "stem").name == "photo.txt"
    assert sidecar_path(image, "txt", "ext").name == "photo.png.txt"
    assert SidecarOptions().xmp_name == "ext"  # the default cannot collide
    with pytest.raises(ValueError):
        SidecarOptions(formats=("docx",))


def test_writes_txt_and_xmp(image, writer):
    before = image.read_bytes()
    out = writer.write(image, AltText("A tabby cat on a rug.", model="everyday", confidence=0.8))
    assert [o.action for o in out] == ["written", "written"]
    assert (image.parent / "photo.txt").read_text(encoding="utf-8") == "A tabby cat on a rug.\n"
    assert read_alt_text(image.parent / "photo.png.xmp") == "A tabby cat on a rug."
    assert image.read_bytes() == before
    assert writer.status(image) == "generated"


def test_rewrite_of_own_unedited_sidecar_is_allowed_but_edits_survive(image, writer):
    writer.write(image, AltText("first"))
    assert [o.action for o in writer.write(image, AltText("second"))] == ["written", "written"]
    txt = image.parent / "photo.txt"
    txt.write_text("My own words about Chelsea.\n", encoding="utf-8")  # a person edits it
    out = writer.write(image, AltText("third"))
    assert out[0].action == "kept" and "--overwrite" in out[0].reason
    assert txt.read_text(encoding="utf-8") == "My own words about Chelsea.\n"
    assert writer.status(image) == "edited"
    forced = writer.write(image, AltText("third"), force=True)
    assert forced[0].action == "written" and txt.read_text() == "third\n"


def test_foreign_sidecar_never_overwritten(image, writer):
    (image.parent / "photo.txt").write_text("written by hand\n")
    assert writer.write(image, AltText("machine words"))[0].action == "kept"
    assert (image.parent / "photo.txt").read_text() == "written by hand\n"


def test_existing_xmp_keeps_its_properties(image, writer):
    xmp = image.parent / "photo.png.xmp"
    xmp.write_text(DARKTABLE_XMP, encoding="utf-8")
    out = writer.write(image, AltText("A tabby cat.", confidence=0.7))
    assert out[1].action == "written"
    text = xmp.read_text(encoding="utf-8")
    for kept in ("holiday", "Ana Souza", 'xmp:Rating="4"', 'darktable:xmp_version="5"', "xmlns:darktable"):
        assert kept in text, kept
    assert read_alt_text(xmp) == "A tabby cat."


def test_other_tool_alt_text_is_kept_but_its_other_edits_do_not_block_us(image, writer):
    xmp = image.parent / "photo.png.xmp"
    writer.write(image, AltText("ours"))
    # another tool adds a rating: our alt text is still ours, so an update is allowed
    xmp.write_text(xmp.read_text().replace('rdf:about=""', 'rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" '
                                                          'xmp:Rating="5"'))
    assert writer.write(image, AltText("ours, updated"))[1].action == "written"
    assert 'xmp:Rating="5"' in xmp.read_text()
    # a person replaces the alt text in another program: that must survive
    xmp.write_text(render_xmp(xmp.read_text(), AltText("a person's description", source="human")))
    assert writer.write(image, AltText("machine again"))[1].action == "kept"
    assert read_alt_text(xmp) == "a person's description"


def test_lang_alt_and_options(image, tmp_path):
    w = SidecarWriter(SidecarOptions(formats=("xmp",), lang="de", ext_descr=True, mirror_dc=True, xmp_name="stem"),
                      Ledger(tmp_path / "l.sqlite"))
    w.write(image, AltText("Eine getigerte Katze.", extended="Eine Katze liegt auf einem Teppich und schaut auf."))
    text = (image.parent / "photo.xmp").read_text(encoding="utf-8")
    assert 'xml:lang="x-default"' in text and 'xml:lang="de"' in text
    assert "ExtDescrAccessibility" in text and "dc:description" in text
    assert not (image.parent / "photo.txt").exists()


def test_atomic_write_leaves_no_temp_files(tmp_path):
    p = tmp_path / "a.txt"
    atomic_write(p, b"one")
    atomic_write(p, b"two")
    assert p.read_bytes() == b"two"
    assert [x.name for x in tmp_path.iterdir()] == ["a.txt"]


@needs_exiftool
def test_exiftool_reads_what_we_write(image, writer):
    xmp = image.parent / "photo.png.xmp"
    xmp.write_text(DARKTABLE_XMP, encoding="utf-8")
    writer.write(image, AltText("Ein Kätzchen — «tabby» & co.", confidence=0.5))
    r = subprocess.run(["exiftool", "-j", "-XMP-iptcCore:AltTextAccessibility", "-XMP-dc:Subject",
                        "-XMP-xmp:Rating", "-XMP-dc:Creator", str(xmp)], capture_output=True, text=True, check=True)
    got = json.loads(r.stdout)[0]
    assert got["AltTextAccessibility"] == "Ein Kätzchen — «tabby» & co."
    assert got["Subject"] == ["holiday", "cat"] and got["Rating"] == 4 and got["Creator"] == "Ana Souza"


@needs_exiftool
def test_embed_keeps_original_bytes(image, writer):
    from capdesk.sidecars.writer import embed_in_image

    original = image.read_bytes()
    writer.write(image, AltText("A cat."))
    backup = embed_in_image(image, image.parent / "photo.png.xmp")
    assert backup.read_bytes() == original
    r = subprocess.run(["exiftool", "-s3", "-XMP-iptcCore:AltTextAccessibility", str(image)],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "A cat."


@needs_exiftool
@pytest.mark.slow  # 6 s measured on two busy cores
def test_batch_embed_only_when_asked(tmp_path):
    from conftest import run_cli

    d = tmp_path / "emb"
    d.mkdir()
    shutil.copy(SAMPLES / "rocket.jpg", d / "rocket.jpg")
    original = (d / "rocket.jpg").read_bytes()
    assert run_cli("batch", str(d), "-q").returncode == 0
    assert (d / "rocket.jpg").read_bytes() == original and not (d / "rocket.jpg_original").exists()
    (d / "rocket.txt").unlink()
    (d / "rocket.jpg.xmp").unlink()
    assert run_cli("batch", str(d), "-q", "--embed").returncode == 0
    assert (d / "rocket.jpg_original").read_bytes() == original
    r = subprocess.run(["exiftool", "-s3", "-XMP-iptcCore:AltTextAccessibility", str(d / "rocket.jpg")],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == (d / "rocket.txt").read_text(encoding="utf-8").strip()
    assert run_cli("batch", str(d), "--embed", "--sidecar", "txt").returncode == 2
