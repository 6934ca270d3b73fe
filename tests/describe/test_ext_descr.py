"""The extended description (``--ext-descr``, IPTC ExtDescrAccessibility): what the model said in
the alt text's honest words, the object tags with how likely each is, the text read, and plain
facts about the picture; written to the XMP sidecar and read back by exiftool and by CapDesk."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import SAMPLES, run_cli
from PIL import Image

from capdesk.describe.describer import DescribeOptions, Describer
from capdesk.describe.extdescr import extended_description
from capdesk.describe.pixelfacts import PictureFacts, picture_facts
from capdesk.folders.reading import describe_paths
from capdesk.imageio import load_image, original_size
from capdesk.sidecars.writer import read_alt_text, read_ext_descr
from capdesk.status import SaidAs

needs_exiftool = pytest.mark.skipif(shutil.which("exiftool") is None,
                                    reason="needs exiftool (Debian: libimage-exiftool-perl)")
FACTS = PictureFacts(451, 300, ("brown", "orange"))
GUESS = "A guess, for a picture unlike the model's training photos: "


def test_what_the_model_said_in_honest_words():
    tags = [("cat", 0.9496), ("laptop", 0.401)]
    assert extended_description("a cat on a rug", SaidAs.FACT, tags, None, FACTS) == (
        "A cat on a rug. Object tags: cat (95% likely), laptop (40% likely). "
        "A landscape picture, 451 by 300 pixels; main colours: brown and orange.")
    assert extended_description("a cat on a rug", SaidAs.PROBABLY, [], None, None) == "Probably a cat on a rug."
    # The alt text's guess says the subject and its place; the long description says the rest too, as a guess.
    assert extended_description("a dog is running through the grass", SaidAs.PROBABLY, [], None, None) == (
        "Probably a dog in the grass. Perhaps a dog is running through the grass.")
    assert extended_description("An airport with planes.", SaidAs.WITHHELD, [], None, None) == (
        GUESS + "an airport with planes.")
    no_caption = extended_description(None, SaidAs.NONE, [], "EXIT 12", PictureFacts(10, 30, ("white",)))
    assert no_caption == 'Text read in the picture: "EXIT 12" A portrait picture, 10 by 30 pixels; main colour: white.'


def test_plain_facts_from_the_pixels(tmp_path):
    img = Image.new("RGB", (300, 100), (220, 20, 20))
    img.paste((20, 40, 200), (200, 0, 300, 100))  # a third blue
    img.paste((20, 200, 20), (0, 0, 10, 100))  # a thin green strip: too little to be a main colour
    f = picture_facts(img)
    assert (f.width, f.height, f.orientation, f.colours) == (300, 100, "landscape", ("red", "blue"))
    assert picture_facts(Image.new("RGB", (64, 64), "white")).orientation == "square"
    # A JPEG turned by its EXIF orientation and decoded at a reduced scale still reports its real size.
    photo = Image.new("RGB", (800, 200), "grey")
    exif = photo.getexif()
    exif[0x0112] = 6  # rotate 90 degrees to show
    photo.save(tmp_path / "turned.jpg", exif=exif)
    small = load_image(tmp_path / "turned.jpg", draft_size=(100, 100))
    assert small.size[0] < 200 and original_size(small) == (200, 800)
    assert picture_facts(small, original_size(small)).sentence().startswith("A portrait picture, 200 by 800 pixels")


def _exiftool(xmp) -> dict:
    r = subprocess.run(["exiftool", "-j", "-XMP-iptcCore:ExtDescrAccessibility", "-XMP-iptcCore:AltTextAccessibility",
                        str(xmp)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)[0]


@needs_exiftool
@pytest.mark.slow  # 4 s measured on two busy cores
def test_ext_descr_is_written_to_xmp_and_reads_back(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    for n in ("chelsea.png", "rocket.jpg"):
        shutil.copy(SAMPLES / n, d / n)
    r = run_cli("batch", str(d), "-q", "--ext-descr", "--ocr", "never")
    assert r.returncode == 0, r.stderr
    describer = Describer(None, options=DescribeOptions(ocr="never"))
    expected = {x.path.rsplit("/", 1)[-1]: x for x in describe_paths(describer, [d / "chelsea.png", d / "rocket.jpg"])}
    sizes = {"chelsea.png": "451 by 300 pixels", "rocket.jpg": "640 by 427 pixels"}
    for name, described in expected.items():
        xmp = d / f"{name}.xmp"
        got = _exiftool(xmp)
        ext = got["ExtDescrAccessibility"]
        assert ext == read_ext_descr(xmp) == described.extended  # exiftool, CapDesk's reader, the describer
        assert got["AltTextAccessibility"] == read_alt_text(xmp) == described.description
        assert f"A landscape picture, {sizes[name]}; main colour" in ext
        cap = described.caption.text
        if described.said_as == SaidAs.WITHHELD:  # said only marked as a guess, never as fact
            assert ext.startswith(GUESS + cap[0].lower() + cap[1:].rstrip(".")), ext
        else:
            assert cap.rstrip(".").lower()[2:] in ext.lower()
        for tag, p in described.tags:
            assert f"{tag} ({round(p * 100)}% likely)" in ext
    assert any(x.tags for x in expected.values())  # the cat at least is tagged
    # Asked for nothing more, the sidecar holds the alt text alone.
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", plain / "chelsea.png")
    assert run_cli("batch", str(plain), "-q", "--ocr", "never").returncode == 0
    got = _exiftool(plain / "chelsea.png.xmp")
    assert "ExtDescrAccessibility" not in got and got["AltTextAccessibility"]


def test_the_windows_setting_writes_it_too(tmp_path, monkeypatch):
    """Settings → Longer description in XMP: the window's batch export (run here without Qt, through
    the session and its job) writes the same longer description as --ext-descr."""
    from capdesk.session.core import Session
    from capdesk.session.jobs import BatchJob
    from capdesk.session.settings import Settings
    from capdesk.session.tasks import ThreadRunner

    monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "settings.json"))
    d = tmp_path / "photos"
    d.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    runner = ThreadRunner()
    session = Session(Settings(ext_descr=True, sidecar_formats=["xmp"], ocr="never"), runner)
    job = BatchJob(session, session.writer, d)
    assert job.start()
    assert runner.pump(lambda: not job.running, 180)
    assert job.result.counts() == {"captioned": 1}, job.error
    ext = read_ext_descr(d / "chelsea.png.xmp")
    assert ext and "451 by 300 pixels" in ext and "cat (" in ext
    assert not (d / "chelsea.txt").exists()
