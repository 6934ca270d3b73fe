"""The text gate (``capdesk.describe.text_gate``): under ``--ocr auto`` the text finder looks only at photos
whose encoder features say text is possible, and at every picture that is not a photo; with the shipped
everyday bundle and the real PP-OCR graphs."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from capdesk.describe import ocr, text_gate, text_presence
from capdesk.describe.describer import DescribeOptions, Describer
from capdesk.imageio import load_image
from capdesk.model.bundle import Bundle, BundleError, open_bundle

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")


def _photo() -> Image.Image:
    return load_image(SAMPLES / "chelsea.png").convert("RGB").resize((300, 200))


def _shop_sign() -> Image.Image:
    """A photo whose point is its sign: big dark letters on a light board, filling the picture's middle."""
    img = _photo()
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, 50, 280, 150), fill="white", outline="black", width=3)
    draw.text((34, 72), "BAKERY", fill="black", font_size=48)
    return img


def _page() -> Image.Image:
    return load_image(SAMPLES / "page.png").convert("RGB")


@pytest.fixture(scope="module")
def describer() -> Describer:
    d = Describer("everyday", options=DescribeOptions(ocr="auto"))
    assert d.text_gate is not None, "the everyday bundle ships a text gate"
    return d


@pytest.fixture
def finder_calls(monkeypatch) -> list[int]:
    """How many times the real text finder ran (it still runs: this only counts)."""
    calls: list[int] = []
    real = text_presence.text_pixels

    def counted(img, side=text_presence.SIDE):
        calls.append(1)
        return real(img, side)

    monkeypatch.setattr(text_presence, "text_pixels", counted)
    return calls


def test_the_shipped_gate_was_fitted_on_the_everyday_encoder_and_says_what_it_costs(default_bundle):
    bundle = open_bundle(default_bundle)
    spec = bundle.manifest["text_gate"]
    assert spec["features_sha256"] == bundle.features_key
    assert 0.0 < spec["threshold"] < 1.0
    val = spec["fitted"]["val"]
    # fitted to lose at most 2% of the val photos whose text is said
    assert val["text_said_lost"] <= 0.02 * val["text_said"] + 1
    assert val["finder_skipped_share"] > 0.3


@needs_ocr
def test_a_photo_without_text_is_not_looked_at_and_a_sign_still_is(describer, finder_calls):
    plain = describer.describe_images([_photo()], ["photo.png"])[0]
    assert plain.text is None and plain.text_status == "none" and not finder_calls
    sign = describer.describe_images([_shop_sign()], ["sign.png"])[0]
    assert finder_calls and sign.text_status == "read" and "BAKERY" in (sign.text or "")


@needs_ocr
def test_a_picture_that_is_not_a_photo_is_always_looked_at(describer, finder_calls, monkeypatch):
    shut = replace(describer.text_gate, threshold=1.01)  # a gate that lets no photo through
    monkeypatch.setattr(describer, "text_gate", shut)
    page = describer.describe_images([_page()], ["page.png"])[0]
    assert page.evidence.kind != "photo" and finder_calls and page.text_status == "read"
    finder_calls.clear()
    photo = describer.describe_images([_photo()], ["photo.png"])[0]
    assert photo.evidence.kind == "photo" and not finder_calls and photo.text_status == "none"


@needs_ocr
def test_ocr_always_reads_whatever_the_gate_says(finder_calls):
    d = Describer("everyday", options=DescribeOptions(ocr="always"))
    d.text_gate = replace(d.text_gate, threshold=1.01)
    assert d.may_hold_text(d.primary.encode_named(d.primary.preprocess.to_array(_photo())[None])["features"],
                           [("photo", 0.99)]) == [True]


def test_a_tampered_gate_is_refused_by_its_hash_and_the_describer_goes_on_without_it(tmp_path, default_bundle):
    b = tmp_path / "everyday"
    shutil.copytree(default_bundle, b)
    (b / "text_gate.npz").write_bytes(b"\0" * 100)
    with pytest.raises(BundleError, match="text_gate.npz"):
        text_gate.from_bundle(open_bundle(b))
    d = Describer(str(b), options=DescribeOptions(ocr="auto"), others=[])
    assert d.text_gate is None and any("text_gate.npz" in p for p in d.problems)
    assert d.may_hold_text(d.primary.encode_named(d.primary.preprocess.to_array(_photo())[None])["features"],
                           [("photo", 0.99)]) == [True]


def test_a_gate_for_another_encoder_is_not_used(default_bundle):
    bundle = open_bundle(default_bundle)
    m = json.loads(json.dumps(bundle.manifest))
    m["text_gate"]["features_sha256"] = "0" * 64
    assert text_gate.from_bundle(Bundle(bundle.path, m)) is None
    assert text_gate.from_bundle(bundle) is not None
