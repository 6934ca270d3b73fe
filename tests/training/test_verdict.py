"""A fine-tune's verdict in plain words: one verdict, the figures that decided it (all on the same
held-out pictures, before -> after), what to do next; a fine-tune that has come apart (captions that
repeat themselves, words none of the picture's captions support) is not proved, whatever CIDEr says."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT, SAMPLES, needs_torch
from PIL import Image

from training.degeneration import degeneration, repetition, unsupported

WORDS = {"chelsea.png": "cat", "coffee.png": "cup", "rocket.jpg": "rocket", "astronaut.png": "astronaut"}


def test_captions_that_repeat_themselves_are_found_and_ordinary_ones_are_not():
    assert repetition("a black and black and black dog") == "black and black"
    assert repetition("a dog dog runs on the grass") == "dog dog"
    assert repetition("a dog and a dog") == "a dog"
    assert repetition("brick brown brick wall of brick") == "brick"
    for fine in ("a black dog and a white dog", "two dogs play with two balls", "a man in a red shirt",
                 "many buildings and green trees are around a playground"):
        assert repetition(fine) is None, fine
    assert unsupported("a brick sky over the dogs", ["two dogs under a blue sky"]) == ["brick"]
    d = degeneration({"1": "a cat cat cat", "2": "a brick sky"}, {"1": ["a cat"], "2": ["a blue sky"]})
    assert d["repeating"] == 1 and d["repeating_example"] == "a cat cat cat"
    assert d["unsupported_share"] == 0.2 and d["unsupported_words"] == ["brick"]


def test_the_verdict_names_the_figures_that_decided_it_on_one_set():
    from training.proving import heldout_checks, plain_verdict

    before = {"CIDEr": 0.371, "BLEU-4": 0.106, "CHAIRs": 0.0, "repeating": 0, "unsupported_share": 0.4,
              "unsupported_words": [], "repeating_example": ""}
    # The run: CIDEr rose, BLEU-4 moved by 0.004, and the captions repeat themselves.
    after = {**before, "CIDEr": 0.897, "BLEU-4": 0.102, "repeating": 3,
             "repeating_example": "a black and black and black and black dog on the grass"}
    v = plain_verdict("everyday", heldout_checks(before, after, 5), 5, False)
    assert v["verdict"] == "not proved better than everyday: its captions repeat themselves"
    assert v["deciding"][0] == ('captions that repeat themselves 0 -> 3 of 5, such as "a black and black and '
                                'black and black ..."')
    assert "CIDEr (closeness to your captions) 0.37 -> 0.90" in v["deciding"][1]
    assert not any("BLEU" in f for f in v["deciding"])  # a fall within noise is no reason, and not shown
    assert v["where"].startswith("on your 5 held-out pictures") and v["next"] == "fewer_rounds"
    # New wrong facts: more of what it says is in none of the picture's captions than the base's.
    wrong = {**before, "CIDEr": 0.9, "unsupported_share": 0.62, "unsupported_words": ["brick", "sky"]}
    v = plain_verdict("everyday", heldout_checks(before, wrong, 5), 5, False)
    assert v["verdict"] == "not proved better than everyday: it says things your captions do not"
    assert 'words no caption of the picture supports 40% -> 62% ("brick", "sky")' in v["deciding"]
    good = {**before, "CIDEr": 0.9, "BLEU-4": 0.2, "unsupported_share": 0.2}
    v = plain_verdict("everyday", heldout_checks(before, good, 5), 5, True)
    assert v["verdict"] == "better than everyday on your pictures, no worse on others" and v["next"] == "none"
    assert v["deciding"] == ["CIDEr (closeness to your captions) 0.37 -> 0.90, at least +0.10 needed",
                             "captions that repeat themselves 0 -> 0 of 5"]


@pytest.fixture
def pictures(tmp_path):
    """20 of a person's pictures with their captions (15 learnt from, 5 held out)."""
    from training.data import read_any

    d = tmp_path / "photos"
    d.mkdir()
    for name, word in WORDS.items():
        base = Image.open(SAMPLES / name).convert("RGB").resize((160, 160))
        for i in range(5):
            base.rotate(i * 9).save(d / f"{word}-{i}.jpg", quality=85)
            (d / f"{word}-{i}.txt").write_text(f"a zorblat {word} in the studio\n", encoding="utf-8")
    ds = read_any(d)
    ds.ensure_splits(val_fraction=0.15, seed=7, min_val=5)
    return ds.split("train"), ds.split("val")


@needs_torch
@pytest.mark.slow  # 3.2 s measured on two busy cores (two models describe 5 pictures, 20 are encoded)
def test_a_fine_tune_whose_captions_repeat_themselves_is_not_proved(tmp_path, monkeypatch, pictures):
    """Through the real measuring (both models run as the app runs them, figures, gate): the new model's
    captions match the person's closely (CIDEr and BLEU-4 rise) but repeat themselves. It was 'better'."""
    from capdesk.model.bundle import open_bundle
    from training import proving

    monkeypatch.setattr(proving, "base_val_slice", lambda base: None)  # the shared data set is not the point
    new = tmp_path / "new"
    shutil.copytree(ROOT / "models" / "everyday", new)
    real = proving._captions
    held_words = {}

    def captions(engine, named):
        out = real(engine, named)
        if engine.bundle.path.resolve() != new.resolve():
            return out
        # the held-out pictures' own caption, with its word said over and over
        return [f"a zorblat {w} and {w} and {w} in the studio" for w in held_words["order"][:len(out)]]

    train, held = pictures
    held_words["order"] = [r.captions[0][2] for r in held]
    monkeypatch.setattr(proving, "_captions", captions)
    v = proving.prove(new, open_bundle(ROOT / "models" / "everyday"), train, held)
    b, a = v["heldout"]["before"], v["heldout"]["after"]
    assert a["CIDEr"] >= b["CIDEr"] + 0.1 and a["BLEU-4"] >= b["BLEU-4"]  # the old rules were met
    assert v["proved"] is False
    assert v["verdict"] == "not proved better than everyday: its captions repeat themselves"
    assert v["deciding"][0].startswith(f"captions that repeat themselves {b['repeating']} -> 5 of 5")
    assert v["next"] == "fewer_rounds" and any("repeat themselves" in r for r in v["reasons"])
    json.dumps(v)  # it goes into the manifest as it is
