"""``--ocr auto``: the cheap test for text runs on every picture (``capdesk.describe.text_presence``), the
reader only where it found text, and a sign's words reach the alt text; with the real PP-OCR graphs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from capdesk.describe import ocr, text_presence
from capdesk.describe.describer import DescribeOptions, Describer
from capdesk.imageio import load_image

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")


def _photo() -> Image.Image:
    return load_image(SAMPLES / "chelsea.png").convert("RGB").resize((300, 200))


def _street_sign() -> Image.Image:
    """A photo-sized picture with a small sign in it, as a phone photo of a street shows one."""
    img = _photo()
    draw = ImageDraw.Draw(img)
    draw.rectangle((150, 20, 290, 70), fill="white", outline="black", width=2)
    draw.text((158, 30), "NO PARKING", fill="black", font_size=20)
    return img


def test_the_finder_sees_the_picture_at_its_own_scale_in_its_own_order():
    x = text_presence.finder_input(Image.new("RGB", (224, 150), (255, 0, 0)))
    # short side to SIDE (256), each side a multiple of 32; BGR at -1..1: pure red is (-1, -1, 1)
    assert x.shape == (1, 3, 256, 384)
    assert x[0, :, 5, 5].tolist() == pytest.approx([-1.0, -1.0, 1.0])


@needs_ocr
def test_a_sign_is_found_and_read_and_a_photo_without_text_is_not():
    assert text_presence.has_text(_street_sign()) is True
    assert "PARKING" in (ocr.read_if_found(_street_sign()) or "")
    assert text_presence.has_text(_photo()) is False
    assert ocr.read_if_found(_photo()) is None


def test_without_the_extra_nothing_is_looked_for(monkeypatch):
    monkeypatch.setattr(text_presence, "_graph_path", lambda: None)
    monkeypatch.setattr(text_presence, "_session", None)
    monkeypatch.setattr(text_presence, "_failed", False)
    assert not text_presence.available() and text_presence.has_text(_photo()) is None


@needs_ocr
def test_auto_puts_the_signs_words_in_the_alt_text_and_invents_none(tmp_path):
    describer = Describer(None, provider="cpu", beam=1, options=DescribeOptions(ocr="auto"))
    sign, plain = describer.describe_images([_street_sign(), _photo()], ["sign.png", "photo.png"])
    assert sign.text_status == "read" and 'Text: "NO PARKING"' in sign.description
    assert plain.text is None and plain.text_status == "none" and "Text:" not in plain.description
