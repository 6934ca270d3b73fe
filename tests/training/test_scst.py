"""Self-critical training: the CIDEr-D reward, sampling under the app's rules, and the stage end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, needs_torch
from test_training import CAPTIONS, SMALL, _train, feature_cache, many_folder  # noqa: F401

pytestmark = needs_torch

REFS = [[c.split() for c in caps] for caps in CAPTIONS.values()]


def test_cider_d_matches_the_coco_code_when_given_the_same_references():
    from pycocoevalcap.cider.cider import Cider

    from training.cider import CiderD

    hyps = ["a cat lying on a rug", "a white cup of coffee", "a rocket in the sky with smoke",
            "a woman in a suit", "a cat on a page"]
    gts = {i: [" ".join(r) for r in refs] for i, refs in enumerate(REFS)}
    _, theirs = Cider().compute_score(gts, {i: [h] for i, h in enumerate(hyps)})
    mine = CiderD(REFS, end_token=False)
    assert [mine.score(i, h.split()) for i, h in enumerate(hyps)] == pytest.approx(list(theirs), abs=1e-9)
    assert max(theirs) > 0.5  # the comparison is not between zeros


def test_cider_d_pays_for_finishing_the_sentence():
    from training.cider import CiderD

    c = CiderD(REFS)
    words = REFS[0][0]  # "a tabby cat lying on a rug"
    whole = c.score(0, words)
    cut = c.score(0, words[:-1])
    assert whole > cut > 0
    assert c.score(0, REFS[2][0]) < cut  # another photo's caption


def test_advantages_compare_each_sample_with_the_others_of_its_photo():
    from training.cider import CiderD
    from training.scst import rewards

    c = CiderD(REFS)
    caps = [r.split() for r in ("a tabby cat lying on a rug", "a cup", "a striped cat", "coffee")]
    r, adv = rewards(c, [0, 0, 1, 1], caps, 2)
    assert r.shape == adv.shape == (4,)
    assert adv[0] == pytest.approx(r[0] - r[1]) and adv[1] == pytest.approx(r[1] - r[0])
    assert adv[0] > 0 and adv.reshape(2, 2).sum(1) == pytest.approx([0, 0], abs=1e-6)


def test_sampling_obeys_the_decoding_rules_and_reports_its_own_probabilities():
    import torch
    from torch.nn import functional as F

    from training.model import Decoder, DecoderConfig

    torch.manual_seed(1)
    m = Decoder(DecoderConfig(vocab_size=12, feature_dim=16, embed_dim=8, hidden_dim=8, attention_dim=8, dropout=0))
    feats = torch.rand(64, 4, 16)
    start, end, pad, unk = 1, 2, 0, 3
    s = m.sample(feats, 10, start, end, pad, banned=(pad, start, unk))
    words, mask = s["words"], s["mask"]
    assert not ((words == start) | (words == unk)).any()
    assert not (words[:, 0] == end).any()
    for row, msk in zip(words.tolist(), mask.tolist()):
        n = int(sum(msk))
        live = row[:n]
        assert all(a != b for a, b in zip(live, live[1:]))  # never a word twice in a row
        assert end not in live[:-1] and all(w == pad for w in row[n:])
    assert (words == end).any() and mask.sum() < mask.numel()  # some stopped early: the mask matters
    # The log-probabilities are those of the banned-and-renormalised distribution it sampled from.
    with torch.no_grad():
        h, c, proj = m.init(feats)
        prev = torch.full((64,), start)
        for t in range(words.size(1)):
            alpha = m.attend(feats, proj, h)
            logits, h, c = m._cell(prev, h, c, feats, alpha)
            logits[:, [pad, start, unk]] = -torch.inf
            if t == 0:
                logits[:, end] = -torch.inf
            else:
                logits[torch.arange(64), prev] = -torch.inf
            expect = F.log_softmax(logits, 1).gather(1, words[:, t].clamp_min(0).unsqueeze(1)).squeeze(1)
            live = mask[:, t].bool()
            assert torch.allclose(s["logp"][live, t], expect[live], atol=1e-5)
            prev = torch.where(words[:, t] == pad, torch.full_like(prev, end), words[:, t])
    s["logp"].sum().backward()
    assert m.L_o.weight.grad.abs().sum() > 0


@pytest.mark.slow  # 32 s measured on two busy cores
def test_stage_runs_after_fit_and_its_run_exports(tmp_path, many_folder, feature_cache):  # noqa: F811
    import subprocess

    from training.decoders import load_checkpoint
    from training.export import export_run

    r = _train(many_folder, tmp_path / "xe", feature_cache, "--epochs", "2", "--lr", "3e-3")
    assert r.returncode == 0, r.stderr[-2000:]
    cmd = [sys.executable, "-m", "training", "scst", str(tmp_path / "xe"), str(many_folder), "--out",
           str(tmp_path / "sc"), "--epochs", "2", "--batch-images", "8", "--samples", "3", "--lr", "1e-3",
           "--no-amp"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    log = (tmp_path / "sc" / "train.log").read_text()
    assert "before self-critical training" in log and "mean sampled CIDEr-D" in log
    ck = __import__("torch").load(tmp_path / "sc" / "checkpoint_last.pt", weights_only=False)
    assert ck["state"]["epoch"] == 2 and len(ck["state"]["history"]) == 2
    xe_model, _, _ = load_checkpoint(tmp_path / "xe" / "checkpoint_best.pt")
    sc_model, _, _ = load_checkpoint(tmp_path / "sc" / "checkpoint_last.pt")
    moved = sum(float((a - b).abs().sum()) for a, b in zip(xe_model.state_dict().values(),
                                                          sc_model.state_dict().values()))
    assert moved > 0  # the stage changed the weights
    bundle = export_run(tmp_path / "sc", tmp_path / "bundle", "toy-sc")
    manifest = json.loads((bundle / "manifest.json").read_text())
    sc = manifest["training"]["self_critical"]
    assert sc["samples"] == 3 and sc["val_metrics_before"]["BLEU-4"] >= 0 and len(sc["history"]) == 2
    assert manifest["training"]["best_epoch"] == json.loads(
        json.dumps(__import__("torch").load(tmp_path / "xe" / "checkpoint_best.pt", weights_only=False)
                   ["state"]["best_epoch"]))
    from training.card import render

    assert "self-critical training" in render(manifest, {})
    # A second command with the same folder resumes: nothing is left to do, nothing changes.
    before = np.array([float(v.abs().sum()) for v in ck["model"].values()])
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    again = __import__("torch").load(tmp_path / "sc" / "checkpoint_last.pt", weights_only=False)
    assert np.array_equal(before, np.array([float(v.abs().sum()) for v in again["model"].values()]))


@pytest.mark.slow  # 14 s measured on two busy cores
def test_scst_refuses_hard_attention(tmp_path, many_folder, feature_cache):  # noqa: F811
    import subprocess

    r = _train(many_folder, tmp_path / "hard", feature_cache, "--epochs", "1", "--attention", "hard")
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "-m", "training", "scst", str(tmp_path / "hard"), str(many_folder),
                        "--out", str(tmp_path / "sc")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode != 0 and "soft attention only" in r.stderr
    assert Path(tmp_path / "hard" / "checkpoint_best.pt").exists()
