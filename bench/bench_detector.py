"""What the object detector costs: file to description with and without it, same run.

For each sample picture: load the file (as the describer does) and describe it at beam 3 (routing, tags,
pixel facts, text reading off), once with the detector's objects and once without, the two
interleaved in every round so that a busy machine slows both alike; median over the rounds. Also the
detector alone on each picture, and its first load (reading and hashing the bundle, building the session).

    python bench/bench_detector.py [--runs 9] [--beam 3] [--threads 1] [--provider cpu] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.describe.describer import DescribeOptions, Describer  # noqa: E402
from capdesk.imageio import load_image  # noqa: E402

SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads per graph (0: all cores)")
    ap.add_argument("--provider", default="cpu")
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)

    opts = DescribeOptions(ocr="never")
    describer = Describer(a.model, provider=a.provider, beam=a.beam, options=opts, threads=a.threads)
    size = (describer.primary.preprocess.size * 2,) * 2
    t0 = time.perf_counter()
    detector = describer.objects.detector()
    load_ms = (time.perf_counter() - t0) * 1000
    if detector is None:
        print(f"bench_detector: {describer.objects.problem}", file=sys.stderr)
        return 1

    def describe(path: Path, objects: bool) -> tuple[float, float]:
        """(wall-clock ms, this thread's CPU ms): with one thread per graph ONNX Runtime computes on the
        calling thread, and its CPU time is what a busy machine disturbs least."""
        opts.objects = objects
        t, c = time.perf_counter(), time.thread_time()
        describer.describe_images([load_image(path, draft_size=size)], [str(path)])  # at the describer's beam
        return (time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000

    rows = []
    for p in SAMPLES:
        img = load_image(p, draft_size=size)
        for objects in (False, True):  # warm-up
            describe(p, objects)
        base, with_det, alone = [], [], []
        for _ in range(a.runs):
            base.append(describe(p, False))
            with_det.append(describe(p, True))
            t, c = time.perf_counter(), time.thread_time()
            detector.detect(img)
            alone.append(((time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000))
        (b, bc), (w, wc), (d, dc) = ([statistics.median(x[i] for x in runs) for i in (0, 1)]
                                     for runs in (base, with_det, alone))
        rows.append({"picture": p.name, "size": list(img.size), "without_ms": round(b, 1), "with_ms": round(w, 1),
                     "ratio": round(w / b, 2), "detector_alone_ms": round(d, 1), "without_cpu_ms": round(bc, 1),
                     "with_cpu_ms": round(wc, 1), "cpu_ratio": round(wc / bc, 2),
                     "detector_alone_cpu_ms": round(dc, 1)})

    print(f"beam {a.beam}, {a.threads or 'all'} thread(s), {a.runs} rounds, median; {platform.processor() or ''}")
    print("wall-clock ms (CPU ms of the thread)")
    print("| picture | decoded size | without detector | with detector | ratio | detector alone |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['picture']} | {r['size'][0]}x{r['size'][1]} | {r['without_ms']} ({r['without_cpu_ms']}) | "
              f"{r['with_ms']} ({r['with_cpu_ms']}) | {r['ratio']}x ({r['cpu_ratio']}x) | "
              f"{r['detector_alone_ms']} ({r['detector_alone_cpu_ms']}) |")
    tb, tw = sum(r["without_ms"] for r in rows), sum(r["with_ms"] for r in rows)
    cb, cw = sum(r["without_cpu_ms"] for r in rows), sum(r["with_cpu_ms"] for r in rows)
    print(f"| all {len(rows)} | | {tb / len(rows):.1f} ({cb / len(rows):.1f}) | {tw / len(rows):.1f} "
          f"({cw / len(rows):.1f}) | {tw / tb:.2f}x ({cw / cb:.2f}x) | |")
    print(f"detector's first load: {load_ms:.0f} ms")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "load_ms": round(load_ms, 1), "beam": a.beam,
                                      "threads": a.threads, "summary": {"without_ms": round(tb / len(rows), 1),
                                                                        "with_ms": round(tw / len(rows), 1),
                                                                        "ratio": round(tw / tb, 2),
                                                                        "cpu_ratio": round(cw / cb, 2)}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
