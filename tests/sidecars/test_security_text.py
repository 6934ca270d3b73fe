"""Issue 34, item 4: control characters in alt text (a label, OCR, a paste from a PDF) never make an
XMP sidecar not well-formed nor reach the terminal; a damaged XMP sidecar is kept aside and written
anew instead of failing on every later run."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from capdesk.model.bundle import BundleError, open_bundle
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter, read_alt_text, render_xmp
from capdesk.status import WriteStatus

PASTED = "A cat\x1b[31m on a rug\x00\x0c\x08 \x9b2J\ufffe(from a PDF)\x7f"
CLEAN = "A cat[31m on a rug 2J(from a PDF)"
NOT_TEXT = [chr(c) for c in [*range(0, 9), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), 0xFFFE, 0xFFFF]]


@pytest.fixture
def image(tmp_path) -> Path:
    p = tmp_path / "photo.png"
    shutil.copy(SAMPLES / "chelsea.png", p)
    return p


@pytest.fixture
def writer(tmp_path) -> SidecarWriter:
    return SidecarWriter(SidecarOptions(lang="en", ext_descr=True), Ledger(tmp_path / "ledger.sqlite"))


def test_control_characters_never_reach_a_sidecar(image, writer):
    alt = AltText(PASTED, source="human", model="m\x1bx", extended="Longer\x1b]0;title\x07 text\nsecond line")
    outcomes = writer.write(image, alt)
    assert [o.action for o in outcomes] == [WriteStatus.WRITTEN, WriteStatus.WRITTEN]
    txt, xmp = image.with_suffix(".txt"), image.with_name("photo.png.xmp")
    for p in (txt, xmp):
        data = p.read_text(encoding="utf-8")
        assert not any(c in data for c in NOT_TEXT), p
    assert txt.read_text(encoding="utf-8") == CLEAN + "\n"
    ET.fromstring(xmp.read_text(encoding="utf-8").split("?>", 1)[1].rsplit("<?xpacket", 1)[0])  # well-formed
    assert read_alt_text(xmp) == CLEAN
    # What the ledger remembers is what was written: the next run sees CapDesk's own words.
    assert [o.action for o in writer.write(image, alt)] == [WriteStatus.UNCHANGED, WriteStatus.UNCHANGED]


def test_render_xmp_cleans_every_field_itself():
    out = render_xmp(None, AltText("a\x1bb", model="\x00m", extended="e\x0bx"), ext_descr=True)
    assert not any(c in out for c in NOT_TEXT)
    assert "ab" in out and "ex" in out


@pytest.mark.parametrize("damage", [
    # what an older CapDesk wrote for text holding ESC: the XML no longer parses
    render_xmp(None, AltText("ok")).replace("ok", "a\x1b[2Jcat").encode("utf-8"),
    b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF',
    "<x:xmpmeta xmlns:x='adobe:ns:meta/'>caf\u00e9</x:xmpmeta>".encode("latin-1"),  # not UTF-8
], ids=["esc-written-by-an-older-capdesk", "cut-short", "not-utf8"])
def test_damaged_xmp_is_kept_aside_and_written_anew_once(image, writer, damage):
    xmp = image.with_name("photo.png.xmp")
    xmp.write_bytes(damage)
    xmp.chmod(0o640)
    out = {o.path.suffix: o for o in writer.write(image, AltText("A tabby cat."))}
    assert out[".xmp"].action is WriteStatus.WRITTEN, out[".xmp"].reason
    assert "damaged" in out[".xmp"].note and "\n" not in out[".xmp"].note
    kept = sorted(image.parent.glob("photo.png.xmp.damaged-*"))
    assert len(kept) == 1 and kept[0].name in out[".xmp"].note
    assert kept[0].read_bytes() == damage  # nothing the user had is lost
    assert kept[0].stat().st_mode & 0o777 == 0o640
    assert read_alt_text(xmp) == "A tabby cat."
    # The next run finds a sound sidecar: no failure, no second copy.
    again = {o.path.suffix: o for o in writer.write(image, AltText("A tabby cat."))}
    assert again[".xmp"].action is WriteStatus.UNCHANGED
    assert len(list(image.parent.glob("photo.png.xmp.damaged-*"))) == 1


@pytest.mark.slow  # 2 s measured on two busy cores
def test_batch_over_a_damaged_sidecar_that_capdesk_wrote_goes_on(tmp_path):
    """The issue's case: a sidecar an older CapDesk wrote with a raw ESC in it, and the picture
    changed since; every later batch failed on it with ParseError."""
    import hashlib
    import os

    folder = tmp_path / "pics"
    folder.mkdir()
    for name in ("chelsea.png", "coffee.png"):
        shutil.copy(SAMPLES / name, folder / name)
    pic, xmp = folder / "chelsea.png", folder / "chelsea.png.xmp"
    damaged = render_xmp(None, AltText("ok")).replace("ok", "A cat\x1b[0m.").encode("utf-8")
    xmp.write_bytes(damaged)
    st = pic.stat()
    Ledger.default().put(xmp, hashlib.sha256(damaged).hexdigest(), f"{st.st_size}:{st.st_mtime_ns}", pic,
                         AltText("A cat\x1b[0m."))
    os.utime(pic, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the picture changed: describe it again
    for _ in range(2):  # the second run must not fail on what the first left
        r = run_cli("batch", "--sidecar", "xmp", "--beam", "1", "--ocr", "never", str(folder))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "ParseError" not in r.stdout + r.stderr and "\x1b" not in r.stdout + r.stderr
    assert read_alt_text(xmp) and "\x1b" not in xmp.read_text(encoding="utf-8")
    kept = list(folder.glob("chelsea.png.xmp.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == damaged


# -- a model's words are where captions come from: no control characters in them --------------------
def _bundle_with(default_bundle: Path, dest: Path, edit) -> Path:
    import hashlib

    shutil.copytree(default_bundle, dest)
    m = json.loads((dest / "manifest.json").read_text())
    for fn, data in edit(dest).items():
        (dest / fn).write_bytes(data)
        m["files"][fn] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


@pytest.mark.parametrize("fn", ["vocab.json", "labels.json"])
def test_model_words_with_control_characters_are_refused(tmp_path, default_bundle, fn):
    def edit(d: Path) -> dict[str, bytes]:
        data = json.loads((d / fn).read_text())
        words = data["itos"] if isinstance(data, dict) else data
        words[7] = "cat\x1b[2J"
        return {fn: json.dumps(data).encode()}

    b = open_bundle(_bundle_with(default_bundle, tmp_path / "b", edit))
    problems = b.verify()
    assert len(problems) == 1 and fn in problems[0] and "control" in problems[0] and "\x1b" not in problems[0]
    with pytest.raises(BundleError, match="control"):
        b.vocab() if fn == "vocab.json" else b.labels()
