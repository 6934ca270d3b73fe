"""Decoder kinds: a manifest names its decoder's kind, the beam search speaks to any kind through the
``Decoder`` protocol, and a kind this CapDesk cannot run is refused in one line naming the bundle.

The toy kind below is pure numpy and keeps its state in one integer array [R, 2] (the words said so
far and the first of them), nothing like the LSTM's (h, c): the real beam search runs it unchanged.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from capdesk.model import decoders
from capdesk.model.beam import beam_finalists, beam_search
from capdesk.model.bundle import BundleError, discover, open_bundle
from capdesk.model.engine import Engine

TOY = "toy-first-word"
TINY = math.log(1e-12)


class FirstWordDecoder:
    """Each picture's features are three words (a, b, m). The first word is a (0.6) or b (0.4). After a:
    m (0.6) or the end (0.4), then a again (0.6) or the end (0.4). After b: m (0.95) or the end
    (0.05), then the end for sure. Past that, the end. Greedy says "a m a"; beam 2 finds "b m" (0.38)
    and keeps "a m a" (0.216) as the runner-up, but only when each beam's state follows it: the state
    of a beam is the first word it said."""

    def __init__(self, end: int, vocab_size: int, input_name: str = "features") -> None:
        self.end, self.V, self.input_name = end, vocab_size, input_name
        self.reorders = 0

    def begin(self, features: np.ndarray) -> np.ndarray:
        self.words = np.asarray(features).reshape(len(features), -1)[:, :3].astype(np.int64)
        return np.zeros((len(features), 2), np.int64)  # (words said, first word)

    def step(self, words: np.ndarray, state: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        said, first = state[:, 0], state[:, 1]
        first = np.where(said == 1, words, first)  # the word fed now is the first one said
        logp = np.full((len(words), self.V), TINY)
        for r, (n, pos, f) in enumerate(zip(rows, said, first)):
            a, b, m = self.words[n]
            table = ({a: 0.6, b: 0.4} if pos == 0 else
                     {m: 0.6, self.end: 0.4} if pos == 1 and f == a else
                     {m: 0.95, self.end: 0.05} if pos == 1 else
                     {a: 0.6, self.end: 0.4} if pos == 2 and f == a else
                     {self.end: 1.0})
            for w, p in table.items():
                logp[r, w] = math.log(p)
        alpha = np.eye(4, dtype=np.float32)[np.minimum(said, 3)]
        return logp, np.stack([said + 1, first], 1), alpha

    def reorder(self, state: np.ndarray, rows: np.ndarray) -> np.ndarray:
        self.reorders += 1
        return state[rows]


@pytest.fixture
def toy_kind():
    built: list[FirstWordDecoder] = []

    def build(manifest: dict, load) -> FirstWordDecoder:
        specials = manifest["vocab"]["specials"]
        built.append(FirstWordDecoder(specials["<end>"], manifest["vocab"]["size"]))
        return built[-1]

    decoders.register(TOY, (), build)
    yield built
    decoders.unregister(TOY)


def test_the_beam_search_runs_a_decoder_kind_it_has_never_seen(toy_kind):
    START, END = 0, 1
    manifest = {"decoder": {"kind": TOY}, "vocab": {"size": 6, "specials": {"<end>": END}}}
    dec = decoders.build(manifest, lambda fn: pytest.fail(f"the toy kind reads no graph ({fn})"))
    assert dec is toy_kind[0]
    pictures = np.array([[2, 4, 3], [4, 2, 5]])  # the second swaps a and b and says 5 in the middle
    pools = beam_finalists(dec, pictures, 2, 6, START, END, 0.0, banned=(START,))
    assert [[h.ids for h in pool] for pool in pools] == [[[4, 3], [2, 3, 2]], [[2, 5], [4, 5, 4]]]
    for pool in pools:
        assert [h.score for h in pool] == pytest.approx([math.log(0.38), math.log(0.216)])
        assert np.allclose(np.exp(pool[0].logprobs), [0.4, 0.95, 1.0])
        assert pool[0].alphas.argmax(1).tolist() == [0, 1]  # the attention of the step that chose each word
        assert all(h.finished for h in pool)
    (greedy,) = beam_search(dec, pictures[:1], 1, 6, START, END, 0.0, banned=(START,))
    assert greedy.ids == [2, 3, 2]
    assert dec.reorders > 0


def test_a_manifest_without_a_kind_is_the_lstm_attention_kind(default_bundle, engine):
    m = json.loads((default_bundle / "manifest.json").read_text(encoding="utf-8"))
    assert "kind" not in m["decoder"]  # the shipped bundles predate the field and stay as they are
    assert decoders.kind_of(m).name == decoders.LSTM_ATTENTION == decoders.DEFAULT_KIND
    assert isinstance(engine.decoder, decoders.LstmAttention)
    named = {**m, "decoder": {**m["decoder"], "kind": "lstm-attention"}}
    assert decoders.kind_of(named).graphs == ("decoder_init.onnx", "decoder_step.onnx")


@pytest.fixture
def bundle_copy(tmp_path, default_bundle):
    dst = tmp_path / "models" / "copy"
    shutil.copytree(default_bundle, dst)
    return dst


def _set_kind(bundle, kind) -> None:
    mf = bundle / "manifest.json"
    m = json.loads(mf.read_text(encoding="utf-8"))
    m["decoder"]["kind"] = kind
    mf.write_text(json.dumps(m), encoding="utf-8")


def test_an_engine_decodes_with_the_kind_its_manifest_names(bundle_copy, toy_kind):
    _set_kind(bundle_copy, TOY)
    eng = Engine(str(bundle_copy), provider="cpu")
    assert eng.decoder is toy_kind[0] and eng.decoder_input_name == "features"
    a, b, m = (eng.vocab.index(w) for w in ("dog", "cat", "runs"))
    feats = np.zeros((1, 49, 4), np.float32)
    feats[0, 0, :3] = a, b, m
    (cap,) = eng.decode(feats, beam=2)
    # The bundle's length normalisation and n-gram rule apply to any kind: "cat runs" wins.
    assert cap.words == ["cat", "runs"] and cap.finalists == ["dog runs dog"]


@pytest.mark.parametrize("kind", ["transformer-9000", 7])
def test_a_kind_this_capdesk_cannot_run_is_refused_in_one_line(bundle_copy, kind, monkeypatch):
    _set_kind(bundle_copy, kind)
    with pytest.raises(BundleError) as err:
        open_bundle(bundle_copy)
    msg = str(err.value)
    assert "\n" not in msg and str(bundle_copy) in msg
    if isinstance(kind, str):
        assert msg.endswith("manifest 'decoder.kind' is 'transformer-9000', a decoder this CapDesk cannot run "
                            "(it runs: lstm-attention)")
    else:
        assert msg.endswith("manifest 'decoder.kind' must be text")
    with pytest.raises(BundleError, match="copy: manifest 'decoder.kind'"):
        Engine(str(bundle_copy), provider="cpu")
    monkeypatch.setenv("CAPDESK_MODELS", str(bundle_copy.parent))
    found, problems = discover()  # reported once; the other bundles are still found
    assert [p for p in problems if str(bundle_copy) in p] == [msg] and "everyday" in {b.name for b in found}


def test_a_kind_lists_its_own_graphs(bundle_copy, toy_kind):
    """The decoder's two graphs are required of the LSTM kind only: a kind lists the graphs it needs."""
    mf = bundle_copy / "manifest.json"
    m = json.loads(mf.read_text(encoding="utf-8"))
    del m["files"]["decoder_step.onnx"]
    mf.write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(BundleError, match="manifest lists no decoder_step.onnx"):
        open_bundle(bundle_copy)
    _set_kind(bundle_copy, TOY)
    assert open_bundle(bundle_copy).manifest["decoder"]["kind"] == TOY
