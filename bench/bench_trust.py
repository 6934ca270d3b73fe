"""What the concept head, the grounded beam and the trust score cost: file -> description at beam 3,
through the describer as ``capdesk caption`` runs it, for the shipped bundle against the same bundle
with them taken out (the baseline, made in a temporary folder), in the same run; median of several
runs, one picture at a time and in batches.

    python bench/bench_trust.py [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.describe.describer import DescribeOptions, Describer  # noqa: E402
from capdesk.folders.reading import describe_paths  # noqa: E402
from capdesk.model.concepts import copy_without_concepts  # noqa: E402

SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))


def per_picture_ms(describer: Describer, paths: list[Path], batch: int, runs: int) -> float:
    def once() -> None:
        for s in range(0, len(paths), batch):
            list(describe_paths(describer, paths[s:s + batch], batch_size=batch))

    once()  # warm-up: sessions, caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times) / len(paths)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "everyday"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args(argv)
    paths = SAMPLES * 2
    opts = DescribeOptions(ocr="never")
    out: dict = {"pictures": len(paths), "runs": ns.runs}
    with tempfile.TemporaryDirectory() as tmp:
        base = copy_without_concepts(Path(ns.model), Path(tmp) / "baseline", "baseline")
        engines = {"baseline (no concepts, no trust)": Describer(str(base), provider="cpu", beam=3, options=opts,
                                                                 others=[]),
                   "shipped (concepts, grounding, trust)": Describer(ns.model, provider="cpu", beam=3, options=opts,
                                                                     others=[])}
        for batch in (1, 8):
            row = {name: round(per_picture_ms(d, paths, batch, ns.runs), 2) for name, d in engines.items()}
            a, b = row.values()
            row["ratio"] = round(b / a, 3)
            out[f"batch {batch}: ms per picture"] = row
            print(f"batch {batch}: {row}", flush=True)
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
