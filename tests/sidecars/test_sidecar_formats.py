"""Sidecar formats are named kinds in one registry: a new one is one module and one ``register`` line,
and the shipped ones say exactly what the command line, the settings and the dialogs always said."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES

from capdesk import limits
from capdesk.session.settings import Settings, validate
from capdesk.sidecars import formats
from capdesk.sidecars.formats import Request, SidecarFormat
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter
from capdesk.status import Ownership, WriteStatus


# -- the module a new format would be: photo.jpg.alt.json ------------------------------------------
class AltJsonSidecar(SidecarFormat):
    name = "altjson"
    extension = "alt.json"
    label = "&JSON sidecars"
    detail = ".alt.json"
    action = "Write JSON sidecars"

    def render(self, req: Request, existing: str | None) -> bytes:
        return json.dumps({"alt": req.alt.text, "lang": req.lang}).encode("utf-8")

    def read(self, path: Path) -> str | None:
        return json.loads(Path(path).read_text(encoding="utf-8")).get("alt")


@pytest.fixture
def alt_json():
    fmt = formats.register(AltJsonSidecar())  # the one registry line
    try:
        yield fmt
    finally:
        formats.unregister(fmt.name)
    assert "altjson" not in formats.names()


@pytest.fixture
def image(tmp_path):
    p = tmp_path / "photo.png"
    shutil.copy(SAMPLES / "chelsea.png", p)
    return p


def test_a_new_format_is_written_and_read_back_through_the_real_writer(alt_json, image, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    writer = SidecarWriter(SidecarOptions(formats=("txt", "altjson"), lang="de"), ledger)
    out = writer.write(image, AltText("A tabby cat on a rug."))
    assert [(o.path.name, o.action) for o in out] == [("photo.txt", WriteStatus.WRITTEN),
                                                      ("photo.png.alt.json", WriteStatus.WRITTEN)]
    sidecar = tmp_path / "photo.png.alt.json"
    assert json.loads(sidecar.read_text(encoding="utf-8")) == {"alt": "A tabby cat on a rug.", "lang": "de"}
    # Read back: the alt text from the file, whose words they are from the ledger.
    assert formats.for_file(sidecar) is alt_json
    assert formats.read_back(sidecar) == "A tabby cat on a rug."
    assert writer.ownership(sidecar) is Ownership.OURS
    assert writer.is_current(image)
    assert [o.action for o in writer.write(image, AltText("A tabby cat on a rug."))] == [WriteStatus.UNCHANGED] * 2

    # It is a whole-file format: a person's edit is theirs, kept unless overwriting is asked for.
    sidecar.write_text('{"alt": "Mimi asleep"}', encoding="utf-8")
    again = writer.write(image, AltText("Another caption."))
    assert again[1].action is WriteStatus.KEPT
    assert formats.read_back(sidecar) == "Mimi asleep"

    # Its naming can be chosen like any other's.
    stem = SidecarWriter(SidecarOptions(formats=("altjson",), namings={"altjson": "stem"}), ledger)
    assert stem.paths(image) == {"altjson": tmp_path / "photo.alt.json"}


def test_a_new_format_is_offered_wherever_formats_are_chosen(alt_json):
    assert SidecarOptions.parse("txt, altjson").formats == ("txt", "altjson")
    assert validate({"sidecar_formats": ["altjson"]}) == ({"sidecar_formats": ["altjson"]}, [])
    # Not written unless chosen: the defaults stay as they were.
    assert SidecarOptions().formats == ("txt", "xmp") == formats.defaults()
    assert Settings().sidecar_formats == ["txt", "xmp"]


def test_a_format_must_have_a_name_of_its_own():
    with pytest.raises(ValueError):
        formats.register(formats.get("txt"))


def test_unknown_formats_and_namings_are_refused_as_before():
    with pytest.raises(ValueError, match=r"unknown sidecar format 'exe' \(choose txt, xmp\)"):
        SidecarOptions(formats=("exe",))
    with pytest.raises(ValueError, match=r"unknown sidecar naming 'x' \(choose ext, stem\)"):
        SidecarOptions(xmp_name="x")
    assert validate({"sidecar_formats": ["exe"]})[1] == [
        "'sidecar_formats' holds an unknown format 'exe' (choose txt, xmp)"]


def test_the_shipped_formats_say_what_was_always_said():
    assert formats.names() == limits.SIDECAR_FORMATS == ("txt", "xmp")
    assert formats.NAMINGS == limits.SIDECAR_NAMINGS
    txt, xmp = formats.get("txt"), formats.get("xmp")
    assert txt.naming_help() == "stem: photo.txt (default), ext: photo.jpg.txt"
    assert xmp.naming_help() == "ext: photo.jpg.xmp (default; cannot collide), stem: photo.xmp (Lightroom style)"
    assert [(n, ex) for n, ex, _ in xmp.naming_choices()] == [("ext", "photo.jpg.xmp"), ("stem", "photo.xmp")]
    assert (txt.label, txt.detail, txt.action) == ("&Text sidecars", ".txt", "Write text sidecars")
    assert (xmp.label, xmp.detail, xmp.action) == ("&XMP sidecars", "IPTC alt text", "Write XMP sidecars")
    # The settings' fields for the namings start where the formats do.
    s, o = Settings(), SidecarOptions()
    assert (s.txt_name, s.xmp_name, o.txt_name, o.xmp_name) == (txt.default_naming, xmp.default_naming) * 2
    assert formats.FALLBACK in formats.names()
    assert formats.for_file(Path("a/photo.jpg.xmp")) is xmp and formats.for_file(Path("photo.txt")) is txt
