"""Fine-tuning the shipped model on a user's folder of images with .txt captions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, needs_torch, run_cli
from PIL import Image

pytestmark = needs_torch

WORDS = {"chelsea.png": "cat", "coffee.png": "cup", "rocket.jpg": "rocket", "astronaut.png": "astronaut"}


@pytest.fixture
def user_folder(tmp_path):
    """24 of a user's pictures with their own alt text, including words the base model never saw."""
    d = tmp_path / "my photos"
    d.mkdir()
    k = 0
    for name, word in WORDS.items():
        base = Image.open(SAMPLES / name).convert("RGB")
        for i in range(6):
            img = base.rotate(i * 7).crop((i * 5, i * 5, base.width - i * 5, base.height - i * 5))
            p = d / f"{word}-{i}.jpg"
            img.save(p, quality=88)
            (d / f"{word}-{i}.txt").write_text(f"a zorblat {word} in the studio\nthe zorblat {word} again\n",
                                              encoding="utf-8")
            k += 1
    return d


@pytest.mark.slow  # 79 s measured on two busy cores
def test_finetune_installs_a_new_model_the_app_loads(tmp_path, user_folder):
    from training.finetune import finetune

    m = finetune(user_folder, "mine", epochs=2, lr=1e-3, work=tmp_path / "work", cache=tmp_path / "cache",
                 progress=False)
    assert m["name"] == "mine" and m["base_model"] == "everyday"
    assert "zorblat" in m["training"]["new_words"]
    h = m["metrics"]["heldout"]
    assert set(h["before"]) >= {"BLEU-4", "CIDEr"} and set(h["after"]) >= {"BLEU-4", "CIDEr"}
    vocab = json.loads((ROOT / "models" / "everyday" / "vocab.json").read_text())["itos"]
    new_vocab = m["vocab"]["size"]
    assert new_vocab > len(vocab)  # the base's words are kept, the user's added
    r = run_cli("caption", "--json", "--model", "mine", "--ocr", "never", str(user_folder / "cat-0.jpg"))
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["model"] == "mine" and rec["caption"]
    # same encoder graph as the base: the new model takes part in routing
    base = json.loads((ROOT / "models" / "everyday" / "manifest.json").read_text())
    assert m["files"]["encoder.onnx"]["sha256"] == base["files"]["encoder.onnx"]["sha256"]
    assert "domain_gate" in m
    # it proved itself (these held-out pictures are near copies of its training pictures) before being
    # routed to, measured as the app describes, and says so in plain words
    ft = m["finetune"]
    assert ft["heldout"]["images"] >= 5 and ft["proved"] is True and ft["automatic"] is True
    assert ft["verdict"].startswith("better than everyday on your pictures")
    assert ft["heldout"]["after"]["CIDEr"] > ft["heldout"]["before"]["CIDEr"]
    # the base's concept head and trust came with it, so its captions meet the same trust rule
    assert ft["adopted"] == ["concepts", "trust"] and "grounding" not in m and m["trust"] == base["trust"]
    assert m["files"]["concepts.onnx"]["sha256"] == base["files"]["concepts.onnx"]["sha256"]
    assert rec["trust"] is not None and rec["said_as"] in ("fact", "probably", "withheld")
    # the gate a few photos were fitted on never admits more of the base's own pictures than the share allowed
    from training.proving import GATE_BASE_SHARE, base_val_slice

    if base_val_slice(resolve_bundle("everyday")) is not None:
        assert ft["others"]["measured"] and ft["others"]["routed_to_new"] <= GATE_BASE_SHARE * 200 + 1


def resolve_bundle(name: str):
    from capdesk.model.bundle import resolve

    return resolve(name)


@pytest.mark.slow  # 41 s measured on two busy cores
def test_too_few_pictures_to_prove_anything_are_not_used_automatically(tmp_path, user_folder):
    """12 pictures can be learnt from when asked (min_images), but 5 held out of 12 prove nothing:
    the model is installed to be used only when named, and says why."""
    from capdesk.describe.describer import Describer
    from training.finetune import finetune, report_lines

    for p in sorted(user_folder.glob("*-[3-5].*")):
        p.unlink()
    m = finetune(user_folder, "few", epochs=1, lr=1e-3, min_images=10, work=tmp_path / "work",
                 cache=tmp_path / "cache", progress=False)
    ft = m["finetune"]
    assert ft["proved"] is False and ft["automatic"] is False and ft["heldout"]["images"] == 5
    assert any("at least 5 held out of 15" in r for r in ft["reasons"])
    assert ft["verdict"].startswith("not proved better than everyday: too few pictures to tell it from luck")
    text = "\n".join(report_lines(m))
    assert "not installed for automatic use" in text and "--model few" in text
    assert ft["next"] == "more_pictures" and "next: add more of your pictures" in text
    assert "few" not in Describer(None, provider="cpu").engines  # automatic routing never hands it a picture
    r = run_cli("caption", "--json", "--model", "few", "--ocr", "never", str(user_folder / "cat-0.jpg"))
    assert r.returncode == 0 and json.loads(r.stdout)["model"] == "few"  # named, it is used


@pytest.mark.slow  # 104 s measured on two busy cores
def test_install_never_measures_and_installs_nothing(tmp_path, user_folder):
    r = run_cli("train", "finetune", "--data", str(user_folder), "--out", "trial", "--epochs", "1",
                "--install", "never", timeout=600)
    assert r.returncode == 0, r.stderr
    assert "verdict: " in r.stdout and "not installed (kept in the work folder)" in r.stdout
    assert "trial" not in run_cli("models", "list").stdout
    kept = r.stdout.split("kept at ")[1].split(":")[0]
    m = json.loads((Path(kept) / "manifest.json").read_text())
    assert m["finetune"]["install"] == "never" and m["finetune"]["automatic"] is False
    r = run_cli("train", "finetune", "--data", str(user_folder), "--out", "trial", "--install", "sometimes")
    assert r.returncode == 2 and "--install" in r.stderr


@pytest.mark.slow  # 28 s measured on two busy cores
def test_too_little_data_and_bad_records_are_explained(tmp_path):
    d = tmp_path / "few"
    d.mkdir()
    for i in range(3):
        shutil.copy(SAMPLES / "chelsea.png", d / f"c{i}.png")
        (d / f"c{i}.txt").write_text("a cat\n")
    (d / "broken.jpg").write_bytes(b"nope")
    (d / "broken.txt").write_text("a broken file\n")
    (d / "silent.png").write_bytes((SAMPLES / "coffee.png").read_bytes())
    (d / "silent.txt").write_text("\n  \n")
    r = run_cli("train", "finetune", "--data", str(d), "--out", "tiny")
    assert r.returncode == 2
    assert "only 4 image(s) with captions; at least 20" in r.stderr
    r = run_cli("train", "finetune", "--data", str(tmp_path / "missing"), "--out", "x")
    assert r.returncode == 2 and "no such file or folder" in r.stderr
    r = run_cli("train", "finetune", "--data", str(d), "--out", "bad name!")
    assert r.returncode == 2 and "a model name is" in r.stderr


@pytest.mark.slow  # 118 s measured on two busy cores
def test_a_new_fine_tune_with_an_old_name_learns_from_its_own_pictures(tmp_path, user_folder):
    """Running again after an interruption resumes; the same name over other pictures starts afresh
    (it once resumed the old run: its words, its checkpoint, its figures)."""
    from training.finetune import finetune

    work, cache = tmp_path / "work", tmp_path / "cache"
    first = finetune(user_folder, "mine", epochs=1, lr=1e-3, work=work, cache=cache, progress=False,
                     models_dir=tmp_path / "models")
    assert "zorblat" in first["training"]["new_words"]
    other = tmp_path / "other photos"
    shutil.copytree(user_folder, other)
    for txt in other.glob("*.txt"):
        txt.write_text(txt.read_text(encoding="utf-8").replace("zorblat", "quuxly"), encoding="utf-8")
    second = finetune(other, "mine", epochs=1, lr=1e-3, work=work, cache=cache, progress=False,
                      models_dir=tmp_path / "models")
    assert "quuxly" in second["training"]["new_words"] and "zorblat" not in second["training"]["new_words"]
    assert "set aside" in (work / "train.log").read_text(encoding="utf-8")
