"""The fact check (capdesk.describe.fact_check): a caption said as fact must also look, to the other witnesses,
like one a careful reader accepts; it only ever takes a fact away. The shipped everyday bundle carries one
fitted to val alt texts read by eye (training/studies/val_by_eye.csv)."""

from __future__ import annotations

import csv
import json

import numpy as np
from conftest import ROOT

from capdesk.describe import policy
from capdesk.describe.detector import Detection
from capdesk.describe.evidence import Finalist, PictureEvidence
from capdesk.describe.fact_check import FEATURES, FactCheck, features
from capdesk.status import SaidAs

BUNDLE = ROOT / "models" / "everyday"
VOCAB = frozenset(json.loads((BUNDLE / "concepts.json").read_text(encoding="utf-8"))["words"])


def _shipped() -> FactCheck:
    m = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))
    check = FactCheck.from_manifest(m.get("fact_check"), sorted(VOCAB))
    assert check is not None, "the everyday bundle ships a fact check"
    return check


def _dogs(caption: str, dogs: int, running: float = 0.9) -> PictureEvidence:
    boxes = [Detection("dog", 0.95, (10 + 100 * i, 50, 100 + 100 * i, 150)) for i in range(dogs)]
    return PictureEvidence(finalists=[Finalist(caption, 0.5, 0.95), Finalist(caption, 0.45, 0.94),
                                      Finalist(caption.replace("running", "playing"), 0.4, 0.93)],
                           concepts={"dog": 0.98, "running": running, "grass": 0.9, "dogs": 0.6 if dogs > 1 else 0.1},
                           detections=boxes, detector=True, size=(400, 300), in_domain=True, ratio=0.6,
                           has_trust=True)


def test_the_shipped_check_reads_its_own_features_and_was_chosen_on_val():
    m = json.loads((BUNDLE / "manifest.json").read_text(encoding="utf-8"))["fact_check"]
    assert m["features"] == list(FEATURES) and 0.5 <= m["threshold"] < 1
    assert "val" in m["fitted_on"] and m["cross_validated"]["facts_main"] > m["cross_validated"]["facts_main_before"]


def test_a_count_the_detector_contradicts_lowers_the_check():
    check = _shipped()
    agrees = check.probability(_dogs("Two dogs are running on the grass.", 2), "Two dogs are running on the grass.")
    disagrees = check.probability(_dogs("A dog is running on the grass.", 2), "A dog is running on the grass.")
    assert features(_dogs("A dog is running on the grass.", 2), "A dog is running on the grass.",
                    VOCAB)[FEATURES.index("count_disagrees")] == 1.0
    assert disagrees < agrees


def test_the_check_only_takes_a_fact_away_never_makes_one():
    never = FactCheck(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), np.zeros(len(FEATURES)), -50.0, 0.5, VOCAB)
    always = FactCheck(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), np.zeros(len(FEATURES)), 50.0, 0.5, VOCAB)
    # The check reads captions said whole: scenes with no person, animal or vehicle to confirm by the detector.
    ev = _dogs("A stream in the woods.", 0)
    assert policy.decide(ev).said_as is SaidAs.FACT
    failed = policy.decide(ev, fact_check=never)
    assert failed.said_as is SaidAs.PROBABLY and "confirmed" in failed.reason
    assert failed.caption == policy.decide(ev).caption  # the same words, said as a guess
    unsure = _dogs("A stream in the woods.", 0)
    unsure.finalists[0] = Finalist(unsure.finalists[0].text, 0.5, 0.5)  # trust says "Probably"
    assert policy.decide(unsure, fact_check=always).said_as is SaidAs.PROBABLY


def test_the_labels_the_check_was_fitted_on_are_in_the_repository():
    with (ROOT / "training" / "studies" / "val_by_eye.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 500 and {r["label"] for r in rows} == {"right", "detail", "wrong"}
    assert all(r["aspect"] for r in rows if r["label"] != "right")
