"""Decoding time of model bundles, as ratios against the first one: beam search on the features of
val photos, one picture at a time (what a user waiting for one caption meets) and in batches of 32
(what a folder export meets). The encoder is left out: bundles sharing an encoder differ only here.

    python bench/decode_ms.py BASELINE_BUNDLE OTHER_BUNDLE ... [--images 60] [--rounds 3] [--beam 3]

Bundles are timed in turn in each round, so a machine that slows down slows them all alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.model.engine import Engine  # noqa: E402
from training.data import read_any  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--beam", type=int, default=3)
    ns = ap.parse_args()
    files = [r.image for r in read_any(ns.data).split("val")][:ns.images]
    engines = [Engine(b, provider="cpu") for b in ns.bundles]
    feats = []
    for e in engines:
        f = [e.caption_input(e.preprocess.load(p)[1][None]) for p in files]
        e.decode(f[0], ns.beam)  # warm-up
        feats.append(f)
    one: list[list[float]] = [[] for _ in engines]
    batch: list[list[float]] = [[] for _ in engines]
    for _ in range(ns.rounds):
        for i, e in enumerate(engines):
            for f in feats[i]:
                t = time.perf_counter()
                e.decode(f, ns.beam)
                one[i].append(1000 * (time.perf_counter() - t))
            stacked = np.concatenate(feats[i][:32])
            t = time.perf_counter()
            e.decode(stacked, ns.beam)
            batch[i].append(1000 * (time.perf_counter() - t) / len(stacked))
    base_one, base_batch = statistics.median(one[0]), statistics.median(batch[0])
    for b, o, bt in zip(ns.bundles, one, batch):
        mo, mb = statistics.median(o), statistics.median(bt)
        print(json.dumps({"bundle": b, "one_image_ms": round(mo, 2), "one_image_ratio": round(mo / base_one, 2),
                          "batch32_ms_per_image": round(mb, 2), "batch32_ratio": round(mb / base_batch, 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
