"""What was found in a picture, part by part, with where each is and how big (capdesk.describe.found): the
words for places and sizes, blocks of text, and the list the real describer gives for real pictures, in
``--json`` and in the long description."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, run_cli
from PIL import Image, ImageDraw, ImageFont

from capdesk.describe import ocr
from capdesk.describe.describer import DescribeOptions, Describer
from capdesk.describe.detector import Detection
from capdesk.describe.found import Part, parts_found, size_words, text_blocks, where_things_are, where_words

SIZE = (600, 400)


@pytest.mark.parametrize("box, where", [
    ((0, 0, 150, 100), "top left"), ((450, 300, 600, 400), "bottom right"), ((250, 0, 350, 90), "top"),
    ((0, 20, 200, 390), "left half"), ((0, 150, 150, 250), "left side"), ((250, 150, 350, 250), "middle"),
    ((10, 10, 590, 390), "whole picture"),
])
def test_where_a_box_lies_in_words(box, where):
    assert where_words(box, SIZE) == where


@pytest.mark.parametrize("box, size", [
    ((0, 0, 120, 380), "tall"), ((0, 0, 560, 100), "wide"), ((0, 0, 450, 300), "large"),
    ((0, 0, 250, 150), "medium"), ((0, 0, 60, 40), "small"),
])
def test_how_big_a_box_is_in_words(box, size):
    assert size_words(box, SIZE) == size


def test_objects_are_said_left_to_right_with_how_sure_and_unsure_ones_are_left_out():
    found = parts_found(SIZE, None, [Detection("dog", 0.6, (450, 300, 590, 390)),
                                     Detection("person", 0.95, (10, 20, 200, 390)),
                                     Detection("kite", 0.35, (250, 0, 330, 60))], [])
    assert [p.said() for p in found] == ["Person, left half, tall.", "Probably a dog, bottom right, small."]
    assert where_things_are(found) == ("Where things are: person, left half, tall; probably a dog, bottom right, "
                                       "small.")


def test_the_kind_comes_first_and_drawn_objects_of_a_screenshot_are_no_things():
    found = parts_found(SIZE, "a screenshot", [Detection("person", 0.95, (10, 20, 200, 390))],
                        [("File Edit View", (0, 0, 200, 20))], objects_mean_things=False)
    assert [p.said() for p in found] == ["The kind of picture: a screenshot.", "Text, top left: 'File Edit View'."]


def test_lines_of_one_paragraph_are_one_block_and_a_separate_sign_is_another():
    lines = [("NO PARKING", (100, 10, 500, 60)), ("Tow-away zone.", (120, 70, 480, 110)),
             ("EXIT", (20, 350, 90, 380))]
    assert text_blocks(lines) == [("NO PARKING Tow-away zone.", (100, 10, 500, 110)), ("EXIT", (20, 350, 90, 380))]


def test_a_long_block_is_quoted_in_part():
    said = Part("text", "word " * 100, "middle").said()
    assert said.endswith("…'.") and len(said) < 160


def test_the_describer_lists_a_real_picture_in_json_and_the_long_description():
    from capdesk.imageio import load_image

    d = Describer(None, provider="cpu", options=DescribeOptions(ocr="never")).describe_images(
        [load_image(SAMPLES / "chelsea.png")], [str(SAMPLES / "chelsea.png")])[0]
    found = d.to_json()["found"]
    assert found and found[0]["name"] == "cat" and found[0]["said"].startswith("Cat, ")
    assert "Where things are: cat" in d.extended


@pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")
def test_a_sign_s_words_are_found_at_the_top(tmp_path):
    img = Image.new("RGB", (640, 480), (40, 90, 40))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype("DejaVuSans-Bold.ttf", 56)
    draw.rectangle((120, 20, 520, 110), fill="white")
    draw.text((150, 35), "NO PARKING", fill="black", font=font)
    path = tmp_path / "sign.png"
    img.save(path)
    r = run_cli("caption", "--json", "--ocr", "always", str(path))
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)["found"]
    texts = [p for p in found if p["what"] == "text"]
    assert texts and texts[0]["where"] == "top" and "PARKING" in texts[0]["name"], found
