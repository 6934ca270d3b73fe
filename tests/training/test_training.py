"""The training subpackage: readers, vocabulary, the network, parity with ONNX, resume, pipeline."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, SHARED_DATA, needs_shared_data, needs_torch, run_cli, write_caption_folder

pytestmark = needs_torch

SMALL = [
    "--embed-dim",
    "64",
    "--hidden-dim",
    "64",
    "--attention-dim",
    "64",
    "--batch-size",
    "8",
    "--min-count",
    "1",
    "--no-flip",
]

CAPTIONS = {
    "chelsea.png": ["a tabby cat lying on a rug", "a striped cat looks up"],
    "coffee.png": ["a cup of coffee on a saucer", "coffee in a white cup"],
    "rocket.jpg": ["a rocket lifts off into the sky", "a rocket launch with smoke"],
    "astronaut.png": ["a woman in an orange space suit", "an astronaut smiling with a flag"],
    "page.png": ["a page of printed text", "a scanned page with writing"],
}


@pytest.fixture(scope="session")
def feature_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("featcache")


@pytest.fixture
def sidecar_folder(tmp_path) -> Path:
    return write_caption_folder(tmp_path / "mine", CAPTIONS)


@pytest.fixture
def many_folder(tmp_path) -> Path:
    """30 pictures with captions: enough for several training steps per epoch."""
    from PIL import Image

    d = tmp_path / "many"
    d.mkdir()
    for name, caps in CAPTIONS.items():
        base = Image.open(SAMPLES / name).convert("RGB").resize((160, 120))
        for i in range(6):
            base.rotate(i * 11).save(d / f"{Path(name).stem}{i}.jpg", quality=85)
            (d / f"{Path(name).stem}{i}.txt").write_text("\n".join(caps) + "\n", encoding="utf-8")
    return d


# -- readers -------------------------------------------------------------------------------
def test_sidecar_folder_reader(sidecar_folder):
    from training.data import read_sidecar_folder

    (sidecar_folder / "nocap.png").write_bytes((SAMPLES / "chelsea.png").read_bytes())
    (sidecar_folder / "blank.jpg").write_bytes((SAMPLES / "rocket.jpg").read_bytes())
    (sidecar_folder / "blank.jpg.txt").write_text("  ...  \n!!\n", encoding="utf-8")
    ds = read_sidecar_folder(sidecar_folder)
    names = sorted(r.image.name for r in ds.records)
    assert names == sorted(CAPTIONS)
    assert any("nocap.png" in p and "no caption sidecar" in p for p in ds.problems)
    assert any("no words" in p for p in ds.problems)
    cat = next(r for r in ds.records if r.image.name == "chelsea.png")
    assert cat.captions[0] == ["a", "tabby", "cat", "lying", "on", "a", "rug"]


def test_csv_reader_with_bad_rows(tmp_path):
    from training.data import read_csv

    shutil.copy(SAMPLES / "coffee.png", tmp_path / "c.png")
    (tmp_path / "caps.csv").write_text(
        'image,caption,split\nc.png,"A cup, of coffee.",val\nc.png,,train\nmissing.png,a thing,train\nonlyone\n',
        encoding="utf-8",
    )
    ds = read_csv(tmp_path / "caps.csv")
    assert len(ds.records) == 1 and ds.records[0].split == "val"
    assert ds.records[0].captions == [["a", "cup", "of", "coffee"]]
    assert len(ds.problems) == 3


@pytest.mark.parametrize("name, content, said", [
    ("caps.json", b'{"images": [', "caps.json: not a JSON caption file (Expecting value"),
    ("caps.csv", b"image,caption\n\xff\xfe.png,a cat\n", "caps.csv: not UTF-8 text (invalid start byte at byte 14)"),
    ("caps.parquet", b"PAR1", "caps.parquet: unknown data format"),
    ("absent.csv", None, "absent.csv: no such file or folder"),
])
@pytest.mark.slow  # 2 s measured on two busy cores
def test_unusable_caption_data_is_named_in_one_line(tmp_path, name, content, said):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    r = subprocess.run([sys.executable, "-m", "training", "fit", name, "--out", "run"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2, r.stderr
    assert f"capdesk train fit: error: {said}" in r.stderr
    assert "Traceback" not in r.stderr


def test_coco_and_karpathy_and_flickr_readers(tmp_path):
    from training.data import read_coco, read_flickr8k, read_karpathy

    for n in ("a.jpg", "b.jpg"):
        shutil.copy(SAMPLES / "rocket.jpg", tmp_path / n)
    coco = {
        "images": [{"id": 1, "file_name": "a.jpg"}, {"id": 2, "file_name": "b.jpg"}],
        "annotations": [
            {"id": 1, "image_id": 1, "caption": "A rocket."},
            {"id": 2, "image_id": 2, "caption": "Smoke and fire"},
            {"id": 3, "image_id": 9, "caption": "orphan"},
        ],
    }
    (tmp_path / "coco.json").write_text(json.dumps(coco))
    ds = read_coco(tmp_path / "coco.json", tmp_path, split="val")
    assert len(ds.records) == 2 and all(r.split == "val" for r in ds.records) and len(ds.problems) == 1
    kp = {
        "dataset": "toy",
        "images": [
            {"filename": "a.jpg", "split": "test", "sentences": [{"raw": "x y", "tokens": ["x", "y"]}]},
            {"filename": "gone.jpg", "split": "train", "sentences": [{"raw": "z", "tokens": ["z"]}]},
        ],
    }
    (tmp_path / "dataset_toy.json").write_text(json.dumps(kp))
    ds = read_karpathy(tmp_path / "dataset_toy.json", tmp_path)
    assert [r.image.name for r in ds.records] == ["a.jpg"] and ds.records[0].split == "test"
    assert any("gone.jpg" in p for p in ds.problems)
    (tmp_path / "Flickr8k.token.txt").write_text(
        "a.jpg#0\tA dog runs .\na.jpg#1\tA brown dog\nb.jpg#0\tTwo kids\nbroken line\n"
    )
    (tmp_path / "Flickr_8k.trainImages.txt").write_text("a.jpg\n")
    (tmp_path / "Flickr_8k.devImages.txt").write_text("b.jpg\n")
    (tmp_path / "Flickr_8k.testImages.txt").write_text("")
    ds = read_flickr8k(tmp_path / "Flickr8k.token.txt", tmp_path)
    assert {r.image.name: (r.split, len(r.captions)) for r in ds.records} == {
        "a.jpg": ("train", 2),
        "b.jpg": ("val", 1),
    }
    assert any("no tab" in p for p in ds.problems)


@needs_shared_data("text")
def test_real_caption_texts_parse():
    from training.data import read_coco, read_flickr8k

    fl = read_flickr8k(SHARED_DATA / "text" / "Flickr8k.token.txt", Path("/nonexistent"), check_files=False)
    s = fl.summary()
    assert (s["train"]["images"], s["val"]["images"], s["test"]["images"]) == (6000, 1000, 1000)
    coco = read_coco(SHARED_DATA / "text" / "captions_val2017.json", Path("/nonexistent"), check_files=False)
    assert len(coco.records) == 5000


def test_vocab_roundtrip_and_extend(tmp_path):
    from training.vocab import END, START, UNK, Vocab

    v = Vocab.build([["a", "cat"], ["a", "dog"], ["a", "cat"]], min_count=2)
    assert v.itos[4:] == ["a", "cat"]
    assert v.encode(["a", "dog"], 10) == [START, v.stoi["a"], UNK, END]
    added = v.extend([["zebra", "zebra", "a"]], min_count=2)
    assert added == ["zebra"] and v.stoi["cat"] == 5 and v.stoi["zebra"] == 6
    v.save(tmp_path / "v.json")
    assert Vocab.load(tmp_path / "v.json").itos == v.itos
    assert v.decode([START, 4, 5, END, 4]) == ["a", "cat"]


# -- the network ---------------------------------------------------------------------------
def test_doubly_stochastic_penalty_and_hard_attention():
    import torch

    from training.model import Decoder, DecoderConfig, caption_loss

    torch.manual_seed(0)
    for att in ("soft", "hard"):
        m = Decoder(
            DecoderConfig(vocab_size=20, feature_dim=16, embed_dim=8, hidden_dim=8, attention_dim=8, attention=att)
        )
        feats = torch.rand(3, 4, 16)
        caps = torch.tensor([[1, 5, 6, 2, 0], [1, 7, 2, 0, 0], [1, 8, 9, 10, 2]])
        out = m(feats, caps)
        assert out["logits"].shape == (3, 4, 20) and out["alphas"].shape == (3, 4, 4)
        state: dict = {}
        loss, stats = caption_loss(out, caps, pad=0, ds_lambda=1.0, hard_state=state)
        mask = (caps[:, 1:] != 0).float()
        expected = ((1 - (out["alphas"] * mask[..., None]).sum(1)) ** 2).sum(1).mean()
        assert stats["ds"] == pytest.approx(expected.item(), rel=1e-5)
        loss.backward()
        assert m.full_att.weight.grad.abs().sum() > 0  # attention learns in both variants
        if att == "hard":
            assert "rl" in stats and "baseline" in state and stats["entropy"] > 0


def test_label_smoothing_stops_rewarding_certainty_and_leaves_the_reward_alone():
    import torch

    from training.model import caption_loss

    caps = torch.tensor([[1, 5, 6, 2]])
    targets = caps[:, 1:]

    def out_for(margin: float) -> dict:
        logits = torch.zeros(1, 3, 10)
        logits[0, torch.arange(3), targets[0]] = margin
        return {"logits": logits, "alphas": torch.full((1, 3, 4), 1 / 3)}

    plain = [caption_loss(out_for(m), caps, pad=0, ds_lambda=0.0)[1]["ce"] for m in (5.0, 30.0)]
    smooth = [caption_loss(out_for(m), caps, pad=0, ds_lambda=0.0, label_smoothing=0.1)[1]["ce"] for m in (5.0, 30.0)]
    assert plain[1] < plain[0]  # without smoothing, more certainty always costs less
    assert smooth[1] > smooth[0]  # with it, a near one-hot guess costs more than a sure-but-open one
    # hard attention's REINFORCE reward stays the caption's true log-likelihood
    out = out_for(5.0)
    out["loc_logp"] = torch.zeros(1, 3, requires_grad=True)
    out["entropy"] = torch.ones(1, 3)
    a, b = {}, {}
    caption_loss(out, caps, pad=0, ds_lambda=0.0, hard_state=a)
    caption_loss(out, caps, pad=0, ds_lambda=0.0, hard_state=b, label_smoothing=0.1)
    assert a["baseline"] == pytest.approx(b["baseline"])


def test_weight_average_follows_the_weights_and_swaps_back():
    import torch

    from training.train import WeightAverage

    m = torch.nn.Linear(3, 2)
    first = {k: v.clone() for k, v in m.state_dict().items()}
    avg = WeightAverage(m, decay=0.75)
    with torch.no_grad():
        m.weight.add_(4.0)
    avg.update()
    # the first average is the weights themselves: the random start is not part of it
    assert torch.allclose(avg.averaged()["weight"], first["weight"] + 4.0)
    with torch.no_grad():
        m.weight.add_(4.0)
    avg.update()
    # then each step weighs a quarter, the past three quarters: (0.25 * 8 + 0.75 * 0.25 * 4) / (1 - 0.75 ** 2)
    assert torch.allclose(avg.averaged()["weight"], first["weight"] + 2.75 / 0.4375)
    own = m.weight.detach().clone()
    with avg.swapped_in() as judged:
        assert torch.allclose(judged.weight, first["weight"] + 2.75 / 0.4375)
    assert torch.equal(m.weight, own)


# -- parity, resume, pipeline -------------------------------------------------------------
def _train(data: Path, out: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "training", "fit", str(data), "--out", str(out), "--cache", str(cache), *SMALL, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.slow  # 8 s measured on two busy cores
def test_onnx_bundle_matches_pytorch(tmp_path, sidecar_folder, feature_cache):
    import torch

    from capdesk.model.beam import beam_search
    from capdesk.model.decoders import ArrayDecoder
    from capdesk.model.engine import Engine
    from training.decoders import load_checkpoint
    from training.export import export_run

    r = _train(sidecar_folder, tmp_path / "run", feature_cache, "--epochs", "6", "--lr", "3e-3")
    assert r.returncode == 0, r.stderr[-2000:]
    bundle = export_run(tmp_path / "run", tmp_path / "bundle", "toy")
    model, vocab, _ = load_checkpoint(tmp_path / "run" / "checkpoint_best.pt")
    eng = Engine(str(bundle), provider="cpu")
    images = [SAMPLES / n for n in CAPTIONS]
    batch = np.stack([eng.preprocess.load(p)[1] for p in images])
    feats, _ = eng.encode(batch)
    tf = torch.from_numpy(feats)
    greedy_torch = model.greedy(tf, eng.max_len, eng.start, eng.end, banned=(eng.pad, eng.start, eng.unk))
    for i, cap in enumerate(eng.decode(feats, beam=1)):
        assert cap.words == vocab.decode(greedy_torch[i].tolist())

    def torch_step(words, h, c, rows):
        with torch.no_grad():
            init_proj = model.init(tf)[2]
            out = model.step(
                torch.from_numpy(words),
                torch.from_numpy(np.asarray(h)),
                torch.from_numpy(np.asarray(c)),
                tf[rows],
                init_proj[rows],
            )
        return tuple(o.numpy() for o in out)

    with torch.no_grad():
        h0, c0, _ = model.init(tf)
    hyps = beam_search(
        ArrayDecoder(lambda _: (h0.numpy(), c0.numpy()), torch_step),
        feats,
        3,
        eng.max_len,
        eng.start,
        eng.end,
        eng.length_alpha,
        eng.block_ngram,
        banned=(eng.pad, eng.start, eng.unk),
    )
    onnx_caps = eng.decode(feats, beam=3)
    assert [vocab.decode(h.ids) for h in hyps] == [c.words for c in onnx_caps]
    # attention from the graph equals PyTorch's too
    assert np.allclose(hyps[0].alphas, onnx_caps[0].attention, atol=1e-4)


@pytest.mark.slow  # 56 s measured on two busy cores
def test_resume_after_kill_matches_uninterrupted(tmp_path, many_folder, feature_cache):
    import torch

    sidecar_folder = many_folder
    # with the weight average on, so that resuming must bring it back as well
    args = ["--epochs", "3", "--ckpt-minutes", "0", "--seed", "3", "--ema", "0.9"]
    # Reference: an uninterrupted run.
    assert _train(sidecar_folder, tmp_path / "ref", feature_cache, *args).returncode == 0
    # Killed mid-epoch once a checkpoint exists, then started again with the same command.
    run = tmp_path / "killed"
    cmd = [
        sys.executable,
        "-m",
        "training",
        "fit",
        str(sidecar_folder),
        "--out",
        str(run),
        "--cache",
        str(feature_cache),
        *SMALL,
        *args,
        "--max-steps",
        "0",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    ck = run / "checkpoint_last.pt"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if ck.exists():
            try:
                st = torch.load(ck, weights_only=False)["state"]
            except Exception:
                st = None
            if st and st["epoch"] >= 1 and st["step"] >= 1:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "training finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = torch.load(ck, weights_only=False)["state"]
    assert killed_at["epoch"] < 3
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "resumed from epoch" in (run / "train.log").read_text()
    a = torch.load(tmp_path / "ref" / "checkpoint_last.pt", weights_only=False)
    b = torch.load(ck, weights_only=False)
    assert a["state"]["global_step"] == b["state"]["global_step"]
    for k, v in a["model"].items():
        assert torch.allclose(v, b["model"][k], atol=1e-5), k
        assert torch.allclose(a["ema"]["shadow"][k], b["ema"]["shadow"][k], atol=1e-5), k
    assert a["ema"]["steps"] == b["ema"]["steps"] == a["state"]["global_step"]
    # export reads checkpoint_best.pt: with --ema it holds the average, not the last step's weights
    best = torch.load(run / "checkpoint_best.pt", weights_only=False)
    if best["state"]["best_epoch"] == 3:
        steps = b["ema"]["steps"]
        assert all(torch.allclose(v, b["ema"]["shadow"][k] / (1 - 0.9 ** steps)) for k, v in best["model"].items())
    assert not all(torch.equal(v, best["model"][k]) for k, v in b["model"].items())


@pytest.mark.slow  # 11 s measured on two busy cores
def test_unreadable_images_are_skipped_not_fatal(tmp_path, sidecar_folder, feature_cache):
    (sidecar_folder / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    (sidecar_folder / "broken.txt").write_text("a broken picture\n")
    r = _train(sidecar_folder, tmp_path / "run", feature_cache, "--epochs", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    log = (tmp_path / "run" / "train.log").read_text()
    assert "broken.jpg" in log and "skipped" in log


@pytest.mark.slow
@needs_shared_data("everyday")
def test_pipeline_on_a_slice_of_real_data(tmp_path, feature_cache):
    """prepare -> train a few steps -> evaluate -> export -> caption through the app's CLI."""
    src = json.loads((SHARED_DATA / "everyday" / "dataset_everyday.json").read_text())
    # test photos from both collections, so the per-collection figures are exercised
    pick = {("train", ""): 40, ("val", ""): 10, ("test", "flickr8k"): 5, ("test", "coco"): 5}
    images = []
    for img in src["images"]:
        key = (img["split"], "" if img["split"] != "test" else img["source"][:4].replace("flic", "flickr8k"))
        if pick.get(key, 0) > 0:
            pick[key] -= 1
            images.append(img)
    (tmp_path / "dataset_slice.json").write_text(json.dumps({"dataset": "slice", "images": images}))
    data = tmp_path / "dataset_slice.json"
    root = str(SHARED_DATA / "everyday" / "images")
    env_args = ["--cache", str(feature_cache)]
    prep = run_cli("train", "prepare", str(data), "--out", str(tmp_path / "run"), *env_args, "--image-root", root,
                   timeout=600)
    assert prep.returncode == 0, prep.stderr[-2000:]
    assert json.loads(prep.stdout)["data"]["train"]["images"] == 40
    r = run_cli("train", "fit", str(data), "--out", str(tmp_path / "run"), *env_args, *SMALL, "--epochs", "2",
                "--image-root", root, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    r = run_cli("train", "export", str(tmp_path / "run"), str(tmp_path / "bundle"), "--name", "slice", timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    from training.evaluate import evaluate_bundle

    res = evaluate_bundle(
        tmp_path / "bundle", data, "test", [1, 3], sheet=tmp_path / "sheet.png", image_root=Path(root)
    )
    assert res["images"] == 10 and 0 <= res["beam3"]["BLEU-4"] <= 1 and res["beam1"]["BLEU-1"] > 0
    assert (tmp_path / "sheet.png").stat().st_size > 10_000
    assert {g: v["images"] for g, v in res["by_source"].items()} == {"flickr8k": 5, "coco": 5}
    assert 0 <= res["by_source"]["flickr8k"]["beam3"]["BLEU-4"] <= 1
    from training.card import render

    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    manifest["metrics"] = {"test": res}
    card = render(manifest, {})
    assert "Flickr8k test photos" in card and "COCO test photos" in card and "hard (paper)" in card
    test_img = SHARED_DATA / "everyday" / "images" / images[-1]["filename"]
    c = run_cli("caption", "--json", "--model", str(tmp_path / "bundle"), str(test_img))
    assert c.returncode == 0 and json.loads(c.stdout)["model"] == "slice"


def test_score_reports_the_length_ratio_behind_the_brevity_penalty():
    from training.metrics import score

    refs = {"a": ["a dog runs on the grass", "a brown dog running"],
            "b": ["two people sit on a bench", "a man and a woman on a bench"]}
    exact = score(refs, {"a": "a dog runs on the grass", "b": "two people sit on a bench"})
    assert exact["length_ratio"] == pytest.approx(1.0) and exact["BLEU-1"] == pytest.approx(1.0)
    # every word right but 9 words against closest references of 10: only the penalty lowers BLEU-1
    short = score(refs, {"a": "a dog runs", "b": "two people sit on a bench"})
    assert short["length_ratio"] == pytest.approx(0.9)
    assert short["BLEU-1"] == pytest.approx(math.exp(1 - 1 / 0.9), abs=1e-6)
