"""A bundle's encoder run once over a data set's pictures, kept in one ``.npz``: what the concept head
learns from (pooled features), what the trust score and the grounded beam are fitted and measured on
(class logits, and the decoder's input for the val and test splits).

    python -m training.split_cache models/everyday ../shared/data/everyday/dataset_everyday.json runs/split-cache.npz

It reads every picture through the app's own engine (ONNX Runtime), so the features are those the app
sees; a picture that cannot be read is reported and left out.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from capdesk.model.engine import Engine
from training.data import read_any
from training.evaluate import readable_batches

DECODED_SPLITS = ("val", "test")


def build(bundle: Path, data: Path, out: Path, splits: tuple[str, ...] = ("train", "val", "test"),
          batch: int = 32, limit: int = 0) -> dict:
    engine = Engine(str(bundle), provider="cpu")
    ds = read_any(Path(data))
    ids, split_of, source, pooled, logits, inputs, input_row = [], [], [], [], [], [], []
    problems: list[str] = []
    t0 = time.perf_counter()
    for split in splits:
        records = ds.split(split)[: limit or None]
        for n, (images, recs, bad) in enumerate(readable_batches(engine, records, batch)):
            problems += bad
            if not recs:
                continue
            named = engine.encode_named(images)
            pooled.append(named["features"].mean(1).astype(np.float16))
            logits.append(named["class_logits"].astype(np.float16))
            for r in recs:
                ids.append(str(r.image))
                split_of.append(split)
                source.append(r.source)
            if split in DECODED_SPLITS:
                start = sum(len(x) for x in inputs)
                inputs.append(engine.decoder_input(named).astype(np.float16))
                input_row += list(range(start, start + len(recs)))
            else:
                input_row += [-1] * len(recs)
            if n % 20 == 0:
                print(f"{split}: {min((n + 1) * batch, len(records))}/{len(records)} "
                      f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, ids=np.array(ids), split=np.array(split_of), source=np.array(source),
             pooled=np.concatenate(pooled), logits=np.concatenate(logits),
             inputs=np.concatenate(inputs) if inputs else np.zeros((0, 1, 1), np.float16),
             input_row=np.array(input_row), bundle=str(bundle), features_key=engine.bundle.features_key)
    tmp.replace(out)
    return {"images": len(ids), "problems": problems, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.split_cache", description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="at most this many pictures a split (a quick look)")
    ns = ap.parse_args(argv)
    done = build(ns.bundle, ns.data, ns.out, limit=ns.limit)
    for p in done["problems"]:
        print(f"skipped: {p}", file=sys.stderr)
    print(f"{done['images']} pictures in {done['seconds']} s -> {ns.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
