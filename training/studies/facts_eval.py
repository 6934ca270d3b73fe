"""What the app says as fact, measured the way a user meets it: the describer with its default settings
(what ``capdesk caption --json`` runs) over a data set's test photos, per collection.

    python training/studies/facts_eval.py [--data ../shared/data/everyday/dataset_everyday.json] [--split test]

For each collection: the shares of photos whose caption is said as fact, as "Probably" and withheld
(or none); CHAIRs of the captions said as fact and of those said as "Probably" (an object no human
caption of the photo names); the share of them that contradict the human captions in who or how many
(``training.who_count``); the share of empty alt texts; and BLEU-4 / CIDEr of every caption the model
wrote (said or not) and of the captions as the alt text would say them (corrected by the evidence).
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
from capdesk.describe.objects import tokens  # noqa: E402
from capdesk.folders.reading import describe_paths  # noqa: E402
from training.chair import hallucinated  # noqa: E402
from training.data import read_any  # noqa: E402
from training.evaluate import source_group  # noqa: E402
from training.metrics import score  # noqa: E402
from training.who_count import contradicts  # noqa: E402

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
                    f.write(json.dumps({"collection": g, "image": str(r.image), "said_as": str(d.said_as),
                                        "trust": d.trust, "in_domain": d.in_domain,
                                        "domain_score": d.domain_score, "hallucinated": bad,
                                        "caption": d.caption.text if d.caption else None,
                                        "said": said_text(d), "description": d.description,
                                        "wrong_said": hallucinated(said_text(d), r.raw),
                                        "who_many": contradicts(said_text(d), r.raw),
                                        "refs": r.raw, "record": record(d)}) + "\n")
    out = {}
    for g, pairs in sorted(rows.items()):
        n = len(pairs)
        said = defaultdict(list)
        for r, d in pairs:
            said[str(d.said_as)].append((r, d))

        def chairs(items):
            bad = [bool(hallucinated(said_text(d), r.raw)) for r, d in items if d.caption]
            return round(sum(bad) / len(bad), 4) if bad else 0.0

        def who_many(items):
            bad = [bool(contradicts(said_text(d), r.raw)) for r, d in items if d.caption]
            return round(sum(bad) / len(bad), 4) if bad else 0.0

        refs = {str(r.image): [" ".join(c) for c in r.captions] for r, _ in pairs}
        hyps = {str(r.image): " ".join(d.caption.words) if d.caption else "" for r, d in pairs}
        m = score(refs, hyps)
        alt = score(refs, {str(r.image): " ".join(tokens(said_text(d))) for r, d in pairs})
        out[g] = {"images": n, **{f"{k}_share": round(len(v) / n, 4) for k, v in sorted(said.items())},
                  "fact_CHAIRs": chairs(said["fact"]), "probably_CHAIRs": chairs(said["probably"]),
                  "fact_who_many": who_many(said["fact"]), "probably_who_many": who_many(said["probably"]),
                  "empty_share": round(sum(not d.description for _, d in pairs) / n, 4),
                  "review_share": round(sum(d.review for _, d in pairs) / n, 4),
                  "BLEU-4": round(m["BLEU-4"], 4), "CIDEr": round(m["CIDEr"], 4),
                  "said_BLEU-4": round(alt["BLEU-4"], 4), "said_CIDEr": round(alt["CIDEr"], 4),
                  "errors": sum(d.error is not None for _, d in pairs)}
    return out


def record(d) -> dict | None:
    """The picture's evidence as the policy reads it (concepts under 0.1 left out: the file stays small,
    and the policy reads concepts only when no detector looked), for ``replay``."""
    if d.evidence is None:
        return None
    rec = d.evidence.to_record()
    rec["concepts"] = {w: round(p, 4) for w, p in rec["concepts"].items() if p >= 0.1}
    return rec


def replay(dump: Path, show_guess: bool = False, metrics: bool = True, settings=None) -> dict:
    """The figures of a ``--dump`` file with the policy as it is now (or with other ``settings``, a
    ``PolicySettings``), without describing again: how the policy's thresholds are chosen on val."""
    from capdesk.describe import composer, policy
    from capdesk.describe.evidence import PictureEvidence
    from capdesk.describe.settings import DEFAULT

    settings = settings or DEFAULT

    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    out = {}
    for g in sorted({r["collection"] for r in rows}):
        mine = [r for r in rows if r["collection"] == g and r.get("record")]
        said: dict[str, list] = defaultdict(list)
        empty = 0
        hyps, refs = {}, {}
        for r in mine:
            d = policy.decide(PictureEvidence.from_record(r["record"]), fact_check=_fact_check(r["record"]["model"]),
                              settings=settings)
            w = composer.alt_text(d, show_guess)
            text = d.caption or d.guess
            # What is said as fact is the confirmed subject alone where the rest is said as probable.
            said[str(d.said_as)].append((d.fact or text, r["refs"]))
            empty += not w.text
            hyps[r["image"]] = " ".join(tokens(text))
            refs[r["image"]] = [" ".join(tokens(x)) for x in r["refs"]]
        n = len(mine)

        def share(items, f):
            bad = [bool(f(t, refs)) for t, refs in items if t]
            return round(sum(bad) / len(bad), 4) if bad else 0.0

        out[g] = {"images": n, **{f"{k}_share": round(len(v) / n, 4) for k, v in sorted(said.items())},
                  "fact_CHAIRs": share(said["fact"], hallucinated), "fact_who_many": share(said["fact"], contradicts),
                  "probably_CHAIRs": share(said["probably"], hallucinated),
                  "probably_who_many": share(said["probably"], contradicts), "empty_share": round(empty / n, 4)}
        if metrics:
            m = score(refs, hyps)
            out[g].update({"said_BLEU-4": round(m["BLEU-4"], 4), "said_CIDEr": round(m["CIDEr"], 4)})
    return out


_CHECKS: dict = {}


def _fact_check(model: str):
    """The fact check a model's bundle carries, as the describer applies it (None where it has none)."""
    if model not in _CHECKS:
        from capdesk.describe.fact_check import FactCheck
        from capdesk.model.bundle import resolve

        b = resolve(model)
        words = json.loads((Path(b.path) / "concepts.json").read_text(encoding="utf-8"))["words"] \
            if (Path(b.path) / "concepts.json").exists() else []
        _CHECKS[model] = FactCheck.from_manifest(b.manifest.get("fact_check"), words)
    return _CHECKS[model]


def said_text(d) -> str:
    """The caption as the alt text says it (corrected by the evidence), or the model's own caption where
    the describer keeps no corrected one."""
    said = getattr(d, "said_caption", None)
    if said is not None:
        return said
    return d.caption.text if d.caption else ""


def plot(dump: Path, path: Path, zone: float) -> None:
    """The risk-coverage curves of facts as the trust threshold moves, with the gate and the fact zone
    as the app applies them, from a ``--dump`` file; the shipped threshold marked."""
    from training.grounding import TARGET_FACT_CHAIRS, TRUST_FACT_THRESHOLD
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
    ap.add_argument("--replay", type=Path, help="the figures of a --dump file under the policy as it is now")
    ns = ap.parse_args(argv)
    if ns.replay:
        print(json.dumps(replay(ns.replay), indent=1))
        return 0
    print(json.dumps(evaluate(ns.data, ns.split, ns.model, ns.limit, ns.dump), indent=1))
    if ns.plot and ns.dump:
        from capdesk.model.bundle import resolve

        zone = resolve(ns.model).manifest.get("trust", {}).get("fact_domain_ratio", float("inf"))
        plot(ns.dump, ns.plot, zone)
    return 0


if __name__ == "__main__":
    sys.exit(main())
