"""The alt-text rule (README, "What the alt text says"): alt text speaks of the picture only; what
cannot be said stays empty and is marked for review, with the reason beside it, never in it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, run_cli
from evidence_helpers import said, whole
from PIL import Image, ImageDraw

from capdesk.describe import ocr
from capdesk.describe.alttext import names_people
from capdesk.describe.describer import DescribeOptions, Describer, text_worth_saying
from capdesk.describe.pixelfacts import plain_fact
from capdesk.folders.reading import describe_paths
from capdesk.sidecars.writer import read_alt_text

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")

# Words that would make the alt text talk about the software instead of the picture.
ABOUT_SOFTWARE = re.compile(r"\b(model|capdesk|scene description|unlike|confidence|withheld|review)\b", re.I)


def assert_about_the_picture(alt: str) -> None:
    assert not ABOUT_SOFTWARE.search(alt), alt
    assert not re.fullmatch(r"(an? )?(photo|image|picture|screenshot)\.?", alt.strip(), re.I), alt  # F30


# -- the rule on its own ---------------------------------------------------------------------
def test_withheld_caption_leaves_what_else_is_known():
    w = said("An airport.", in_domain=False, tags=[("tabby cat", 0.9)], domain="aerial photos")
    assert (w.text, w.said_as, w.review) == ("May contain: a tabby cat.", "withheld", True)
    assert "aerial photos" in w.reason and "withheld" in w.reason
    w = said("An airport.", in_domain=False, text="EXIT 12")
    assert w.text == 'Text: "EXIT 12"' and w.review
    w = said("An airport.", in_domain=False, plain_fact="A blank white image.")
    assert w.text == "A blank white image." and w.review


def test_nothing_known_means_empty_alt_text_and_review():
    w = said("A dog on a sofa.", in_domain=False, domain="everyday photos")
    assert w.text == "" and w.review and w.said_as == "withheld"
    assert "empty" in w.reason and "everyday photos" in w.reason
    w = said("", in_domain=None)
    assert w.text == "" and w.review and w.said_as == "none" and "no caption" in w.reason


def test_plain_fact_is_said_only_when_nothing_else_is_known():
    w = said("A dog.", in_domain=False, tags=[("cat", 0.9)], plain_fact="A mostly blank white image.")
    assert w.text == "May contain: a cat."
    w = said("A dog.", plain_fact="A blank white image.")
    assert w.text == "A dog." and not w.review and w.reason is None  # in domain and sure: the caption


def test_probably_caption_gets_the_tags_that_say_more():
    w = said("A cup of coffee on a table.", confidence=0.2, tags=[("espresso", 0.8)])
    assert w.text == "Probably a cup of coffee on a table."  # the tag's "cup of coffee" adds nothing
    assert w.said_as == "probably" and w.review and "unsure" in w.reason
    w = said("A mug on a table.", confidence=0.2, tags=[("teapot", 0.8)])
    assert w.text == "Probably a mug on a table. May contain: a teapot."
    w = said("Two cats on a bed.", confidence=0.2, tags=[("cat", 0.8)])
    assert w.text == "Probably cats on a bed."  # "cat" adds nothing; the number no detector confirmed goes
    w = said("A cat on a bed.", tags=[("cat", 0.9)], tags_mode="never")
    assert w.text == "A cat on a bed."


def test_a_caption_and_a_tag_that_contradict_each_other_are_never_both_said():
    # The caption's bus is seen by no one, the tag's fire truck by the detector too: the noun is replaced.
    w = said("A red and white bus parked on a street.", trust=0.5, tags=[("fire truck", 0.8)],
             detections=[("truck", 0.8)])
    assert w.text == "Probably a red and white fire truck on a street."
    assert whole("A red and white bus parked on a street.", trust=0.5, tags=[("fire truck", 0.8)],
                 detections=[("truck", 0.8)]) == "A red and white fire truck parked on a street."
    # The caption's dog is seen by the detector: the horse tag is not said beside it.
    w = said("A dog running in a field.", trust=0.5, tags=[("common sorrel horse", 0.8)],
             detections=[("dog", 0.9)])
    assert w.text == "Probably a dog in a field."


def test_a_lone_symbol_read_by_ocr_is_not_said():
    assert text_worth_saying("®") is None and text_worth_saying("2") is None and text_worth_saying(None) is None
    assert text_worth_saying("12") == "12" and text_worth_saying("EXIT") == "EXIT"


def test_people_words():
    assert names_people("A group of people standing next to each other.")
    assert names_people("A couple sitting on a bench.") and not names_people("A couple of plates on a table.")
    assert not names_people("A group of cows in a field.") and not names_people("A mandarin duck.")


# -- facts from pixels -----------------------------------------------------------------------
def test_plain_facts_from_pixels():
    assert plain_fact(Image.new("RGB", (300, 200), "white")) == "A blank white image."
    assert plain_fact(Image.new("RGB", (300, 200), (20, 20, 20))) == "A blank black image."
    assert plain_fact(Image.new("RGB", (300, 200), (30, 60, 200))) == "A blank blue image."
    one_word = Image.new("RGB", (3000, 2000), "white")
    ImageDraw.Draw(one_word).text((20, 20), "Hi", fill="black", font_size=22)
    assert plain_fact(one_word) == "A mostly blank white image."  # a small word is not "blank"
    rng = np.random.default_rng(0)
    assert plain_fact(Image.fromarray(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8))) == ""
    assert plain_fact(_text_page()) == ""  # a page of text is not "mostly blank"
    for name in ("astronaut.png", "chelsea.png", "coffee.png", "page.png", "rocket.jpg"):
        assert plain_fact(Image.open(SAMPLES / name)) == "", name


def test_main_colour_share_is_exact_where_it_matters():
    from capdesk.describe.pixelfacts import MOSTLY_BLANK, TOLERANCE, main_colour_share

    def counted(img: Image.Image, main: np.ndarray) -> float:  # every pixel, as the share is defined
        return float((np.abs(np.asarray(img, np.int16) - main) <= TOLERANCE).all(2).mean())

    big = Image.new("RGB", (2000, 1500), "white")
    ImageDraw.Draw(big).rectangle((0, 0, 299, 99), fill="black")  # 1% of the picture
    small = big.resize((200, 150), Image.Resampling.NEAREST)  # no bigger than the thumbnail: counted there
    for img in (big, small):
        for at_least in (0.0, MOSTLY_BLANK):
            main, share = main_colour_share(img, at_least)
            assert share == counted(img, main) and 0.98 < share < 0.995, (img.size, at_least, share)
    noise = Image.fromarray(np.random.default_rng(1).integers(0, 256, (3000, 1000, 3), dtype=np.uint8))
    main, exact = main_colour_share(noise)
    assert exact == counted(noise, main) and exact < 0.01
    # Counting stops at the first strip that rules "mostly blank" out: the share is then only under it.
    assert main_colour_share(noise, MOSTLY_BLANK)[1] < MOSTLY_BLANK


def _text_page() -> Image.Image:
    img = Image.new("RGB", (800, 500), "white")
    draw = ImageDraw.Draw(img)
    for i in range(14):
        draw.text((20, 20 + 32 * i), "Quarterly report: revenue rose 4% while costs fell.", fill="black",
                  font_size=22)
    return img


# -- real pictures through the real models ---------------------------------------------------
@pytest.fixture(scope="module")
def describer():
    return Describer(None, provider="cpu", beam=1, options=DescribeOptions(ocr="never"))


def test_sample_photos_get_alt_text_about_themselves(describer):
    got = {os.path.basename(d.path): d for d in describe_paths(describer, sorted(SAMPLES.glob("*.[pj]*g")))}
    assert len(got) == 5
    for name, d in got.items():
        assert d.ok, (name, d.error)
        assert_about_the_picture(d.description)
        if d.said_as == "fact":
            assert not d.review and d.reason is None and d.description
        else:
            assert d.review and d.reason, name
        if not d.description:
            assert d.review and "empty" in d.reason
    assert got["chelsea.png"].description == "A cat."  # what the detector and the tags see in a close-up
    assert "unlike" in got["chelsea.png"].reason and "everyday photos" in got["chelsea.png"].reason


def test_synthetic_pictures(describer, tmp_path):
    Image.new("RGB", (300, 200), "white").save(tmp_path / "white.png")
    Image.new("RGB", (300, 200), (20, 20, 20)).save(tmp_path / "dark.png")
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)).save(tmp_path / "noise.png")
    _text_page().save(tmp_path / "text.png")
    got = {os.path.basename(d.path): d for d in describe_paths(describer, sorted(tmp_path.glob("*.png")))}
    assert got["white.png"].description == "A blank white image."
    assert got["dark.png"].description == "A blank black image."
    # noise: surely not a photo, and nothing certain to say (text reading is off here)
    assert got["noise.png"].description == "" and got["noise.png"].review and "empty" in got["noise.png"].reason
    assert got["text.png"].description == "A page of text." and got["text.png"].review  # the picture-kind model
    for d in got.values():
        assert d.said_as == "withheld" and d.review and "unlike" in d.reason


@needs_ocr
@pytest.mark.slow  # 3 s measured on two busy cores
def test_text_read_is_quoted_in_the_alt_text(tmp_path):
    _text_page().save(tmp_path / "text.png")
    d = next(describe_paths(Describer(None, provider="cpu", beam=1), [tmp_path / "text.png"]))
    assert d.description.startswith('A page of text. Text: "Quarterly') and d.text_status == "read"
    assert_about_the_picture(d.description)


@pytest.mark.slow  # 4 s measured on two busy cores
def test_sidecars_json_and_report_carry_the_rule(tmp_path):
    """What is written next to the picture is the alt text; why it needs a look is only in the report."""
    d = tmp_path / "pics"
    d.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    Image.new("RGB", (300, 200), "white").save(d / "white.png")
    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)).save(d / "noise.png")
    report = tmp_path / "report.json"
    r = run_cli("batch", str(d), "-q", "--ocr", "never", "--beam", "1", "--report", str(report))
    assert r.returncode == 0, r.stderr
    rows = {os.path.basename(row["path"]): row for row in json.loads(report.read_text())["rows"]}
    want = {"chelsea.png": "A cat.", "white.png": "A blank white image.", "noise.png": ""}
    for name, alt in want.items():
        stem = name.rsplit(".", 1)[0]
        assert (d / f"{stem}.txt").read_text(encoding="utf-8").strip() == alt
        assert read_alt_text(d / f"{name}.xmp") == alt
        assert rows[name]["alt_text"] == alt and rows[name]["needs_review"] is True
        assert "unlike" in rows[name]["reason"] and "unsure" not in rows[name]["reason"]
    assert "empty" in rows["noise.png"]["reason"]
    # The HTML report gives the real reason too, not "the model was unsure".
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", site / "chelsea.png")
    page = tmp_path / "report.html"
    assert run_cli("batch", str(site), "-q", "--beam", "1", "--report", str(page)).returncode == 0
    html = page.read_text(encoding="utf-8")
    assert "unlike those the model knows" in html and "was unsure (confidence" not in html
    # A second run skips the pictures, and its report still says what each holds and flags them.
    again = tmp_path / "again.json"
    assert run_cli("batch", str(d), "-q", "--report", str(again)).returncode == 0
    rows = {os.path.basename(row["path"]): row for row in json.loads(again.read_text())["rows"]}
    for name, alt in want.items():
        assert rows[name]["status"] == "skipped" and rows[name]["alt_text"] == alt
        assert rows[name]["needs_review"] is True and rows[name]["reason"]


@pytest.mark.slow  # 2 s measured on two busy cores
def test_caption_json_has_review_and_reason():
    r = run_cli("caption", "--json", "--ocr", "never", "--beam", "1", str(SAMPLES / "chelsea.png"),
                str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    for rec in recs:
        for key in ("caption", "confidence", "in_domain", "domain_score", "tags", "text", "description", "model",
                    "provider", "error", "review", "reason", "said_as", "text_status"):
            assert key in rec, key
        assert rec["review"] is True and "unlike" in rec["reason"] and rec["said_as"] == "withheld"
        assert rec["text_status"] == "skipped"
        assert_about_the_picture(rec["description"])
    # The plain output keeps one line per picture on stdout; why each needs a look goes to stderr.
    r = run_cli("caption", "--ocr", "never", "--beam", "1", str(SAMPLES / "rocket.jpg"))
    assert r.stdout.count("\n") == 1 and r.stdout.startswith(str(SAMPLES / "rocket.jpg") + "\t")
    assert "needs review" in r.stderr and "unlike" in r.stderr


def test_ocr_always_without_the_extra_says_so(tmp_path):
    args = ["caption", "--json", "--ocr", "always", "--beam", "1", str(SAMPLES / "page.png")]
    code = ("import sys; sys.modules['rapidocr_onnxruntime'] = None\n"  # as if the extra were not installed
            "from capdesk.cli.main import main\n"
            f"raise SystemExit(main({args!r}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    warn = [line for line in r.stderr.splitlines() if "--ocr always" in line]
    assert len(warn) == 1 and "not installed" in warn[0] and "capdesk[ocr]" in warn[0]
    rec = json.loads(r.stdout)
    assert rec["text"] is None and rec["text_status"] == "unavailable"
    assert "not installed" in rec["reason"]
