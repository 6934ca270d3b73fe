"""Ensembles of decoders: the mean of probabilities, the exported graphs, rebuilding and shrinking."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, needs_torch
from test_training import CAPTIONS, _train, feature_cache, sidecar_folder  # noqa: F401

pytestmark = needs_torch


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two small runs on the same pictures, apart only in their seed."""
    import shutil

    base = tmp_path_factory.mktemp("ens")
    data = base / "mine"
    data.mkdir()
    for name, caps in CAPTIONS.items():
        shutil.copy(SAMPLES / name, data / name)
        (data / (name.rsplit(".", 1)[0] + ".txt")).write_text("\n".join(caps) + "\n", encoding="utf-8")
    cache = base / "cache"
    for seed in (3, 4):
        r = _train(data, base / f"run{seed}", cache, "--epochs", "4", "--lr", "3e-3", "--seed", str(seed))
        assert r.returncode == 0, r.stderr[-2000:]
    return base


def test_step_is_the_mean_of_the_members_probabilities():
    import torch

    from training.decoders import Ensemble
    from training.model import Decoder, DecoderConfig

    torch.manual_seed(0)
    a = Decoder(DecoderConfig(vocab_size=11, feature_dim=16, embed_dim=8, hidden_dim=8, attention_dim=6)).eval()
    b = Decoder(DecoderConfig(vocab_size=11, feature_dim=16, embed_dim=4, hidden_dim=12, attention_dim=5)).eval()
    ens = Ensemble([a, b]).eval()
    feats = torch.rand(3, 4, 16)
    word = torch.tensor([1, 5, 7])
    with torch.no_grad():
        h, c, proj = ens.init(feats)
        assert h.shape == (3, 20) and proj.shape == (3, 4, 11)
        logp, h2, c2, alpha = ens.step(word, h, c, feats, proj)
        ha, ca, pa = a.init(feats)
        hb, cb, pb = b.init(feats)
        la, ha2, _, aa = a.step(word, ha, ca, feats, pa)
        lb, hb2, _, ab = b.step(word, hb, cb, feats, pb)
    assert torch.allclose(logp.exp(), (la.exp() + lb.exp()) / 2, atol=1e-6)
    assert torch.allclose(logp.exp().sum(1), torch.ones(3), atol=1e-5)
    assert torch.allclose(h2, torch.cat([ha2, hb2], 1)) and torch.allclose(alpha, (aa + ab) / 2)
    with pytest.raises(ValueError, match="at least two"):
        Ensemble([a])


@pytest.mark.slow  # 44 s measured on two busy cores
def test_ensemble_bundle_decodes_like_pytorch_and_rebuilds(tmp_path, two_runs):
    import torch

    from capdesk.model.engine import Engine
    from training.decoders import decoder_from_bundle, load_checkpoint
    from training.export import export_run
    from training.shrink import rounding_bound, shrink_bundle

    r = subprocess.run([sys.executable, "-m", "training", "ensemble", str(two_runs / "run3"), str(two_runs / "run4"),
                        "--out", str(tmp_path / "ens")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    bundle = export_run(tmp_path / "ens", tmp_path / "bundle", "toy-ensemble")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert len(manifest["decoder"]["members"]) == 2 and [m["seed"] for m in manifest["training"]["ensemble"]] == [3, 4]
    model, vocab, _ = load_checkpoint(tmp_path / "ens" / "checkpoint_best.pt")
    single, _, _ = load_checkpoint(two_runs / "run3" / "checkpoint_best.pt")
    eng = Engine(str(bundle), provider="cpu")
    batch = np.stack([eng.preprocess.load(SAMPLES / n)[1] for n in CAPTIONS])
    feats, _ = eng.encode(batch)
    tf = torch.from_numpy(feats)
    banned = (eng.pad, eng.start, eng.unk)
    want = model.greedy(tf, eng.max_len, eng.start, eng.end, banned=banned)
    got = eng.decode(feats, beam=1)
    assert [c.words for c in got] == [vocab.decode(w.tolist()) for w in want]
    # it is not simply its first member
    with torch.no_grad():
        h, c, proj = model.init(tf)
        lp_ens = model.step(torch.full((len(feats),), eng.start), h, c, tf, proj)[0]
        hs, cs, ps = single.init(tf)
        lp_one = single.step(torch.full((len(feats),), eng.start), hs, cs, tf, ps)[0]
    assert (lp_ens - lp_one).abs().max() > 1e-3
    # rebuilt from the graphs exactly; and from the shrunk graphs within int8's rounding
    rebuilt, _, _ = decoder_from_bundle(bundle)
    for k, v in model.state_dict().items():
        assert torch.equal(v, rebuilt.state_dict()[k]), k
    shrink_bundle(bundle, tmp_path / "small")
    from_small, _, _ = decoder_from_bundle(tmp_path / "small")
    for k, v in model.state_dict().items():
        err = (v - from_small.state_dict()[k]).abs().max().item()
        assert err <= rounding_bound(v.abs().max().item()), k
    caps = Engine(str(tmp_path / "small"), provider="cpu").decode(feats, beam=3)
    assert all(c.words for c in caps)
    from training.card import render

    text = render(manifest, {})
    assert "An ensemble of 2 such decoders" in text and "seed 3" in text and "seed 4" in text


@pytest.mark.slow  # 6 s measured on two busy cores
def test_finetune_from_an_ensemble_base_trains_its_first_member(tmp_path, two_runs):
    from training.export import export_run
    from training.finetune import finetune

    r = subprocess.run([sys.executable, "-m", "training", "ensemble", str(two_runs / "run3"), str(two_runs / "run4"),
                        "--out", str(tmp_path / "ens")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    base = export_run(tmp_path / "ens", tmp_path / "models" / "toyens", "toyens")
    data = two_runs / "mine"
    m = finetune(data, "mine-ft", base=str(base), epochs=1, lr=1e-3, work=tmp_path / "work",
                 cache=two_runs / "cache", progress=False, models_dir=tmp_path / "models", min_images=5,
                 val_fraction=0.4)
    assert m["base_model"] == "toyens" and "members" not in m["decoder"]
    assert m["decoder"]["hidden_dim"] == json.loads((base / "manifest.json").read_text())["decoder"]["members"][0][
        "hidden_dim"]
    assert "ensemble of" in (tmp_path / "work" / "train.log").read_text()


@pytest.mark.slow  # 6 s measured on two busy cores
def test_members_must_share_a_vocabulary(tmp_path, two_runs):
    import shutil

    other = tmp_path / "other"
    shutil.copytree(two_runs / "mine", other)
    (other / "page.txt").write_text("a brand new sentence of unseen words\n", encoding="utf-8")
    r = _train(other, tmp_path / "runx", two_runs / "cache", "--epochs", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "-m", "training", "ensemble", str(two_runs / "run3"), str(tmp_path / "runx"),
                        "--out", str(tmp_path / "ens")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 2 and "vocabulary differs" in r.stderr and not (tmp_path / "ens").exists()


@pytest.mark.parametrize("case", ["one member", "broken bundle", "no such run"])
@pytest.mark.slow  # 3 s measured on two busy cores
def test_unusable_members_are_named_in_one_line(tmp_path, case):
    """What cannot join an ensemble is one line naming it, exit 2, and nothing written."""
    shipped = str(ROOT / "models" / "everyday")
    if case == "one member":
        members, said = [shipped], "at least two decoders"
    elif case == "broken bundle":
        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / "manifest.json").write_text("{}", encoding="utf-8")
        members, said = [shipped, str(broken)], f"{broken}: manifest format_version"
    else:
        members, said = [str(tmp_path / "absent"), shipped], f"{tmp_path / 'absent'}: neither a finished training run"
    r = subprocess.run([sys.executable, "-m", "training", "ensemble", *members, "--out", str(tmp_path / "ens")],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 2 and said in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not (tmp_path / "ens").exists()


@pytest.mark.slow  # 9 s measured on two busy cores
def test_a_released_bundle_can_join_an_ensemble(tmp_path, two_runs):
    """A shipped (shrunk) model joins a decoder trained since, without its training run; an ensemble
    bundle brings each of its members."""
    import torch

    from training.decoders import load_checkpoint
    from training.export import export_run
    from training.shrink import rounding_bound, shrink_bundle

    export_run(two_runs / "run3", tmp_path / "full", "toy")
    shrink_bundle(tmp_path / "full", tmp_path / "small")
    small = tmp_path / "small"
    r = subprocess.run([sys.executable, "-m", "training", "ensemble", str(small), str(two_runs / "run4"),
                        "--out", str(tmp_path / "ens")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    model, _, ck = load_checkpoint(tmp_path / "ens" / "checkpoint_best.pt")
    one, _, _ = load_checkpoint(two_runs / "run3" / "checkpoint_best.pt")
    four, _, _ = load_checkpoint(two_runs / "run4" / "checkpoint_best.pt")
    for k, v in one.state_dict().items():  # the bundle's member: run 3 within int8's rounding
        err = (v - model.members[0].state_dict()[k]).abs().max().item()
        assert err <= rounding_bound(v.abs().max().item()), k
    for k, v in four.state_dict().items():
        assert torch.equal(v, model.members[1].state_dict()[k]), k
    members = ck["state"]["members"]
    assert members[0]["bundle"] == str(small) and members[0]["seed"] == 3 and "bundle" not in members[1]

    bundle = export_run(tmp_path / "ens", tmp_path / "ensbundle", "toy-ensemble")
    r = subprocess.run([sys.executable, "-m", "training", "ensemble", str(bundle), str(two_runs / "run3"),
                        "--out", str(tmp_path / "ens3")], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    three, _, ck3 = load_checkpoint(tmp_path / "ens3" / "checkpoint_best.pt")
    assert len(three.members) == 3 and [m["seed"] for m in ck3["state"]["members"]] == [3, 4, 3]
    for k, v in four.state_dict().items():
        assert torch.equal(v, three.members[1].state_dict()[k]), k
