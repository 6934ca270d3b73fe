"""Fit the fact check (capdesk/describe/fact_check.py) to alt texts of val photos read by eye, and measure it.

    python training/studies/facts_eval.py --split val --dump VAL.jsonl       # the evidence of every val photo
    python training/studies/fact_by_eye.py fit VAL.jsonl training/studies/val_by_eye.csv [--write models/everyday]
    python training/studies/fact_by_eye.py measure DUMP.jsonl LABELS.csv [--bundle models/everyday]

``val_by_eye.csv`` holds one row per labelled val photo (image, collection, said, label, aspect, note): the
caption as the alt text would say it, read beside the photo by one rubric (training/studies/BY_EYE_RUBRIC.md):
``right``, ``detail`` (a wrong detail: colour, clothing, place, a secondary object) or ``wrong`` (wrong in
the main thing: who, how many, what they do, which animal, the scene).

``fit`` chooses the threshold by five-fold cross-validation on the labels: the lowest at which, of the
captions the policy says as fact and the check passes, at least ``MAIN_GOAL`` are right in the main thing
and ``WHOLE_GOAL`` wholly right, while at least ``MIN_KEPT`` of the facts are still said; where no threshold
does both (these features see what the people do too little), the one keeping that share whose facts are
most often right in the main thing. ``measure`` gives the by-eye precision of the facts a bundle's policy says
(with its check) on another labelled set, such as the test photos.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe import policy  # noqa: E402
from capdesk.describe.evidence import PictureEvidence  # noqa: E402
from capdesk.describe.fact_check import FEATURES, FactCheck, features  # noqa: E402
from capdesk.status import SaidAs  # noqa: E402

MAIN_GOAL, WHOLE_GOAL = 0.95, 0.85
MIN_KEPT = 0.25  # a check that keeps fewer of the facts than this is a check that says nothing as fact
L2 = 1.0
FOLDS = 5


def _vocabulary(bundle: Path) -> frozenset[str]:
    return frozenset(json.loads((bundle / "concepts.json").read_text(encoding="utf-8"))["words"])


def load(dump: Path, labels: Path) -> list[dict]:
    """The labelled photos with their evidence record and the policy's decision without the check."""
    by_image = {}
    for line in dump.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        by_image[Path(r["image"]).name] = r
    out = []
    with labels.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            r = by_image.get(row["image"])
            if r is None or not r.get("record") or row["label"] not in ("right", "detail", "wrong"):
                continue
            ev = PictureEvidence.from_record(r["record"])
            d = policy.decide(ev)
            said = d.caption or d.guess
            out.append({"image": row["image"], "collection": r["collection"], "label": row["label"],
                        "aspect": row.get("aspect", ""), "ev": ev, "said": said, "said_as": d.said_as})
    return out


def _matrix(rows: list[dict], vocab: frozenset[str]) -> np.ndarray:
    return np.stack([features(r["ev"], r["said"], vocab) for r in rows])


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(3000):  # plain gradient descent on the L2-penalised log loss: small, convex, deterministic
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = p - y
        w -= 0.1 * (z.T @ g / len(y) + L2 * w / len(y))
        b -= 0.1 * g.mean()
    return mean, scale, w, b


def _prob(model, x: np.ndarray) -> np.ndarray:
    mean, scale, w, b = model
    return 1 / (1 + np.exp(-(((x - mean) / scale) @ w + b)))


def _precision(rows: list[dict], keep: np.ndarray) -> tuple[float, float, int]:
    facts = [r for r, k in zip(rows, keep) if k and r["said_as"] is SaidAs.FACT]
    if not facts:
        return 1.0, 1.0, 0
    main = sum(r["label"] != "wrong" for r in facts) / len(facts)
    whole = sum(r["label"] == "right" for r in facts) / len(facts)
    return main, whole, len(facts)


def fit(dump: Path, labels: Path, write: Path | None, bundle: Path) -> dict:
    vocab = _vocabulary(bundle)
    rows = load(dump, labels)
    x = _matrix(rows, vocab)
    y = np.array([r["label"] != "wrong" for r in rows], dtype=float)
    order = np.random.default_rng(7).permutation(len(rows))
    cv = np.zeros(len(rows))
    for k in range(FOLDS):
        test = order[k::FOLDS]
        train = np.setdiff1d(order, test)
        cv[test] = _prob(_fit(x[train], y[train]), x[test])
    facts_before = _precision(rows, np.ones(len(rows), bool))
    table = []
    for t in np.round(np.arange(0.5, 0.995, 0.01), 2):
        main, whole, n = _precision(rows, cv >= t)
        table.append({"threshold": float(t), "main": round(main, 4), "whole": round(whole, 4), "facts": n})
    n_facts = sum(r["said_as"] is SaidAs.FACT for r in rows)
    # The goal where it can be had with at least MIN_KEPT of the facts still said; else, among the thresholds
    # that keep that many, the one whose facts are most often right in the main thing (the lowest of ties).
    kept = [r for r in table if r["facts"] >= MIN_KEPT * n_facts]
    chosen = next((r for r in kept if r["main"] >= MAIN_GOAL and r["whole"] >= WHOLE_GOAL), None) or \
        max(kept, key=lambda r: (r["main"], -r["threshold"]))
    model = _fit(x, y)
    out = {"labelled": len(rows), "facts_before": {"main": round(facts_before[0], 4),
                                                    "whole": round(facts_before[1], 4), "n": facts_before[2]},
           "chosen": chosen, "facts_kept_share": round(chosen["facts"] / max(n_facts, 1), 4),
           "weights": dict(zip(FEATURES, np.round(model[2], 4).tolist())), "curve": table}
    if write is not None:
        entry = {"features": list(FEATURES), "mean": np.round(model[0], 6).tolist(),
                 "scale": np.round(model[1], 6).tolist(), "weights": np.round(model[2], 6).tolist(),
                 "bias": round(float(model[3]), 6), "threshold": chosen["threshold"],
                 "label": "a careful reader accepts the caption's main thing (who, how many, what they do, which "
                          "animal, the scene), read by eye beside the photo",
                 "fitted_on": f"{len(rows)} val photos read by eye (training/studies/val_by_eye.csv)",
                 "cross_validated": {"facts_main": chosen["main"], "facts_whole": chosen["whole"],
                                     "facts_kept": out["facts_kept_share"],
                                     "facts_main_before": out["facts_before"]["main"],
                                     "facts_whole_before": out["facts_before"]["whole"]}}
        path = write / "manifest.json"
        m = json.loads(path.read_text(encoding="utf-8"))
        m["fact_check"] = entry
        path.write_text(json.dumps(m, indent=2) + "\n", encoding="utf-8")
    return out


def measure(dump: Path, labels: Path, bundle: Path) -> dict:
    """By-eye precision of facts on a labelled set, with the bundle's check and without it."""
    m = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    check = FactCheck.from_manifest(m.get("fact_check"), sorted(_vocabulary(bundle)))
    rows = load(dump, labels)
    out = {}
    for name, keep in (("without the check", np.ones(len(rows), bool)),
                       ("with the check", np.array([check is None or check.passes(r["ev"], r["said"]) for r in rows]))):
        out[name] = {}
        for g in sorted({r["collection"] for r in rows}) + ["all"]:
            mine = [i for i, r in enumerate(rows) if g in ("all", r["collection"])]
            main, whole, n = _precision([rows[i] for i in mine], keep[mine])
            out[name][g] = {"facts": n, "main": round(main, 4), "whole": round(whole, 4), "labelled": len(mine)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("fit", "measure"))
    ap.add_argument("dump", type=Path)
    ap.add_argument("labels", type=Path)
    ap.add_argument("--bundle", type=Path, default=ROOT / "models" / "everyday")
    ap.add_argument("--write", type=Path, help="write the fitted check into this bundle's manifest")
    ns = ap.parse_args(argv)
    out = fit(ns.dump, ns.labels, ns.write, ns.bundle) if ns.what == "fit" else measure(ns.dump, ns.labels, ns.bundle)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
