"""What the app says as fact, measured the way a user meets it: the describer with its default settings
(what ``capdesk caption --json`` runs) over a data set's test photos, per collection.

    python training/studies/facts_eval.py [--data ../shared/data/everyday/dataset_everyday.json] [--split test]

For each collection: the shares of photos whose caption is said as fact, as "Probably" and withheld
(or none); CHAIRs of the captions said as fact and of those said as "Probably" (an object no human
caption of the photo names); and BLEU-4 / CIDEr of every caption the model wrote (said or not).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe.describer import Describer  # noqa: E402
from capdesk.folders.reading import describe_paths  # noqa: E402
from training.chair import hallucinated  # noqa: E402
from training.data import read_any  # noqa: E402
from training.evaluate import source_group  # noqa: E402
from training.metrics import score  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "everyday" / "dataset_everyday.json"


def evaluate(data: Path, split: str, model: str | None = None, limit: int = 0, dump: Path | None = None) -> dict:
    ds = read_any(data)
    records = ds.split(split)[: limit or None]
    describer = Describer(model)
    rows: dict[str, list] = defaultdict(list)
    for r, d in zip(records, describe_paths(describer, [r.image for r in records], batch_size=16)):
        rows[source_group(r.source)].append((r, d))
    if dump is not None:  # one line per photo, for choosing thresholds on val
        with dump.open("w", encoding="utf-8") as f:
            for g, pairs in rows.items():
                for r, d in pairs:
                    bad = bool(hallucinated(d.caption.text, r.raw)) if d.caption else False
                    f.write(json.dumps({"collection": g, "said_as": str(d.said_as), "trust": d.trust,
                                        "in_domain": d.in_domain, "domain_score": d.domain_score,
                                        "hallucinated": bad}) + "\n")
    out = {}
    for g, pairs in sorted(rows.items()):
        n = len(pairs)
        said = defaultdict(list)
        for r, d in pairs:
            said[str(d.said_as)].append((r, d))

        def chairs(items):
            bad = [bool(hallucinated(d.caption.text, r.raw)) for r, d in items if d.caption]
            return round(sum(bad) / len(bad), 4) if bad else 0.0

        refs = {str(r.image): [" ".join(c) for c in r.captions] for r, _ in pairs}
        hyps = {str(r.image): " ".join(d.caption.words) if d.caption else "" for r, d in pairs}
        m = score(refs, hyps)
        out[g] = {"images": n, **{f"{k}_share": round(len(v) / n, 4) for k, v in sorted(said.items())},
                  "fact_CHAIRs": chairs(said["fact"]), "probably_CHAIRs": chairs(said["probably"]),
                  "review_share": round(sum(d.review for _, d in pairs) / n, 4),
                  "BLEU-4": round(m["BLEU-4"], 4), "CIDEr": round(m["CIDEr"], 4),
                  "errors": sum(d.error is not None for _, d in pairs)}
    return out


def plot(dump: Path, path: Path, zone: float) -> None:
    """The risk-coverage curves of facts as the trust threshold moves, with the gate and the fact zone
    as the app applies them, from a ``--dump`` file; the shipped threshold marked."""
    from capdesk.limits import TRUST_FACT_THRESHOLD
    from training.grounding import TARGET_FACT_CHAIRS
    from training.plots import risk_coverage_png

    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    curves = {}
    for g in sorted({r["collection"] for r in rows}):
        mine = [r for r in rows if r["collection"] == g]
        curve = []
        for t in [round(x, 2) for x in np.arange(0.0, 1.0, 0.02)]:
            fact = [r for r in mine if r["in_domain"] and r["trust"] is not None and r["trust"] >= t
                    and (r["domain_score"] is None or r["domain_score"] <= zone)]
            curve.append((t, len(fact) / len(mine), sum(r["hallucinated"] for r in fact) / max(len(fact), 1)))
        curves[f"{g} test ({len(mine)} photos)"] = curve
    risk_coverage_png(curves, path, {"shipped": TRUST_FACT_THRESHOLD},
                      "everyday: captions said as fact as the trust threshold moves (gate and fact zone applied)",
                      TARGET_FACT_CHAIRS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", default="test")
    ap.add_argument("--model", default=None, help="a model name (default: automatic routing, as the app)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="write one JSON line per photo here")
    ap.add_argument("--plot", type=Path, help="draw the risk-coverage curves of the --dump file here (PNG)")
    ns = ap.parse_args(argv)
    print(json.dumps(evaluate(ns.data, ns.split, ns.model, ns.limit, ns.dump), indent=1))
    if ns.plot and ns.dump:
        from capdesk.model.bundle import resolve

        zone = resolve(ns.model).manifest.get("trust", {}).get("fact_domain_ratio", float("inf"))
        plot(ns.dump, ns.plot, zone)
    return 0


if __name__ == "__main__":
    sys.exit(main())
