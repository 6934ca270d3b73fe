"""A decoder that tunes its own copy of the encoder's last block(s) and head (``--tune-encoder-top``,
``--encoder-top-blocks N``): it trains on the encoder's trunk, its bundle's encoder gives that trunk
as an extra output ("trunk", or "trunkN" for N blocks), and routing and the domain gate still read
the shared encoder's features."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, TOY_CAPTIONS, needs_torch, write_caption_folder

pytestmark = [pytest.mark.slow, needs_torch]

SMALL = ["--embed-dim", "32", "--hidden-dim", "32", "--attention-dim", "32", "--batch-size", "4",
         "--min-count", "1", "--no-flip"]


def _fit(data: Path, out: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "training", "fit", str(data), "--out", str(out), "--cache", str(cache), *SMALL, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """A plain toy run, then a run that starts from it and tunes the encoder's top."""
    tmp = tmp_path_factory.mktemp("top")
    data = write_caption_folder(tmp / "pictures")
    _fit(data, tmp / "plain", tmp / "cache", "--epochs", "3", "--lr", "3e-3")
    _fit(data, tmp / "top", tmp / "cache", "--epochs", "2", "--lr", "3e-3", "--tune-encoder-top",
         "--encoder-lr", "1e-3", "--init-from", str(tmp / "plain" / "checkpoint_best.pt"))
    return tmp / "plain", tmp / "top"


@pytest.fixture(scope="module")
def top4(runs) -> Path:
    """A run that starts from the plain one and tunes the encoder's last four blocks."""
    plain, top = runs
    _fit(plain.parent / "pictures", plain.parent / "top4", plain.parent / "cache", "--epochs", "1", "--lr", "3e-3",
         "--tune-encoder-top", "--encoder-top-blocks", "4", "--encoder-lr", "1e-3",
         "--init-from", str(plain / "checkpoint_best.pt"))
    return plain.parent / "top4"


@pytest.mark.parametrize("blocks", [1, 4])
@pytest.mark.slow  # 3 s measured on two busy cores
def test_the_top_starts_as_the_frozen_encoder(blocks):
    import torch

    from capdesk.imageio import Preprocess
    from training.encoder import MEAN, STD, EncoderTop, GridEncoder

    pre = Preprocess(224, MEAN, STD)
    batch = torch.from_numpy(np.stack([pre.load(SAMPLES / n)[1] for n in TOY_CAPTIONS]))
    enc, top = GridEncoder("lite0"), EncoderTop("lite0", blocks)
    assert len(top.lower) == blocks - 1
    with torch.no_grad():
        feats, logits = enc(batch)
        feats2, logits2, trunk = enc.with_trunk(batch, blocks)
        assert trunk.shape == (len(TOY_CAPTIONS), 49, top.trunk_dim)
        assert torch.equal(feats, feats2) and torch.equal(logits, logits2)
        # batch norm folded into the convolutions: the same numbers up to float rounding
        assert (top(trunk) - feats).abs().max() < 1e-3 * feats.abs().max()
        # and the top is not the identity: it is the last block and head, trainable
        assert all(p.requires_grad for p in top.parameters())


@pytest.mark.slow  # 9 s measured on two busy cores
def test_a_top_deeper_than_the_last_grid_is_refused_by_name(runs):
    plain, _ = runs
    cmd = [sys.executable, "-m", "training", "fit", str(plain.parent / "pictures"), "--out", str(plain.parent / "deep"),
           "--cache", str(plain.parent / "cache"), *SMALL, "--epochs", "1", "--tune-encoder-top",
           "--encoder-top-blocks", "5", "--init-from", str(plain / "checkpoint_best.pt")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 2
    assert "error: efficientnet-lite0: the top can hold 1 to 4 of its last blocks" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow  # 24 s measured on two busy cores
def test_a_tuned_top_starts_where_its_base_run_was_and_moves(runs):
    import torch

    from capdesk.imageio import Preprocess
    from training.decoders import load_checkpoint
    from training.encoder import MEAN, STD, EncoderTop, GridEncoder
    from training.model import Decoder, DecoderConfig
    from training.train import load_start

    plain, top = runs
    assert "before training: val" in (top / "train.log").read_text(encoding="utf-8")
    base, vocab, ck = load_checkpoint(plain / "checkpoint_best.pt")
    start = Decoder(DecoderConfig(**{**ck["model_config"], "encoder_top": "lite0"})).eval()
    load_start(start, base.state_dict(), "the plain run")
    pre = Preprocess(224, MEAN, STD)
    batch = torch.from_numpy(np.stack([pre.load(SAMPLES / n)[1] for n in TOY_CAPTIONS]))
    with torch.no_grad():
        feats, _, trunk = GridEncoder("lite0").with_trunk(batch)
        args = (22, vocab.stoi["<start>"], vocab.stoi["<end>"])
        assert torch.equal(base.greedy(feats, *args), start.greedy(trunk, *args))
    with pytest.raises(ValueError, match="does not fit"):
        load_start(Decoder(DecoderConfig(len(vocab), embed_dim=32, hidden_dim=32, attention_dim=32,
                                         refine_layers=1, refine_dim=32)), base.state_dict(), "the plain run")
    with pytest.raises(ValueError, match="does not fit"):
        load_start(Decoder(DecoderConfig(len(vocab), embed_dim=48, hidden_dim=32, attention_dim=32)),
                   base.state_dict(), "the plain run")

    model, _, ck = load_checkpoint(top / "checkpoint_best.pt")
    assert ck["model_config"]["encoder_top"] == "lite0" and "before" in ck["state"]
    pretrained = EncoderTop("lite0").state_dict()
    moved = max((v - pretrained[k[4:]]).abs().max().item()
                for k, v in model.state_dict().items() if k.startswith("top."))
    assert moved > 0


@pytest.mark.slow  # 2 s measured on two busy cores
def test_a_tuned_top_bundle_decodes_like_pytorch_rebuilds_and_shrinks(tmp_path, runs):
    import onnx
    import torch

    from capdesk.model.engine import Engine
    from training.decoders import decoder_from_bundle, load_checkpoint
    from training.export import export_run
    from training.shrink import shrink_bundle

    _, top = runs
    bundle = export_run(top, tmp_path / "bundle", "toy-top")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["encoder"]["outputs"] == ["features", "class_logits", "trunk"]
    assert manifest["decoder"]["encoder_top"] == "lite0"
    init = onnx.load(str(bundle / "decoder_init.onnx")).graph
    assert [i.name for i in init.input] == ["trunk"]
    assert [o.name for o in init.output] == ["h", "c", "projected", "memory"]
    from training.card import render

    assert "own copy of the encoder's last block and head" in render(manifest, {})

    model, vocab, _ = load_checkpoint(top / "checkpoint_best.pt")
    eng = Engine(str(bundle), provider="cpu")
    batch = np.stack([eng.preprocess.load(SAMPLES / n)[1] for n in TOY_CAPTIONS])
    named = eng.encode_named(batch)
    assert named["trunk"].shape[1:] == (49, model.top.trunk_dim)
    want = model.greedy(torch.from_numpy(named["trunk"]), eng.max_len, eng.start, eng.end,
                        banned=(eng.pad, eng.start, eng.unk))
    got = eng.caption_arrays(batch, beam=1)
    assert [c.words for c in got] == [vocab.decode(w.tolist()) for w in want]
    # what routing and the gate read is still the encoder's features
    feats, _ = eng.encode(batch)
    assert feats.shape[1:] == (49, 1280)

    rebuilt, _, _ = decoder_from_bundle(bundle)
    for k, v in model.state_dict().items():
        assert torch.allclose(v, rebuilt.state_dict()[k], atol=1e-6), k
    shrink_bundle(bundle, tmp_path / "small")
    small = Engine(str(tmp_path / "small"), provider="cpu")
    assert all(c.words for c in small.caption_arrays(batch, beam=3))


def test_a_tuned_top_bundle_without_the_trunk_is_refused_by_name(tmp_path, runs):
    from capdesk.model.bundle import BundleError
    from capdesk.model.engine import Engine
    from training.export import export_run, write_manifest

    plain, top = runs
    bundle = export_run(top, tmp_path / "bundle", "toy-top")
    other = export_run(plain, tmp_path / "plain", "toy-plain")
    (bundle / "encoder.onnx").write_bytes((other / "encoder.onnx").read_bytes())
    write_manifest(bundle, json.loads((bundle / "manifest.json").read_text()))
    with pytest.raises(BundleError, match="trunk"):
        Engine(str(bundle), provider="cpu")


def test_ensembles_refuse_tuned_top_members(runs):
    from training.decoders import Ensemble, load_checkpoint

    model, _, _ = load_checkpoint(runs[1] / "checkpoint_best.pt")
    with pytest.raises(ValueError, match="encoder top"):
        Ensemble([model, model])


def _with_gate(bundle: Path, default_bundle: Path) -> Path:
    """A toy bundle given the default model's domain gate (fitted on the same encoder features), so
    that it may be routed to."""
    from training.export import write_manifest

    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["domain_gate"] = json.loads((default_bundle / "manifest.json").read_text())["domain_gate"]
    (bundle / "domain.npz").write_bytes((default_bundle / "domain.npz").read_bytes())
    write_manifest(bundle, manifest)
    return bundle


@pytest.mark.slow  # 3 s measured on two busy cores
def test_models_with_and_without_the_trunk_share_features_and_route(tmp_path, runs, default_bundle):
    from capdesk.describe.describer import Describer
    from capdesk.model.bundle import open_bundle
    from training.export import export_run
    from training.shrink import shrink_bundle

    plain_run, top_run = runs
    plain = _with_gate(export_run(plain_run, tmp_path / "plain", "toy-plain"), default_bundle)
    top = _with_gate(export_run(top_run, tmp_path / "top", "toy-top"), default_bundle)
    p, t = open_bundle(plain), open_bundle(top)
    assert p.manifest["files"]["encoder.onnx"]["sha256"] != t.manifest["files"]["encoder.onnx"]["sha256"]
    assert p.features_key == t.features_key
    shrink_bundle(plain)
    shrink_bundle(top)
    p, t = open_bundle(plain), open_bundle(top)
    # the float16 encoders, one with the trunk output and one without: still the same features
    assert p.features_key == t.features_key == p.manifest["files"]["encoder.onnx"]["sha256"]

    # one encoder pass serves both when the primary's encoder gives the trunk ...
    d = Describer(str(top), others=[p], fixed=False)
    assert sorted(d.engines) == ["toy-plain", "toy-top"]
    described = d.describe_images([d.primary.preprocess.load(SAMPLES / n)[0] for n in TOY_CAPTIONS])
    assert len(described) == len(TOY_CAPTIONS)
    assert all(x.model in d.engines and x.caption is not None and x.caption.words for x in described)
    assert d.decodable == {"toy-plain", "toy-top"}
    # ... but a model that needs the trunk describes nothing from an encoder without it; its gate
    # still has its say on whose picture it is
    d = Describer(str(plain), others=[t], fixed=False)
    assert sorted(d.engines) == ["toy-plain", "toy-top"] and d.decodable == {"toy-plain"}
    batch = [d.primary.preprocess.load(SAMPLES / n)[0] for n in TOY_CAPTIONS]
    assert all(x.model == "toy-plain" and x.caption is not None for x in d.describe_images(batch))


@pytest.mark.slow  # 10 s measured on two busy cores
def test_a_four_block_top_takes_its_own_trunk_and_routes_safely(tmp_path, runs, top4, default_bundle):
    """Trunks of different depths have the same shape; their names keep a decoder from being fed
    another's, and the deeper top's encoder still gives the one-block trunk."""
    import onnx
    import torch

    from capdesk.describe.describer import Describer
    from capdesk.model.bundle import open_bundle
    from capdesk.model.engine import Engine
    from training.card import render
    from training.decoders import decoder_from_bundle, load_checkpoint
    from training.encoder import EncoderTop
    from training.export import export_run
    from training.shrink import shrink_bundle

    plain_run, top_run = runs
    model, vocab, ck = load_checkpoint(top4 / "checkpoint_best.pt")
    assert ck["model_config"]["encoder_top_blocks"] == 4 and len(model.top.lower) == 3
    pretrained = EncoderTop("lite0", 4).state_dict()
    assert max((v - pretrained[k[4:]]).abs().max().item()
               for k, v in model.state_dict().items() if k.startswith("top.lower.")) > 0

    b4 = _with_gate(export_run(top4, tmp_path / "top4", "toy-top4"), default_bundle)
    manifest = json.loads((b4 / "manifest.json").read_text())
    assert manifest["encoder"]["outputs"] == ["features", "class_logits", "trunk", "trunk4"]
    assert [i.name for i in onnx.load(str(b4 / "decoder_init.onnx")).graph.input] == ["trunk4"]
    assert "own copy of the encoder's last 4 blocks and head" in render(manifest, {})

    eng = Engine(str(b4), provider="cpu")
    batch = np.stack([eng.preprocess.load(SAMPLES / n)[1] for n in TOY_CAPTIONS])
    named = eng.encode_named(batch)
    assert not np.allclose(named["trunk"], named["trunk4"])  # same shape, different layers
    want = model.greedy(torch.from_numpy(named["trunk4"]), eng.max_len, eng.start, eng.end,
                        banned=(eng.pad, eng.start, eng.unk))
    assert [c.words for c in eng.caption_arrays(batch, beam=1)] == [vocab.decode(w.tolist()) for w in want]
    rebuilt, _, _ = decoder_from_bundle(b4)
    for k, v in model.state_dict().items():
        assert torch.allclose(v, rebuilt.state_dict()[k], atol=1e-6), k

    b1 = _with_gate(export_run(top_run, tmp_path / "top1", "toy-top"), default_bundle)
    assert open_bundle(b1).features_key == open_bundle(b4).features_key
    # the one-block model's encoder lacks "trunk4": that model's pass cannot caption with the deeper top ...
    d = Describer(str(b1), others=[open_bundle(b4)], fixed=False)
    assert sorted(d.engines) == ["toy-top", "toy-top4"] and d.decodable == {"toy-top"}
    pictures = [d.primary.preprocess.load(SAMPLES / n)[0] for n in TOY_CAPTIONS]
    assert all(x.model == "toy-top" and x.caption is not None for x in d.describe_images(pictures))
    # ... while the deeper top's encoder gives both trunks, so its pass serves both models
    d = Describer(str(b4), others=[open_bundle(b1)], fixed=False)
    assert d.decodable == {"toy-top", "toy-top4"}
    assert all(x.caption is not None and x.caption.words for x in d.describe_images(pictures))

    # shrunk, it keeps both trunks and still compares as seeing the same features
    shrink_bundle(b4, tmp_path / "small4")
    small = open_bundle(tmp_path / "small4")
    assert small.manifest["encoder"]["outputs"] == manifest["encoder"]["outputs"]
    shrink_bundle(b1)
    assert open_bundle(b1).features_key == small.features_key != open_bundle(b4).features_key
    assert all(c.words for c in Engine(str(tmp_path / "small4"), provider="cpu").caption_arrays(batch, beam=3))
