"""What a stage of describing costs a picture: file to description with and without it, same run.

The stage is the object detector (default) or, with ``--stage kind``, the picture-kind model (pixel
statistics and a small network on the encoder's grid, ``capdesk.describe.picture_kind``).
For each sample picture: load the file (as the describer does) and describe it at beam 3 (routing, tags,
pixel facts, text reading off), once with the stage and once without, the two interleaved in every
round so that a busy machine slows both alike; median over the rounds. Also the stage alone on each
picture, and the detector's first load (reading and hashing the bundle, building the session). For the
kind model, its pixel statistics are also timed against the former way of computing them (reductions
along the colour axis), kept here as the baseline, in the same rounds; both must give the same numbers.

    python bench/bench_detector.py [--stage detector|kind] [--runs 9] [--beam 3] [--threads 1]
                                   [--provider cpu] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.describe import picture_kind  # noqa: E402
from capdesk.describe.describer import DescribeOptions, Describer  # noqa: E402
from capdesk.imageio import load_image  # noqa: E402

SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))


def former_pixel_stats(img: Image.Image) -> np.ndarray:
    """The pixel statistics as first written (numpy reductions along the colour axis): the baseline."""
    a = np.asarray(img.convert("RGB").resize((picture_kind.SIDE,) * 2, Image.BILINEAR), dtype=np.int16)
    q = (a[..., 0] >> 4) * 256 + (a[..., 1] >> 4) * 16 + (a[..., 2] >> 4)
    counts = np.bincount(q.ravel(), minlength=4096)
    grey = a.mean(axis=2)
    gx = np.abs(np.diff(grey, axis=1))[:-1, :]
    gy = np.abs(np.diff(grey, axis=0))[:, :-1]
    strong = (gx + gy) > 40
    straight = ((gx > 4 * gy) | (gy > 4 * gx)) & strong
    mx, mn = a.max(axis=2), a.min(axis=2)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1), 0)
    return np.array([np.log((counts > 0).sum() / 4096 + 1e-4), counts.max() / q.size,
                     ((a > 235).all(axis=2)).mean(), ((a < 20).all(axis=2)).mean(), sat.mean(),
                     ((gx + gy) < 3).mean(), (gx + gy).mean() / 255, straight.sum() / max(strong.sum(), 1),
                     strong.mean()], dtype=np.float32)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall-clock ms, this thread's CPU ms): with one thread per graph ONNX Runtime computes on the
    calling thread, and its CPU time is what a busy machine disturbs least."""
    t, c = time.perf_counter(), time.thread_time()
    fn()
    return (time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000


class Stage:
    """Turns one stage of a describer on and off, and runs it alone on a picture."""

    def __init__(self, name: str, describer: Describer, opts: DescribeOptions) -> None:
        self.name, self.describer, self.opts = name, describer, opts
        self.kinds = describer.kinds
        self.detector = describer.objects.detector() if name == "detector" else None

    def problem(self) -> str | None:
        if self.name == "detector" and self.detector is None:
            return str(self.describer.objects.problem)
        if self.name == "kind" and self.kinds is None:
            return "the model has no picture-kind model (kind.npz)"
        return None

    def switch(self, on: bool) -> None:
        if self.name == "detector":
            self.opts.objects = on
        else:
            self.describer.kinds = self.kinds if on else None

    def alone(self, img: Image.Image) -> Callable[[], object]:
        if self.detector is not None:
            return lambda: self.detector.detect(img)
        feats = self.describer.primary.encode(self.describer.primary.preprocess.to_array(img)[None])[0]
        return lambda: self.kinds.of_pictures(feats, [img])


def medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def measure(stage: Stage, path: Path, size: tuple[int, int], runs: int) -> dict:
    """One picture's row: describing without and with the stage, the stage alone (and for the kind model
    its pixel statistics now and as first written), medians of ``runs`` interleaved rounds."""
    img = load_image(path, draft_size=size)

    def describe(on: bool) -> tuple[float, float]:
        stage.switch(on)
        return timed(lambda: stage.describer.describe_images([load_image(path, draft_size=size)], [str(path)]))

    for on in (False, True):  # warm-up
        describe(on)
    alone = stage.alone(img)
    got: dict[str, list[tuple[float, float]]] = {"without": [], "with": [], "alone": [], "stats": [], "former": []}
    for _ in range(runs):
        got["without"].append(describe(False))
        got["with"].append(describe(True))
        got["alone"].append(timed(alone))
        if stage.name == "kind":
            got["stats"].append(timed(lambda: picture_kind.pixel_stats(img)))
            got["former"].append(timed(lambda: former_pixel_stats(img)))
    stage.switch(True)
    (b, bc), (w, wc), (d, dc) = (medians(got[k]) for k in ("without", "with", "alone"))
    row = {"picture": path.name, "size": list(img.size), "without_ms": round(b, 1), "with_ms": round(w, 1),
           "ratio": round(w / b, 2), "alone_ms": round(d, 1), "without_cpu_ms": round(bc, 1),
           "with_cpu_ms": round(wc, 1), "cpu_ratio": round(wc / bc, 2), "alone_cpu_ms": round(dc, 1)}
    if stage.name == "kind":
        (s, _), (f, _) = medians(got["stats"]), medians(got["former"])
        row.update(stats_ms=round(s, 2), former_stats_ms=round(f, 2), stats_speedup=round(f / s, 2),
                   stats_identical=bool(np.array_equal(picture_kind.pixel_stats(img), former_pixel_stats(img))))
    return row


def report(rows: list[dict], stage: str, load_ms: float | None) -> dict:
    """Print the table; the summary over all pictures."""
    print("wall-clock ms (CPU ms of the thread)")
    print(f"| picture | decoded size | without {stage} | with {stage} | ratio | {stage} alone |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['picture']} | {r['size'][0]}x{r['size'][1]} | {r['without_ms']} ({r['without_cpu_ms']}) | "
              f"{r['with_ms']} ({r['with_cpu_ms']}) | {r['ratio']}x ({r['cpu_ratio']}x) | "
              f"{r['alone_ms']} ({r['alone_cpu_ms']}) |")
    n = len(rows)
    tb, tw = sum(r["without_ms"] for r in rows), sum(r["with_ms"] for r in rows)
    cb, cw = sum(r["without_cpu_ms"] for r in rows), sum(r["with_cpu_ms"] for r in rows)
    d, dc = sum(r["alone_ms"] for r in rows) / n, sum(r["alone_cpu_ms"] for r in rows) / n
    print(f"| all {n} | | {tb / n:.1f} ({cb / n:.1f}) | {tw / n:.1f} ({cw / n:.1f}) | {tw / tb:.2f}x "
          f"({cw / cb:.2f}x) | {d:.1f} ({dc:.1f}) |")
    summary = {"without_ms": round(tb / n, 1), "with_ms": round(tw / n, 1), "ratio": round(tw / tb, 2),
               "cpu_ratio": round(cw / cb, 2)}
    if stage == "kind":
        s, f = sum(r["stats_ms"] for r in rows) / n, sum(r["former_stats_ms"] for r in rows) / n
        same = all(r["stats_identical"] for r in rows)
        print(f"pixel statistics: {s:.2f} ms a picture, as first written {f:.2f} ms ({f / s:.2f}x); "
              f"the same numbers: {same}")
        summary.update(stats_ms=round(s, 2), former_stats_ms=round(f, 2), stats_speedup=round(f / s, 2),
                       stats_identical=same)
    if load_ms is not None:
        print(f"detector's first load: {load_ms:.0f} ms")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage", choices=["detector", "kind"], default="detector")
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
    stage = Stage(a.stage, describer, opts)
    load_ms = (time.perf_counter() - t0) * 1000 if a.stage == "detector" else None
    if stage.problem():
        print(f"bench_detector: {stage.problem()}", file=sys.stderr)
        return 1
    load_before = os.getloadavg()
    rows = [measure(stage, p, size, a.runs) for p in SAMPLES]
    print(f"{a.stage}: beam {a.beam}, {a.threads or 'all'} thread(s), {a.runs} rounds, median; "
          f"{platform.processor() or ''}")
    summary = report(rows, a.stage, load_ms)
    load_after = os.getloadavg()
    print(f"load average before {tuple(round(x, 2) for x in load_before)}, "
          f"after {tuple(round(x, 2) for x in load_after)}")
    if a.json:
        a.json.write_text(json.dumps({"stage": a.stage, "rows": rows, "load_ms": load_ms and round(load_ms, 1),
                                      "beam": a.beam, "threads": a.threads, "load_average": [load_before, load_after],
                                      "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
