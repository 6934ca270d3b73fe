"""Candidate models compared on the val split only, the way a release is chosen.

For each bundle: its decoding (length normalisation, n-gram blocking) tuned on the whole val split
at beam 3, exactly as ``capdesk train release`` tunes it, then val figures at that setting with
METEOR, for all val photos and for each collection (Flickr8k, COCO), plus decoding milliseconds per
image. The test split is not read.

    python training/studies/val_compare.py BUNDLE [BUNDLE ...] [--data ../shared/data/everyday] [--json out.json]
                                [--alphas 0,0.5,1,1.5,2] [--blocks 0,2,3]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.model.engine import Engine  # noqa: E402
from training.data import read_any  # noqa: E402
from training.evaluate import (  # noqa: E402
    BLOCK_NGRAMS,
    LENGTH_ALPHAS,
    best_setting,
    decoding_grid,
    encode_records,
    scores_by_source,
)
from training.metrics import score  # noqa: E402


def compare(bundle: Path, data: Path, beam: int = 3, alphas: tuple[float, ...] = LENGTH_ALPHAS,
            blocks: tuple[int, ...] = BLOCK_NGRAMS) -> dict:
    engine = Engine(str(bundle), provider="cpu")
    records = read_any(data).split("val")
    feats, records, _ = encode_records(engine, records)
    refs = {str(r.image): [" ".join(c) for c in r.captions] for r in records}
    results = decoding_grid(engine, feats, records, beam, alphas, blocks)
    best = best_setting(results)  # the release's rule
    hyps = best["hyps"]
    out = {"bundle": str(bundle), "images": len(records), "beam": beam,
           "chosen": {"length_alpha": best["length_alpha"], "block_ngram": best["block_ngram"]},
           "decode_ms_per_image": best["decode_ms"],
           "all": score(refs, hyps, meteor=True),
           "mean_length": round(sum(len(h.split()) for h in hyps.values()) / len(hyps), 2),
           **scores_by_source(refs, hyps, records, meteor=True)}
    out["grid"] = [{k: v for k, v in r.items() if k != "hyps"} for r in results]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+", type=Path)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--alphas", default=",".join(map(str, LENGTH_ALPHAS)),
                    help="length normalisations to try (a smaller grid for slow candidates such as ensembles)")
    ap.add_argument("--blocks", default=",".join(map(str, BLOCK_NGRAMS)), help="n-gram blocking to try (0: off)")
    ns = ap.parse_args()
    results = []
    for b in ns.bundles:
        r = compare(b, ns.data, ns.beam, tuple(float(a) for a in ns.alphas.split(",")),
                    tuple(int(n) for n in ns.blocks.split(",")))
        results.append(r)
        cols = ("BLEU-1", "BLEU-4", "METEOR", "CIDEr")
        line = " | ".join(f"{g} " + " ".join(f"{r[g].get(c, float('nan')):.4f}" for c in cols)
                          for g in ("all", "flickr8k", "coco") if g in r)
        print(f"{b}: {r['chosen']} {r['decode_ms_per_image']} ms | {line}", flush=True)
    if ns.json:
        ns.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
