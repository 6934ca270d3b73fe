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
from conftest import ROOT, SAMPLES, SHARED_DATA, needs_shared_data, run_cli
from PIL import Image, ImageDraw

from capdesk.describe import ocr
from capdesk.describe.alttext import names_people, word
from capdesk.describe.describer import DescribeOptions, Describer, text_worth_saying, wording
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
    w = word("An airport.", 0.9, False, "May contain: a cat.", ["cat"], None, domain="aerial photos")
    assert (w.text, w.said_as, w.review) == ("May contain: a cat.", "withheld", True)
    assert "aerial photos" in w.reason and "withheld" in w.reason
    w = word("An airport.", 0.9, False, "", [], "EXIT 12")
    assert w.text == 'Text: "EXIT 12"' and w.review
    w = word("An airport.", 0.9, False, "", [], None, plain_fact="A blank white image.")
    assert w.text == "A blank white image." and w.review


def test_nothing_known_means_empty_alt_text_and_review():
    w = word("A dog on a sofa.", 0.9, False, "", [], None, domain="everyday photos")
    assert w.text == "" and w.review and w.said_as == "withheld"
    assert "empty" in w.reason and "everyday photos" in w.reason
    w = word("", None, None, "", [], None)
    assert w.text == "" and w.review and w.said_as == "none" and "no caption" in w.reason


def test_plain_fact_is_said_only_when_nothing_else_is_known():
    w = word("A dog.", 0.9, False, "May contain: a cat.", ["cat"], None, plain_fact="A mostly blank white image.")
    assert w.text == "May contain: a cat."
    w = word("A dog.", 0.9, True, "", [], None, plain_fact="A blank white image.")
    assert w.text == "A dog." and not w.review and w.reason is None  # in domain and sure: the caption


def test_probably_caption_gets_the_tags_that_say_more():
    w = word("A cup of coffee on a table.", 0.2, True, "May contain: an espresso.", ["espresso"], None)
    assert w.text == "Probably a cup of coffee on a table. May contain: an espresso."
    assert w.said_as == "probably" and w.review and "unsure" in w.reason
    w = word("Two cats on a bed.", 0.2, True, "May contain: a cat.", ["cat"], None)
    assert w.text == "Probably two cats on a bed."  # "cat" adds nothing to "two cats"
    w = word("A cat on a bed.", 0.9, True, "May contain: a cat.", ["cat"], None, tags_mode="never")
    assert w.text == "A cat on a bed."


def test_people_caption_contradicted_by_an_animal_tag_is_hedged():
    w = word("A man standing on a surfboard in the ocean.", 0.45, True, "May contain: a dog.", ["dog"], None,
             animal_tags=["dog"])
    assert w.text == "Probably a man standing on a surfboard in the ocean. May contain: a dog."
    assert "people" in w.reason and "dog" in w.reason
    w = word("A man walking a dog on a beach.", 0.45, True, "May contain: a dog.", ["dog"], None,
             animal_tags=["dog"])
    assert w.said_as == "fact"  # the caption says the dog too: no contradiction
    w = word("A man on a horse.", 0.45, True, "", [], None, people_confidence=0.5)
    assert w.said_as == "probably" and "not sure enough" in w.reason


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
    assert got["chelsea.png"].description == "May contain: a cat."  # the tags of a close-up
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
    for name in ("noise.png", "text.png"):  # nothing certain to say (text reading is off here)
        assert got[name].description == "" and got[name].review and "empty" in got[name].reason
    for d in got.values():
        assert d.said_as == "withheld" and d.review and "unlike" in d.reason


@needs_ocr
def test_text_read_is_quoted_in_the_alt_text(tmp_path):
    _text_page().save(tmp_path / "text.png")
    d = next(describe_paths(Describer(None, provider="cpu", beam=1), [tmp_path / "text.png"]))
    assert d.description.startswith('Text: "Quarterly') and d.text_status == "read"
    assert_about_the_picture(d.description)


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
    want = {"chelsea.png": "May contain: a cat.", "white.png": "A blank white image.", "noise.png": ""}
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


@needs_shared_data("everyday")
def test_people_rate_script_runs(tmp_path):
    out = tmp_path / "people.json"
    r = subprocess.run([sys.executable, str(ROOT / "training" / "studies" / "people_rate.py"), "--data",
                        str(SHARED_DATA / "everyday"), "--limit", "24", "--json", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    for split in ("val", "test"):
        before, after = res[split]["before"], res[split]["after"]
        assert before["images"] == 24
        assert after["said_as_fact_none_in_refs"] <= before["said_as_fact_none_in_refs"]
    assert 0.35 <= res["tuned_people_confidence"] <= 0.9


def test_wording_matches_compose_for_the_gui():
    opts = DescribeOptions()
    w = wording("A cat on a sofa.", 0.1, True, [], None, opts)
    assert w.text.startswith("Probably") and w.review
