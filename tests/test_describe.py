"""Honest descriptions: the gate, routing, tags, text, and the composed description."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLES, SHARED_DATA, needs_shared_data, run_cli
from PIL import Image, ImageDraw

from capdesk import ocr, tags
from capdesk.alttext import clean_caption
from capdesk.describe import DescribeOptions, Describer, compose

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")


@pytest.fixture(scope="module")
def describer():
    return Describer(None, provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.fixture(scope="module")
def aerial_only():
    return Describer("aerial", provider="cpu", options=DescribeOptions(ocr="never"))


# -- composition ---------------------------------------------------------------------------
def test_compose_in_domain_and_sure():
    d = compose("A cat on a sofa.", 0.8, True, [("tabby cat", 0.9)], None, DescribeOptions())
    assert d == "A cat on a sofa."


def test_compose_unsure_is_said_as_such():
    d = compose("A cat on a sofa.", 0.1, True, [], None, DescribeOptions())
    assert d.startswith("Probably a cat on a sofa")


def test_compose_out_of_domain_withholds_caption():
    d = compose("An airport with many planes.", 0.9, False, [("tabby cat", 0.8)], None, DescribeOptions(),
                "aerial photos")
    assert d == "May contain: a tabby cat."  # about the picture only: no word about the model
    g = compose("An airport with many planes.", 0.9, False, [], None, DescribeOptions(show_guess=True))
    assert "Guess: An airport with many planes." in g


def test_compose_text_and_alt_text_practice():
    d = compose("A picture of a page of text", 0.9, True, [], "Chapter One", DescribeOptions())
    assert d == 'A page of text. Text: "Chapter One"'
    assert clean_caption("an image of  a dog running.") == "A dog running."
    assert len(clean_caption("word " * 100)) <= 152


def test_tags_threshold_and_plain_form():
    labels = ["tabby cat", "espresso", "laptop", "ox"]
    logits = np.log(np.array([0.6, 0.05, 0.3, 0.05]))
    got = tags.top_tags(logits, labels, threshold=0.2)
    assert [n for n, _ in got] == ["tabby cat", "laptop"]
    assert tags.plain(got) == "May contain: a tabby cat, a laptop."
    assert tags.plain([("ox", 0.9)]) == "May contain: an ox."
    assert tags.top_tags(logits, labels, threshold=0.7) == []


# -- the real models -----------------------------------------------------------------------
def test_everyday_photos_go_to_everyday(describer):
    for name in ("chelsea.png", "coffee.png", "astronaut.png"):
        d = next(describer.describe_paths([SAMPLES / name]))
        assert d.model == "everyday", (name, d.domain_score)
        if d.in_domain:
            assert d.caption.text.split()[1].lower() in d.description.lower()
        else:  # unlike the training photos: the caption is withheld, the tags are said
            assert d.caption.text not in d.description and "model" not in d.description
            assert d.review and "unlike" in d.reason


@needs_shared_data("everyday")
def test_in_domain_photos_get_their_caption(describer):
    ds = json.loads((SHARED_DATA / "everyday" / "dataset_everyday.json").read_text())
    files = [SHARED_DATA / "everyday" / "images" / im["filename"] for im in ds["images"] if im["split"] == "test"][:40]
    got = list(describer.describe_paths(files, beam=1))
    assert sum(bool(d.in_domain) for d in got) >= 0.9 * len(got)
    for d in got:
        if d.in_domain and d.certain:
            assert d.description == clean_caption(d.caption.text)


def test_cat_gets_a_cat_tag(describer):
    d = next(describer.describe_paths([SAMPLES / "chelsea.png"]))
    assert any("cat" in n for n, _ in d.tags)


def test_aerial_model_does_not_describe_a_cat_as_a_scene(aerial_only):
    d = next(aerial_only.describe_paths([SAMPLES / "chelsea.png"]))
    assert d.model == "aerial" and d.in_domain is False
    assert d.caption.text.lower().rstrip(".") not in d.description.lower()
    assert "cat" in d.description  # what the tags say


def test_blank_and_noise_are_out_of_every_domain(describer, tmp_path):
    rng = np.random.default_rng(0)
    Image.new("RGB", (300, 200), "white").save(tmp_path / "white.png")
    Image.new("RGB", (300, 200), (20, 20, 20)).save(tmp_path / "dark.png")
    Image.fromarray(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)).save(tmp_path / "noise.png")
    img = Image.new("RGB", (800, 500), "white")
    draw = ImageDraw.Draw(img)
    for i in range(14):
        draw.text((20, 20 + 32 * i), "Quarterly report: revenue rose 4% while costs fell.", fill="black",
                  font_size=22)
    img.save(tmp_path / "text.png")
    for d in describer.describe_paths(sorted(tmp_path.glob("*.png"))):
        assert d.in_domain is False, (d.path, d.model, d.domain_score)
        assert d.review and d.said_as == "withheld" and "unlike" in d.reason


@needs_shared_data("rsicd")
def test_routing_rates_on_test_splits(describer):
    """Everyday photos go to the everyday model and aerial photos to the aerial one, 95% or more."""
    eng = describer.primary
    for data, want in (("rsicd", "aerial"), ("everyday", "everyday")):
        ds = json.loads((SHARED_DATA / data / f"dataset_{data}.json").read_text())
        files = [SHARED_DATA / data / "images" / im["filename"] for im in ds["images"] if im["split"] == "test"]
        routes = []
        for i in range(0, len(files), 64):
            feats, _ = eng.encode(np.stack([eng.preprocess.load(f)[1] for f in files[i:i + 64]]))
            routes.extend(describer._route(feats))
        rate = sum(r[0] == want for r in routes) / len(routes)
        assert rate >= 0.95, (data, rate)


@needs_ocr
def test_text_is_read_in_a_page_scan():
    d = next(Describer(None, provider="cpu").describe_paths([SAMPLES / "page.png"]))
    assert d.text and "segmentation" in d.text.lower()
    assert "Text: " in d.description


def test_json_carries_every_part():
    r = run_cli("caption", "--json", "--ocr", "never", str(SAMPLES / "chelsea.png"))
    rec = json.loads(r.stdout)
    for key in ("caption", "confidence", "in_domain", "domain_score", "tags", "text", "description", "model",
                "provider", "error", "path"):
        assert key in rec, key
    assert isinstance(rec["tags"], list) and all({"label", "probability"} <= set(t) for t in rec["tags"])
