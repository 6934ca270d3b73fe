"""What kind of picture it is: the shipped kind model through the real describer, and the policy's words."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from capdesk.describe import composer, picture_kind, policy
from capdesk.describe.detector import Detection
from capdesk.describe.evidence import Finalist, PictureEvidence
from capdesk.model.bundle import Bundle, BundleError, open_bundle
from capdesk.status import SaidAs

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
WORDS = ["the", "of", "picture", "alt", "text", "describe", "model", "screen", "reader", "folder", "window",
         "caption", "photo"]


def page_of_text() -> Image.Image:
    im = Image.new("RGB", (850, 1100), "white")
    draw = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=18)
    r = random.Random(1)
    for y in range(80, 1020, 28):
        draw.text((70, y), " ".join(r.choice(WORDS) for _ in range(11)), fill="black", font=font)
    return im


def clip_art_cat() -> Image.Image:
    """Flat colours and black outlines: how clip art is drawn."""
    im = Image.new("RGB", (400, 400), "white")
    draw = ImageDraw.Draw(im)
    draw.ellipse((80, 120, 320, 330), fill=(240, 170, 40), outline="black", width=4)
    draw.ellipse((130, 60, 230, 160), fill=(240, 170, 40), outline="black", width=4)
    draw.polygon([(140, 70), (160, 20), (180, 70)], fill=(240, 170, 40), outline="black")
    draw.ellipse((160, 95, 175, 110), fill="black")
    return im


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer
    d = Describer("everyday", options=DescribeOptions(ocr="never"))  # the kind needs no text read
    assert d.kinds is not None, "the everyday bundle ships a picture-kind model"
    return d


def test_a_page_of_text_is_said_to_be_one_and_never_captioned_as_a_scene(describer):
    x = describer.describe_images([page_of_text()], ["page"])[0]
    assert x.evidence.kind == "text"
    assert x.description == "A page of text."
    assert x.said_as is SaidAs.WITHHELD and x.review
    assert "page of text" in x.reason
    assert x.to_json()["evidence"]["kind"] == "text"
    assert x.caption.text not in x.description


def test_clip_art_is_called_a_drawing(describer):
    x = describer.describe_images([clip_art_cat()], ["cat"])[0]
    assert x.evidence.kind == "drawing"
    assert x.description.startswith("A drawing")


def test_photos_stay_photos(describer):
    from capdesk.imageio import load_image
    imgs = [load_image(SAMPLES / n) for n in ("astronaut.png", "chelsea.png", "coffee.png")]
    for x in describer.describe_images(imgs):
        assert x.evidence.kind == "photo", x.description
        assert not x.description.startswith(("A drawing", "A screenshot", "A diagram"))


def _ev(kind: str, detections: list[Detection], text: str | None = None) -> PictureEvidence:
    return PictureEvidence(finalists=[Finalist("A man is standing in front of a building.", 0.6, 0.95)],
                           detections=detections, detector=True, text=text, in_domain=True, has_trust=True,
                           model="everyday", size=(400, 300), kind=kind, kind_probability=0.95)


def test_a_screenshot_says_its_text_and_no_person_the_detector_saw_in_it():
    person = Detection("person", 0.97, (10.0, 10.0, 200.0, 290.0))
    d = policy.decide(_ev("screenshot", [person], text="File Edit View"))
    w = composer.alt_text(d)
    assert w.text == 'A screenshot. Text: "File Edit View"'
    assert "person" not in w.text and "man" not in w.text.lower().split()
    assert w.review and d.said_as is SaidAs.WITHHELD


def test_a_drawing_says_what_it_shows_when_the_detector_is_sure():
    cat = Detection("cat", 0.97, (10.0, 10.0, 300.0, 290.0))
    w = composer.alt_text(policy.decide(_ev("drawing", [cat])))
    assert w.text == "A drawing of a cat."


def test_surely_not_a_photo_withholds_the_scene_caption_without_naming_a_kind():
    d = policy.decide(_ev(picture_kind.OTHER, [], text="Sales by quarter"))
    w = composer.alt_text(d)
    assert w.text == 'Text: "Sales by quarter"'
    assert d.said_as is SaidAs.WITHHELD and "not a photo" in d.reason


def test_a_photo_is_still_captioned():
    person = Detection("person", 0.97, (10.0, 10.0, 200.0, 290.0))
    d = policy.decide(_ev("photo", [person]))
    assert d.said_as is SaidAs.FACT and d.caption and not d.kind


def test_a_tampered_kind_model_is_refused_by_its_hash(tmp_path, default_bundle):
    b = tmp_path / "everyday"
    shutil.copytree(default_bundle, b)
    (b / "kind.npz").write_bytes(b"\0" * 100)
    with pytest.raises(BundleError, match="kind.npz"):
        picture_kind.from_bundle(open_bundle(b))


def test_a_kind_model_for_another_encoder_is_not_used(default_bundle):
    bundle = open_bundle(default_bundle)
    m = json.loads(json.dumps(bundle.manifest))
    m["picture_kind"]["features_sha256"] = "0" * 64
    assert picture_kind.from_bundle(Bundle(bundle.path, m)) is None
    assert picture_kind.from_bundle(bundle) is not None


def test_a_landscape_with_nothing_else_to_say_gets_its_setting_as_may_contain():
    ev = PictureEvidence(finalists=[Finalist("A man is running through a grassy field.", 0.3, 0.05)],
                         concepts={"grass": 0.73, "field": 0.71, "person": 0.9, "sky": 0.9, "road": 0.8},
                         detector=True, in_domain=False, has_trust=True, model="everyday", size=(400, 300))
    w = composer.alt_text(policy.decide(ev))
    assert w.text == "May contain: grass, a field."
    assert w.review
    ev.kind = "drawing"
    assert "grass" not in composer.alt_text(policy.decide(ev)).text
    ev.kind, ev.overhead = "photo", True
    assert composer.alt_text(policy.decide(ev)).text == ""
