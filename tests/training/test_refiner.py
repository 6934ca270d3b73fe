"""The decoder's optional refiner: self-attention over the grid before the LSTM, exported as a fourth
output of ``decoder_init.onnx`` that the app passes to the step graph."""

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


@pytest.fixture(scope="module")
def refined_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("refined")
    data = write_caption_folder(tmp / "pictures")
    cmd = [sys.executable, "-m", "training", "fit", str(data), "--out", str(tmp / "run"), "--cache", str(tmp / "cache"),
           *SMALL, "--refine-layers", "1", "--refine-dim", "32", "--epochs", "4", "--lr", "3e-3", "--keep-epochs"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return tmp / "run"


def test_refiner_mixes_locations_and_changes_width():
    import torch

    from training.model import Decoder, DecoderConfig

    dec = Decoder(DecoderConfig(50, feature_dim=40, embed_dim=16, hidden_dim=16, attention_dim=16,
                                refine_layers=1, refine_dim=24)).eval()
    feats = torch.randn(2, 9, 40)
    memory = dec.refine(feats)
    assert memory.shape == (2, 9, 24)
    # self-attention: changing one location changes what every other location carries
    other = feats.clone()
    other[:, 0] += 5.0
    assert (dec.refine(other)[:, 1:] - memory[:, 1:]).abs().max() > 1e-4
    with pytest.raises(ValueError, match="multiple of 8"):
        Decoder(DecoderConfig(50, feature_dim=40, refine_layers=1, refine_dim=30))
    plain = Decoder(DecoderConfig(50, feature_dim=40, embed_dim=16, hidden_dim=16, attention_dim=16)).eval()
    assert plain.refine(feats) is feats


@pytest.mark.slow  # 28 s measured on two busy cores
def test_refined_bundle_decodes_like_pytorch_and_rebuilds(tmp_path, refined_run):
    import onnx
    import torch

    from capdesk.model.engine import Engine
    from training.decoders import decoder_from_bundle, load_checkpoint
    from training.export import export_run
    from training.shrink import shrink_bundle

    assert sorted(p.name for p in refined_run.glob("checkpoint_epoch*.pt")) == [
        f"checkpoint_epoch{i}.pt" for i in range(1, 5)]
    bundle = export_run(refined_run, tmp_path / "bundle", "toy-refined")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["decoder"]["refine_layers"] == 1
    outputs = [o.name for o in onnx.load(str(bundle / "decoder_init.onnx")).graph.output]
    assert outputs == ["h", "c", "projected", "memory"]
    from training.card import render

    assert "1 self-attention layer(s)" in render(manifest, {})

    model, vocab, _ = load_checkpoint(refined_run / "checkpoint_best.pt")
    eng = Engine(str(bundle), provider="cpu")
    batch = np.stack([eng.preprocess.load(SAMPLES / n)[1] for n in TOY_CAPTIONS])
    feats, _ = eng.encode(batch)
    want = model.greedy(torch.from_numpy(feats), eng.max_len, eng.start, eng.end, banned=(eng.pad, eng.start, eng.unk))
    got = eng.decode(feats, beam=1)
    assert [c.words for c in got] == [vocab.decode(w.tolist()) for w in want]
    assert all(c.words for c in eng.decode(feats, beam=3))

    rebuilt, _, _ = decoder_from_bundle(bundle)
    for k, v in model.state_dict().items():
        assert torch.equal(v, rebuilt.state_dict()[k]), k
    shrink_bundle(bundle, tmp_path / "small")
    small = Engine(str(tmp_path / "small"), provider="cpu")
    assert all(c.words for c in small.decode(feats, beam=3))


@pytest.mark.slow  # 9 s measured on two busy cores
def test_ensembles_refuse_refined_members(refined_run):
    from training.decoders import Ensemble, load_checkpoint

    model, _, _ = load_checkpoint(refined_run / "checkpoint_best.pt")
    with pytest.raises(ValueError, match="refiner"):
        Ensemble([model, model])
