from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.folders.reading import describe_paths, expand_paths
from capdesk.imageio import load_image
from capdesk.model import providers
from capdesk.model.engine import Engine


def test_sample_photos_get_captions(engine):
    for name in ("chelsea.png", "coffee.png", "astronaut.png"):
        cap = engine.caption_file(SAMPLES / name)
        assert 2 <= len(cap.words) <= engine.max_len
        assert cap.text[0].isupper() and cap.text.endswith(".")
        assert 0.0 < cap.confidence <= 1.0
        assert cap.attention.shape == (len(cap.words), engine.grid[0] * engine.grid[1])
        assert np.allclose(cap.attention.sum(1), 1.0, atol=1e-3)
        assert cap.attention_map(0).shape == engine.grid


def test_cat_and_people_are_named(engine):
    # Loose checks of meaning: the everyday model knows a person when it sees one. The sample cat is a
    # studio close-up unlike its photos: out of its domain, its caption is withheld (the model's guess
    # there may be anything), and what the user hears names the cat from the ImageNet tags.
    from capdesk.describe.describer import DescribeOptions, Describer

    people = {"man", "woman", "person", "people", "girl", "boy"}
    assert people & set(engine.caption_file(SAMPLES / "astronaut.png").words)
    cat = next(describe_paths(Describer(None, provider="cpu", options=DescribeOptions(ocr="never")),
                              [SAMPLES / "chelsea.png"]))
    assert cat.in_domain is False and cat.said_as == "withheld"
    assert {"cat", "cats", "kitten"} & set(cat.description.lower().rstrip(".").replace(":", " ").split())


def test_no_word_follows_itself(engine):
    for name in ("chelsea.png", "coffee.png", "page.png", "rocket.jpg"):
        w = engine.caption_file(SAMPLES / name, beam=3).words
        assert all(a != b for a, b in zip(w, w[1:])), w


class StepSpy:
    """The decoder's step graph, recording the words fed to each call and the log-probabilities it gave."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, []

    def run(self, names, feeds):
        out = self.real.run(names, feeds)
        self.calls.append((feeds["word"].copy(), out[0].astype(np.float64)))
        return out


@pytest.mark.parametrize("beam", [1, 2, 3, 5])
def test_beam_widths(engine, beam, monkeypatch):
    """What the width changes: how many hypotheses each step carries. After the first word the
    search holds exactly the ``beam`` likeliest first words, each in a row of its own."""
    spy = StepSpy(engine.decoder.step_graph)
    monkeypatch.setattr(engine.decoder, "step_graph", spy)
    cap = engine.caption_file(SAMPLES / "rocket.jpg", beam=beam)
    assert cap.words and np.isfinite(cap.logprob)
    (words0, logp0), (words1, _) = spy.calls[0], spy.calls[1]
    assert len(words0) == len(words1) == beam  # one picture: ``beam`` rows in every call
    assert set(words0.tolist()) == {engine.start}
    first = logp0[0].copy()
    first[[engine.start, engine.pad, engine.unk, engine.end]] = -np.inf  # never said first
    assert sorted(words1.tolist()) == sorted(np.argsort(-first)[:beam].tolist())
    assert cap.words[0] in {engine.vocab[w] for w in words1.tolist()}


def test_width_one_is_greedy_decoding(engine):
    """Width 1 is greedy decoding with the same rules, written out here on the decoder graphs alone:
    the likeliest word each step, never <pad>/<start>/<unk>, no <end> first, no word after itself,
    and no word pair said twice (the manifest's block_ngram)."""
    assert engine.block_ngram == 2
    picture = engine.preprocess.load(SAMPLES / "rocket.jpg")[1][None]
    h, c, proj, feats = engine.decoder.run_init(engine.caption_input(picture))
    seq: list[int] = []
    word = np.array([engine.start], np.int64)
    for t in range(engine.max_len):
        logp, h, c, _ = engine.decoder.step_graph.run(None, {"word": word, "h": h, "c": c, "features": feats,
                                                             "projected": proj})
        lp = logp[0].astype(np.float64)
        lp[[engine.pad, engine.start, engine.unk]] = -np.inf
        if t == 0:
            lp[engine.end] = -np.inf
        if seq:
            lp[seq[-1]] = -np.inf
            lp[[b for a, b in zip(seq, seq[1:]) if a == seq[-1]]] = -np.inf
        w = int(lp.argmax())
        if w == engine.end:
            break
        seq.append(w)
        word = np.array([w], np.int64)
    assert engine.caption_arrays(engine.preprocess.load(SAMPLES / "rocket.jpg")[1][None], beam=1)[0].words == [
        engine.vocab[w] for w in seq]


@pytest.fixture(scope="module")
def describer(default_bundle):
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(str(default_bundle), provider="cpu", beam=3, options=DescribeOptions(ocr="never"))


def test_batch_equals_one_by_one(engine, describer):
    # Files go through the one pipeline (the describer) in batches; each caption is what the engine
    # gives the picture alone, steered by the picture's own concepts (grounding) exactly as in a batch.
    from capdesk.describe.grounding import bias_matrix, token_concepts

    paths = [SAMPLES / n for n in ("chelsea.png", "coffee.png", "rocket.jpg", "astronaut.png", "page.png")]
    batched = [d.caption.text for d in describe_paths(describer, paths, batch_size=4)]
    g = engine.concepts.grounding
    tokens = token_concepts(engine.vocab, engine.concepts.words)
    single = []
    for p in paths:
        named = engine.encode_named(engine.preprocess.to_array(load_image(p))[None])
        bias = bias_matrix(tokens, engine.concepts.probabilities(named["features"]), g.alpha, g.tau)
        single.append(engine.decode(engine.decoder_input(named), 3, bias=bias)[0].text)
    assert batched == single


def test_bad_files_do_not_stop_the_batch(describer, mixed_folder):
    paths = [p for p, _ in expand_paths([mixed_folder])]
    results = list(describe_paths(describer, paths, batch_size=3))
    by_name = {r.path.rsplit("/", 1)[-1]: r for r in results}
    assert by_name["chelsea.png"].ok and by_name["Café ☕ überraschung.png"].ok and by_name["rocket.jpg"].ok
    assert "empty file" in by_name["empty.jpg"].error
    assert "not an image" in by_name["notes.png"].error
    assert "too large" in by_name["huge.png"].error
    assert by_name["truncated.jpg"].error
    assert len(results) == len(paths)


def test_provider_preference_and_override():
    offered = ["CoreMLExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert providers.choose(None, offered) == ["CUDAExecutionProvider", "CoreMLExecutionProvider",
                                               "CPUExecutionProvider"]
    assert providers.choose("cpu", offered) == ["CPUExecutionProvider"]
    assert providers.choose("DmlExecutionProvider", ["DmlExecutionProvider", "CPUExecutionProvider"])[0] == \
        "DmlExecutionProvider"
    with pytest.raises(providers.ProviderError, match="not available"):
        providers.choose("cuda", ["CPUExecutionProvider"])


def test_engine_reports_actual_provider(default_bundle):
    eng = Engine(str(default_bundle), provider="cpu")
    assert eng.provider == "CPUExecutionProvider"


def test_expand_paths_skips_hidden_and_survives_symlink_loops(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "a.png")
    Image.new("RGB", (4, 4)).save(tmp_path / "sub" / "b.jpg")
    Image.new("RGB", (4, 4)).save(tmp_path / ".hidden" / "c.png")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path, target_is_directory=True)
    flat = [p for p, _ in expand_paths([tmp_path])]
    deep = [p for p, _ in expand_paths([tmp_path], recursive=True)]
    assert [p.rsplit("/", 1)[-1] for p in flat] == ["a.png"]
    assert sorted(p.rsplit("/", 1)[-1] for p in deep) == ["a.png", "b.jpg"]


def test_a_quantised_decoder_runs_on_the_cpu_beside_a_gpu(default_bundle, monkeypatch):
    """With CUDA chosen, the shrunk bundle's int8 decoder steps are still given to the CPU alone (CUDA has
    no kernels for them: ONNX Runtime would copy between GPU and CPU at every step); the encoder gets
    CUDA. No GPU here: the chain is faked, and the sessions are made on the CPU."""
    import capdesk.model.engine as engine_mod

    asked: list[list[str]] = []
    real = engine_mod.load_graph

    def recording(data, opts, chain, key=None):
        asked.append(list(chain))
        return real(data, opts, ["CPUExecutionProvider"], key)

    monkeypatch.setattr(engine_mod.prov, "choose", lambda requested=None, offered=None: [
        "CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(engine_mod, "load_graph", recording)
    eng = Engine(str(default_bundle))
    assert eng.per_picture, "the shipped bundle is shrunk (int8 decoder)"
    assert eng.caption_file(SAMPLES / "chelsea.png").text  # the graphs are loaded when first run
    assert eng.decoder_providers == ["CPUExecutionProvider"]
    assert ["CUDAExecutionProvider", "CPUExecutionProvider"] in asked  # the encoder
    assert ["CPUExecutionProvider"] in asked  # the decoder's graphs


def test_cuda_libraries_are_loaded_once_and_never_stop_the_cpu(monkeypatch, caplog):
    """Choosing CUDA loads its libraries from pip's nvidia wheels (onnxruntime's ``preload_dlls``), once;
    libraries that fail to load leave a warning, and the CPU still runs. No GPU here: the onnxruntime
    offering CUDA is faked."""
    import onnxruntime as ort

    calls = []

    def failing():
        calls.append(1)
        raise OSError("libcudnn.so.9: cannot open shared object file")

    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(ort, "preload_dlls", failing, raising=False)
    providers.load_cuda_libraries.cache_clear()
    offered = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    with caplog.at_level("WARNING", logger="capdesk"):
        assert providers.choose(None, offered) == offered
        assert providers.choose("cuda", offered) == offered
    assert calls == [1]
    assert "libcudnn.so.9" in caplog.text and "the CPU runs the models" in caplog.text
    assert providers.choose("cpu", offered) == ["CPUExecutionProvider"] and calls == [1]
    providers.load_cuda_libraries.cache_clear()  # the real onnxruntime for the tests after
