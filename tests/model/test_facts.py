"""Saying only what is true: the object words a caption names (CHAIR), the beam's grounding penalty, the
trust score, the rule that turns it into fact, "Probably" or withheld, and the shipped model's concept
head and trust as the describer uses them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import ROOT, SHARED_DATA, needs_shared_data, needs_torch
from evidence_helpers import said
from test_beam import END, START, TREE, A, B, C, make_step, tree_decoder

from capdesk.describe.grounding import bias_matrix, token_concepts
from capdesk.describe.objects import mentions
from capdesk.describe.settings import DEFAULT as POLICY
from capdesk.describe.trust import FEATURES, Evidence, TrustModel, features, fit
from capdesk.folders.reading import describe_paths
from capdesk.model.beam import beam_finalists
from capdesk.status import SaidAs

SAMPLES = ROOT / "resources" / "samples"


@pytest.mark.parametrize("text, objects", [
    ("A man and his dog run on the grass.", ["person", "dog"]),
    ("A hot dog on a plate.", ["hot dog"]),
    ("Two teddy bears on a bed.", ["teddy bear", "bed"]),
    ("A baseball player swings a bat.", ["person", "baseball bat"]),
    ("Kids kick a soccer ball.", ["person", "sports ball"]),
    ("A man in an orange shirt.", ["person"]),  # a colour, not the fruit
    ("Dogs and cats and more dogs.", ["dog", "cat"]),
    ("A police officer sitting on a motorcycle.", ["person", "motorcycle"]),
    ("A red motorbike parked in a garage.", ["motorcycle"]),
    ("Snow covered mountains under a blue sky.", []),
])
def test_the_objects_a_caption_names(text, objects):
    assert mentions(text) == objects


def test_chair_counts_objects_no_reference_names():
    from training.chair import chair, hallucinated

    refs = {"a": ["A dog runs on the beach.", "A brown dog in the sand."],
            "b": ["Two men ride bikes.", "Cyclists on a road."]}
    hyps = {"a": "A dog and a man on the beach with a frisbee.", "b": "Two people riding bicycles."}
    assert hallucinated(hyps["a"], refs["a"]) == ["person", "frisbee"]
    assert hallucinated(hyps["b"], refs["b"]) == []
    m = chair(hyps, refs)
    assert m["CHAIRs"] == pytest.approx(0.5)  # one caption of two names something absent
    assert m["CHAIRi"] == pytest.approx(2 / 5)  # dog, person, frisbee; person, bicycle
    assert m["object_mentions"] == 5


def test_grounding_costs_only_unsupported_object_words():
    vocab = ["<pad>", "a", "dog", "cat", "grass", "dogs"]
    words = ["dog", "cat", "grass"]
    tokens = token_concepts(vocab, words)
    assert tokens.tolist() == [-1, -1, 0, 1, -1, 0]  # "grass" names no object; "dogs" is a dog
    probs = np.array([[0.9, 0.05, 0.9]])
    bias = bias_matrix(tokens, probs, alpha=2.0, tau=0.5)
    assert bias[0, 2] == 0.0 and bias[0, 5] == 0.0  # supported: free
    assert bias[0, 3] == pytest.approx(2.0 * math.log(0.05 / 0.5))
    assert bias[0, [0, 1, 4]].tolist() == [0.0, 0.0, 0.0]
    assert not bias_matrix(tokens, probs, alpha=0.0, tau=0.5).any()


def test_a_bias_changes_the_chosen_caption_but_not_its_recorded_probabilities():
    step, _ = make_step([TREE])
    zeros = np.zeros((1, 1))
    (plain,) = beam_finalists(tree_decoder(step), zeros, 2, 5, START, END, 0.0, banned=(START,))
    assert plain[0].ids == [B, C]  # "B C": the best caption of the tree
    bias = np.zeros((1, 6))
    bias[0, B] = -5.0  # B is not supported by the picture
    (steered,) = beam_finalists(tree_decoder(step), zeros, 2, 5, START, END, 0.0, banned=(START,), bias=bias)
    assert steered[0].ids[0] == A
    assert np.allclose(np.exp(steered[0].logprobs[:1]), [0.6])  # the model's own probability, unbiased


def test_trust_is_fitted_and_read_back_from_a_manifest_section():
    rng = np.random.default_rng(0)
    good = rng.normal(1.0, 0.5, (200, len(FEATURES)))
    bad = rng.normal(-1.0, 0.5, (200, len(FEATURES)))
    section = fit(np.vstack([good, bad]), np.r_[np.ones(200), np.zeros(200)])
    model = TrustModel.from_manifest(json.loads(json.dumps(section)))
    assert model is not None
    assert model.score_features(np.ones(len(FEATURES))) > 0.95
    assert model.score_features(-np.ones(len(FEATURES))) < 0.05
    assert TrustModel.from_manifest({**section, "features": ["something", "else"]}) is None
    assert TrustModel.from_manifest(None) is None


def test_evidence_reads_unsupported_objects_tags_and_finalists():
    sure = features(Evidence(["a", "dog", "runs"], 0.5, {"dog": 0.95}, ["a dog runs fast"], [("dog", 0.8)], 0.5))
    unsure = features(Evidence(["a", "dog", "runs"], 0.5, {"dog": 0.02}, ["a cat sits"], [("tabby cat", 0.8)], 0.5))
    f = dict(zip(FEATURES, zip(sure, unsure)))
    assert f["min_support"] == (0.95, 0.02)
    assert f["finalists_agree"] == (1.0, 0.0)
    assert f["tag_support"] == (0.8, 0.0) and f["tag_conflict"] == (0.0, 0.8)


@pytest.mark.parametrize("trust, said_as, starts", [
    (POLICY.saying.trust_fact + 0.01, SaidAs.FACT, "A dog"),
    ((POLICY.saying.trust_fact + POLICY.saying.trust_probably) / 2, SaidAs.PROBABLY, "Probably a dog"),
    (POLICY.saying.trust_probably - 0.01, SaidAs.WITHHELD, "May contain: a horse."),
])
def test_trust_decides_fact_probably_or_withheld(trust, said_as, starts):
    w = said("a dog runs on the grass", trust=trust, tags=[("horse", 0.8)])
    assert w.said_as is said_as
    assert w.text.startswith(starts)
    assert w.review is (said_as is not SaidAs.FACT)
    if said_as is SaidAs.WITHHELD:
        assert "dog" not in w.text and "trust" in w.reason


def test_a_low_confidence_no_longer_hedges_a_trusted_caption_but_does_without_trust():
    trusted = said("a dog runs on the grass", confidence=0.2, trust=0.99)
    assert trusted.said_as is SaidAs.FACT
    old = said("a dog runs on the grass", confidence=0.2)
    assert old.said_as is SaidAs.PROBABLY


@pytest.mark.slow  # 10 s measured on two busy cores
def test_the_shipped_model_gives_concepts_and_trust(default_bundle):
    from capdesk.describe.describer import Describer

    manifest = json.loads((default_bundle / "manifest.json").read_text())
    assert {"concepts", "grounding", "trust"} <= set(manifest)
    d = Describer(str(default_bundle))
    assert d.primary.concepts is not None and len(d.primary.concepts.words) >= 300
    assert {"dog", "cat", "person", "horse", "motorcycle"} <= set(d.primary.concepts.words)
    for res in describe_paths(d, sorted(SAMPLES.glob("*.png")) + sorted(SAMPLES.glob("*.jpg"))):
        assert res.ok, res.error
        rec = res.to_json()
        assert 0.0 <= rec["trust"] <= 1.0
        assert all(0.0 <= c["probability"] <= 1.0 and c["word"] for c in rec["concepts"])
        assert rec["review"] is (rec["said_as"] != "fact")
        if rec["said_as"] == "fact":
            assert rec["trust"] >= POLICY.saying.trust_fact


@pytest.mark.slow  # 2 s measured on two busy cores
def test_a_bundle_without_a_concept_head_describes_as_before(default_bundle, tmp_path):
    from capdesk.describe.describer import Describer
    from capdesk.model.bundle import sha256_file
    from capdesk.model.concepts import copy_without_concepts

    old = copy_without_concepts(default_bundle, tmp_path / "old", name="old")
    m = json.loads((old / "manifest.json").read_text())
    assert not {"concepts", "grounding", "trust"} & set(m) and not (old / "concepts.onnx").exists()
    assert sha256_file(old / "encoder.onnx") == m["files"]["encoder.onnx"]["sha256"]
    d = Describer(str(old), others=[])
    (res,) = list(describe_paths(d, [SAMPLES / "chelsea.png"]))
    assert res.ok and res.trust is None and res.concepts == []
    rec = res.to_json()
    assert rec["trust"] is None and rec["concepts"] == []


@needs_torch
@pytest.mark.slow  # 4 s measured on two busy cores
def test_the_exported_concept_head_gives_what_pytorch_gives(tmp_path):
    import onnxruntime as ort
    import torch

    from training import concepts as cmod

    rng = np.random.default_rng(1)
    x, xv = rng.normal(size=(64, 16)).astype(np.float32), rng.normal(size=(32, 16)).astype(np.float32)
    y = (x[:, :3] > 0).astype(np.float32)
    yv = (xv[:, :3] > 0).astype(np.float32)
    head, info = cmod.train_head(x, y, xv, yv, epochs=3, log=lambda _: None)
    section = cmod.export(head, ["dog", "cat", "red"], 4, tmp_path, {"threshold": 0.5})
    assert section["file"] == "concepts.onnx"
    assert json.loads((tmp_path / "concepts.json").read_text())["words"] == ["dog", "cat", "red"]
    feats = rng.normal(size=(5, 4, 16)).astype(np.float32)
    got = ort.InferenceSession(str(tmp_path / "concepts.onnx")).run(None, {"features": feats})[0]
    with torch.no_grad():
        want = head(torch.from_numpy(feats)).numpy()
    assert got.shape == (5, 3)
    assert np.allclose(got, want, atol=2e-3)  # the weights are stored in float16


@needs_shared_data("everyday")
@needs_torch
@pytest.mark.slow  # 37 s measured on two busy cores
def test_ground_makes_a_bundle_the_describer_uses(tmp_path, default_bundle):
    """capdesk train ground on a few photos of each split: the bundle it writes carries the concept head,
    grounding and trust, verifies, and describes with them."""
    from capdesk.describe.describer import Describer
    from capdesk.model.bundle import open_bundle
    from training import grounding, split_cache

    data = SHARED_DATA / "everyday" / "dataset_everyday.json"
    cache = tmp_path / "cache.npz"
    split_cache.build(default_bundle, data, cache, limit=48)
    study = grounding.run(default_bundle, data, cache, tmp_path / "grounded")
    assert str(study["alpha"]) in study["alphas"] and 0.0 <= study["trust"]["test_auc"] <= 1.0
    b = open_bundle(tmp_path / "grounded")
    assert b.verify() == []
    assert {"concepts", "grounding", "trust"} <= set(b.manifest)
    (res,) = list(describe_paths(Describer(str(tmp_path / "grounded"), others=[]), [SAMPLES / "astronaut.png"]))
    assert res.ok and res.trust is not None
