"""The engine's faster decoding gives the very words of the plain path, and a shrunk bundle (float16
encoder, int8 decoder) loads in the same app, smaller, with word probabilities close to float32."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from conftest import SAMPLES

from capdesk.model.beam import beam_search
from capdesk.model.decoders import ArrayDecoder
from capdesk.model.engine import Engine

NAMES = ("astronaut.png", "chelsea.png", "coffee.png", "page.png", "rocket.jpg")


def plain_captions(engine: Engine, batch: np.ndarray, beam: int) -> list[tuple[list[str], float]]:
    """Decoding as it was first written: default session options, features gathered at every word."""
    import onnxruntime as ort

    def sess(fn):
        return ort.InferenceSession(engine.bundle.read_verified(fn), providers=["CPUExecutionProvider"])

    enc, init, step_s = sess("encoder.onnx"), sess("decoder_init.onnx"), sess("decoder_step.onnx")
    named = dict(zip([o.name for o in enc.get_outputs()], enc.run(None, {"image": batch})))
    source = init.get_inputs()[0].name  # "features", or "trunk" for a decoder that tunes the encoder's top
    h0, c0, proj, *memory = init.run(None, {source: named[source]})
    feats = memory[0] if memory else named[source]

    def step(words, h, c, rows):
        return step_s.run(None, {"word": words, "h": h, "c": c, "features": feats[rows], "projected": proj[rows]})

    hyps = beam_search(ArrayDecoder(lambda _: (h0, c0), step), h0, beam, engine.max_len, engine.start, engine.end,
                       engine.length_alpha, engine.block_ngram, banned=(engine.pad, engine.start, engine.unk))
    return [([engine.vocab[i] for i in hy.ids], float(sum(hy.logprobs))) for hy in hyps]


@pytest.fixture(scope="module")
def float32_bundle(default_bundle, tmp_path_factory):
    """The default model with float32 decoder graphs rebuilt from its stored weights: the reference that
    the fast path and shrinking are compared with (the shipped bundle is itself shrunk)."""
    pytest.importorskip("torch", reason="rebuilding float32 graphs needs the train extra (torch)")
    pytest.importorskip("onnx", reason="rebuilding float32 graphs needs the train extra (onnx)")
    from training.decoders import decoder_from_bundle
    from training.export import export_decoder, write_manifest

    out = tmp_path_factory.mktemp("f32") / "everyday-f32"
    shutil.copytree(default_bundle, out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    model, _, _ = decoder_from_bundle(default_bundle)
    export_decoder(model, out, manifest["encoder"]["grid"])
    manifest.pop("weights", None)
    write_manifest(out, manifest)
    return out


@pytest.fixture(scope="module")
def f32_engine(float32_bundle) -> Engine:
    return Engine(str(float32_bundle), provider="cpu", beam=3)


@pytest.fixture(scope="module")
def sample_batch(engine) -> np.ndarray:
    return np.stack([engine.preprocess.load(SAMPLES / n)[1] for n in NAMES])


@pytest.mark.parametrize("beam", [1, 3, 5])
@pytest.mark.slow  # 4 s measured on two busy cores
def test_faster_path_gives_the_same_words_as_before(f32_engine, sample_batch, beam):
    # On float32 graphs: an int8 decoder quantises its activations with one scale per call, so its
    # log-probabilities move a little with the rows decoded together (up to 0.11 on these samples).
    engine = f32_engine
    want = plain_captions(engine, sample_batch, beam)
    batched = engine.caption_arrays(sample_batch, beam)
    single = [engine.caption_arrays(sample_batch[i:i + 1], beam)[0] for i in range(len(NAMES))]
    for (words, lp), b, s in zip(want, batched, single):
        assert b.words == s.words == words
        assert b.logprob == pytest.approx(lp, abs=1e-3) and s.logprob == pytest.approx(lp, abs=1e-3)


def test_decoder_runs_on_one_thread_and_the_encoder_on_those_asked(default_bundle):
    e = Engine(str(default_bundle), provider="cpu", threads=2)
    assert e.encoder.get_session_options().intra_op_num_threads == 2
    assert e.decoder.step_graph.get_session_options().intra_op_num_threads == 1
    assert e.decoder.init_graph.get_session_options().intra_op_num_threads == 1


@pytest.fixture(scope="module")
def shrunk_bundle(float32_bundle, tmp_path_factory):
    from training.shrink import shrink_bundle

    out = tmp_path_factory.mktemp("shrink") / "everyday-small"
    shrink_bundle(float32_bundle, out)
    return out


@pytest.mark.slow  # 3 s measured on two busy cores
def test_shrunk_bundle_is_small_and_keeps_the_contract(float32_bundle, shrunk_bundle):
    import onnxruntime as ort

    from capdesk.model.bundle import open_bundle
    from training.shrink import WEIGHTS, model_bytes

    m = json.loads((shrunk_bundle / "manifest.json").read_text())
    assert m["weights"]["kind"] == WEIGHTS
    # under half the size, as the command promises
    assert model_bytes(m) <= 0.5 * model_bytes(json.loads((float32_bundle / "manifest.json").read_text())), \
        model_bytes(m)
    assert open_bundle(shrunk_bundle).verify() == []
    for fn in ("encoder.onnx", "decoder_init.onnx", "decoder_step.onnx"):
        old = ort.InferenceSession(str(float32_bundle / fn), providers=["CPUExecutionProvider"])
        new = ort.InferenceSession(str(shrunk_bundle / fn), providers=["CPUExecutionProvider"])
        for a, b in ((old.get_inputs(), new.get_inputs()), (old.get_outputs(), new.get_outputs())):
            assert [(x.name, x.type) for x in a] == [(x.name, x.type) for x in b]
    # The original is untouched.
    assert "weights" not in json.loads((float32_bundle / "manifest.json").read_text())


@pytest.mark.slow  # 3 s measured on two busy cores
def test_shrunk_words_stay_close_to_float32(f32_engine, shrunk_bundle, sample_batch):
    """The stated tolerance: at the first word, each word's probability within 0.01 of float32's
    and the likeliest word the same; every sample still gets a sentence."""
    small = Engine(str(shrunk_bundle), provider="cpu")
    probs = []
    for e in (f32_engine, small):
        h, c, p, f = e.decoder.run_init(e.caption_input(sample_batch))
        words = np.full(len(f), e.start, np.int64)
        logp = e.decoder.step_graph.run(None, {"word": words, "h": h, "c": c, "features": f, "projected": p})[0]
        probs.append(np.exp(logp.astype(np.float64)))
    assert np.abs(probs[0] - probs[1]).max() < 0.01
    assert (probs[0].argmax(1) == probs[1].argmax(1)).all()
    for cap in small.caption_arrays(sample_batch, 3):
        assert cap.words and cap.text.endswith(".")


@pytest.mark.slow  # 2.0 s measured on two busy cores
def test_shrinking_twice_changes_nothing(shrunk_bundle, tmp_path):
    from training.shrink import shrink_bundle

    again = tmp_path / "again"
    shrink_bundle(shrunk_bundle, again)
    for fn in ("encoder.onnx", "decoder_init.onnx", "decoder_step.onnx", "manifest.json"):
        assert (again / fn).read_bytes() == (shrunk_bundle / fn).read_bytes()


def test_restoring_the_shipped_encoder_ships_it_byte_for_byte(default_bundle, tmp_path):
    """A new machine re-exports with the shipped encoder, not one exported again (whose weights differ
    in the last bit, so the app would no longer compare the models as seeing the same features)."""
    onnx = pytest.importorskip("onnx")
    from capdesk.model.bundle import open_bundle
    from training.shrink import float16_storage, main

    assert main([str(default_bundle), "--restore-encoder", str(tmp_path / "cache")]) == 0
    manifest = json.loads((default_bundle / "manifest.json").read_text(encoding="utf-8"))
    dst = tmp_path / "cache" / "encoders" / f"lite0-{manifest['encoder']['input_size']}.onnx"
    restored = onnx.load(str(dst))
    assert not any(n.name.endswith("__to_f32") for n in restored.graph.node)
    assert not any(i.data_type == onnx.TensorProto.FLOAT16 for i in restored.graph.initializer)
    shipped = (default_bundle / "encoder.onnx").read_bytes()
    # the plain graph: its features are the shipped ones (the key models are compared by) ...
    assert not any(o.name.startswith("trunk") for o in restored.graph.output)
    assert hashlib.sha256(float16_storage(restored).SerializeToString()).hexdigest() == \
        open_bundle(default_bundle).features_key
    assert json.loads(dst.with_suffix(".json").read_text()) == {"grid": manifest["encoder"]["grid"],
                                                                "dim": manifest["encoder"]["feature_dim"]}
    # ... and the graph the next export ships, trunk output and all, is the shipped one byte for byte
    from training.train import TrainConfig, encoder_onnx

    trunk = "trunk" in manifest["encoder"].get("outputs", [])
    blocks = int(manifest["decoder"].get("encoder_top_blocks", 1))
    path, _, _, _ = encoder_onnx(TrainConfig(cache=str(tmp_path / "cache"), encoder_top_blocks=blocks), trunk=trunk)
    assert float16_storage(onnx.load(str(path))).SerializeToString() == shipped
    assert main([str(tmp_path / "nothing"), "--restore-encoder", str(tmp_path / "cache")]) == 2


def test_shrink_refuses_a_damaged_bundle(default_bundle, tmp_path):
    pytest.importorskip("onnx")
    from training.shrink import ShrinkError, shrink_bundle

    bad = tmp_path / "bad"
    shutil.copytree(default_bundle, bad)
    with open(bad / "decoder_step.onnx", "r+b") as fh:
        fh.seek(1000)
        fh.write(b"\0" * 16)
    with pytest.raises(ShrinkError, match="not a sound bundle"):
        shrink_bundle(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # 3 s measured on two busy cores
def test_pytorch_rebuilds_the_decoder_from_a_shrunk_bundle(float32_bundle, shrunk_bundle):
    torch = pytest.importorskip("torch")
    from training.decoders import decoder_from_bundle
    from training.shrink import rounding_bound

    full, _, _ = decoder_from_bundle(float32_bundle)
    small, _, _ = decoder_from_bundle(shrunk_bundle)
    for name, w in full.state_dict().items():
        # int8 per channel: each weight within half a quantisation step of its row's range
        err = (w - small.state_dict()[name]).abs().max().item()
        assert err <= rounding_bound(w.abs().max().item()), name
    assert isinstance(small, torch.nn.Module)


@pytest.mark.slow  # 4 s measured on two busy cores
def test_capdesk_train_shrink_command(float32_bundle, tmp_path, capsys):
    from training.cli import main
    from training.shrink import model_bytes

    out = tmp_path / "small"
    assert main(["shrink", str(float32_bundle), "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["bundle"] == str(out) and said["model_mb"] <= 0.5 * model_bytes(
        json.loads((float32_bundle / "manifest.json").read_text())) / 1e6
    with pytest.raises(SystemExit):
        main(["shrink", str(tmp_path / "nothing-here")])
    assert "not a model bundle folder" in capsys.readouterr().err
