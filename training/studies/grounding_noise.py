"""Is the grounded beam's change in BLEU-4 and CIDEr more than noise? A paired bootstrap over the test
photos of each collection: the same photos resampled, captioned with and without grounding by the same
model, the difference of the corpus metrics taken on each resample.

    python training/studies/grounding_noise.py [--model models/everyday] [--resamples 200]

Prints, per collection, the difference (grounded minus plain) and its 95% interval; an interval that
holds 0 is a change within noise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.model.engine import Engine  # noqa: E402
from training.data import read_any  # noqa: E402
from training.evaluate import decode_all, encode_records, grounding_bias, source_group  # noqa: E402
from training.metrics import score  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "everyday" / "dataset_everyday.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "everyday"))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--split", default="test")
    ap.add_argument("--resamples", type=int, default=200)
    ns = ap.parse_args(argv)
    engine = Engine(ns.model, provider="cpu")
    probs: list = []
    feats, records, _ = encode_records(engine, read_any(ns.data).split(ns.split), concepts=probs)
    bias = grounding_bias(engine, probs)
    if bias is None:
        raise SystemExit(f"{ns.model}: no concept head with grounding")
    plain = decode_all(engine, feats, engine.beam)
    grounded = decode_all(engine, feats, engine.beam, bias=bias)
    rng = np.random.default_rng(7)
    out = {}
    for g in sorted({source_group(r.source) for r in records}):
        idx = [i for i, r in enumerate(records) if source_group(r.source) == g]
        refs = [[" ".join(c) for c in records[i].captions] for i in idx]
        a = [" ".join(plain[i].words) for i in idx]
        b = [" ".join(grounded[i].words) for i in idx]

        def metrics(sample, hyps, refs=refs):
            ids = [str(n) for n in range(len(sample))]
            m = score({k: refs[j] for k, j in zip(ids, sample)}, {k: hyps[j] for k, j in zip(ids, sample)})
            return np.array([m["BLEU-4"], m["CIDEr"]])

        full = list(range(len(idx)))
        diff = metrics(full, b) - metrics(full, a)
        boot = np.array([metrics(s, b) - metrics(s, a)
                         for s in (rng.integers(0, len(idx), len(idx)) for _ in range(ns.resamples))])
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        out[g] = {"images": len(idx), "plain": dict(zip(("BLEU-4", "CIDEr"), metrics(full, a).round(4).tolist())),
                  "grounded_minus_plain": dict(zip(("BLEU-4", "CIDEr"), diff.round(4).tolist())),
                  "interval_95": {"BLEU-4": [round(lo[0], 4), round(hi[0], 4)],
                                  "CIDEr": [round(lo[1], 4), round(hi[1], 4)]}}
        print(g, json.dumps(out[g]), flush=True)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
