"""How many people or animals a photo holds, from the evidence record alone: a small logistic model of the
probability that the human captions say "several" of a kind the caption names, fitted on the val split's
evidence (a ``facts_eval.py --dump`` file). Tried in place of the policy's single detector counts
(``capdesk.describe.policy``, COUNT_*) and not kept: it ranks better (out-of-fold AUC 0.892 against 0.822
for the best single count) but, used to mend a caption's number where it is sure and to take the fact
away where it is not, it traded facts for who-many contradictions no better than the thresholds do
(val Flickr8k 58.1% facts / 8.1% against 57.5% / 8.5%; docs/training.md).

    python training/studies/facts_eval.py --split val --dump runs/facts-val.jsonl
    python training/studies/count_model.py runs/facts-val.jsonl [--folds 5]

A sample is one kind (person, dog, ...) that a photo's best caption gives a number for, and whose references
agree on one: at least 3 of them say a number and the larger side has at least 3 (the measure's own
"several" or "one", ``capdesk.describe.numbers``). Prints the out-of-fold ranking quality (AUC) of the
model against the single detector counts it replaces, and the coefficients fitted on every sample.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe import trust  # noqa: E402
from capdesk.describe.evidence import PictureEvidence  # noqa: E402
from capdesk.describe.numbers import numbers  # noqa: E402

COUNTED = frozenset({"person", "bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra",
                     "giraffe"})
FLOORS = (0.3, 0.5, 0.7, 0.9)
AREA = 0.25  # a counted box is at least this share of the largest of its kind (docs: policy.COUNT_AREA)
FEATURES = ("said several", "finalists several", *(f"boxes from {f}" for f in FLOORS), "boxes small from 0.3",
            "second box", "best box", "group", "couple", "other", "person")
CONCEPT_FLOOR = 0.05  # the record keeps concepts from 0.1; below, a concept is as good as absent


def features(ev: PictureEvidence, cat: str, said: str) -> list[float]:
    naming = [numbers(f.text).get(cat) for f in ev.finalists]
    naming = [n for n in naming if n]
    scores = sorted((d.score for d in ev.detections if d.label == cat and _big(ev, d.box, cat)), reverse=True)
    return [float(said == "several"), sum(n == "several" for n in naming) / len(naming) if naming else 0.5,
            *(min(ev.count(cat, f, AREA), 4) / 4 for f in FLOORS), min(ev.count(cat, 0.3, 0.0), 8) / 8,
            scores[1] if len(scores) > 1 else 0.0, scores[0] if scores else 0.0,
            *(max(ev.concepts.get(w, 0.0), CONCEPT_FLOOR) for w in ("group", "couple", "other")),
            float(cat == "person")]


def _big(ev: PictureEvidence, box: tuple, cat: str) -> bool:
    areas = [(x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in (d.box for d in ev.detections if d.label == cat)]
    x0, y0, x1, y1 = box
    return (x1 - x0) * (y1 - y0) >= 0.1 * max(areas)


def probability(x: np.ndarray, weights: np.ndarray | tuple[float, ...]) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return 1.0 / (1.0 + np.exp(-(np.asarray(x, dtype=float) @ w[:-1] + w[-1])))


def several(ev: PictureEvidence, cat: str, said: str, weights: tuple[float, ...]) -> float:
    """The probability that the photo holds several of ``cat`` (its caption says ``said``)."""
    return float(probability(np.array([features(ev, cat, said)]), weights)[0])

MIN_SIDE = 3
L2 = 1.0


def samples(dump: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    xs, ys, cats = [], [], []
    for line in dump.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rec = r.get("record")
        if not rec or not rec.get("finalists") or not rec.get("detector"):
            continue
        ev = PictureEvidence.from_record(rec)
        said = numbers(ev.finalists[0].text)
        refs = [numbers(x) for x in r["refs"]]
        for cat, n in said.items():
            if cat not in COUNTED:
                continue
            several = sum(rn.get(cat) == "several" for rn in refs)
            one = sum(rn.get(cat) == "one" for rn in refs)
            if max(several, one) < MIN_SIDE:
                continue
            xs.append(features(ev, cat, n))
            ys.append(float(several > one))
            cats.append(cat)
    return np.array(xs), np.array(ys), cats


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Logistic regression (the trust score's Newton fit), as weights over the raw features, intercept last."""
    m = trust.fit(x, y, l2=l2)
    mean, scale, w = np.array(m["mean"]), np.array(m["scale"]), np.array(m["weights"])
    return np.append(w / scale, m["bias"] - (w * mean / scale).sum())


def auc(score: np.ndarray, y: np.ndarray) -> float:
    pos, neg = score[y == 1], score[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def out_of_fold(x: np.ndarray, y: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(len(y))
    p = np.zeros(len(y))
    for k in range(folds):
        test = order[k::folds]
        train = np.setdiff1d(order, test)
        w = fit(x[train], y[train])
        p[test] = probability(x[test], w)
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--folds", type=int, default=5)
    ns = ap.parse_args(argv)
    x, y, cats = samples(ns.dump)
    print(f"{len(y)} samples, {int(y.sum())} several; kinds: "
          + ", ".join(f"{c} {cats.count(c)}" for c in sorted(set(cats))))
    p = out_of_fold(x, y, ns.folds)
    names = FEATURES
    print(f"out-of-fold AUC: model {auc(p, y):.3f}; " + ", ".join(
        f"{n} {auc(x[:, i], y):.3f}" for i, n in enumerate(names) if n.startswith("boxes")))
    for lo, hi in ((0.2, 0.8), (0.3, 0.7), (0.25, 0.75), (0.15, 0.85)):
        sure = (p <= lo) | (p >= hi)
        right = ((p >= hi) & (y == 1)) | ((p <= lo) & (y == 0))
        share = right.sum() / max(sure.sum(), 1)
        print(f"  sure outside ({lo}, {hi}): {sure.mean():.1%} of samples, right {share:.1%}")
    w = fit(x, y)
    print("WEIGHTS = (" + ", ".join(f"{v:.3f}" for v in w) + ")  # " + ", ".join([*names, "intercept"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
