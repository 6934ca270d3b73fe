"""Engine speed: ONNX Runtime engine against the same network in PyTorch eager, same run.

Measures, each as the median of several runs:
  * the encoder alone (the floor no caption can beat);
  * model time per image: preprocessed image -> caption, single images and batches, beam 1 and 3;
  * file time per image: image file -> description, through the describer as the CLI does it
    (loading, the model, routing, tags and pixel facts; text reading off).
PyTorch eager runs the very same weights (rebuilt from the bundle's graphs) with the same
numpy beam search, so the ratio is the engine's own gain. Needs the ``train`` extra for the
baseline; without torch only the engine is measured.

    python bench/bench_engine.py [--model NAME] [--runs 7] [--provider cpu] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.model.beam import beam_search  # noqa: E402
from capdesk.model.decoders import ArrayDecoder  # noqa: E402
from capdesk.model.engine import Engine  # noqa: E402

SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))


def median_time(fn, runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class TorchBaseline:
    """The same network in PyTorch eager: GridEncoder + the decoder rebuilt from the bundle."""

    def __init__(self, engine: Engine, threads: int) -> None:
        import torch

        from training.decoders import decoder_from_bundle
        from training.encoder import GridEncoder

        torch.set_num_threads(threads)
        self.torch = torch
        enc = engine.bundle.manifest["encoder"]
        self.encoder = GridEncoder(enc["architecture"].split("-")[-1], enc["input_size"]).eval()
        self.decoder, _, _ = decoder_from_bundle(engine.bundle.path)
        self.e = engine

    def memory(self, batch: np.ndarray):
        """What the decoder's LSTM attends to: the encoder's features, or the decoder's own memory of
        them (a tuned encoder top starts from the trunk; a refiner refines)."""
        feats, _, trunk = self.encoder.with_trunk(self.torch.from_numpy(batch))
        return self.decoder.refine(trunk if self.decoder.top is not None else feats)

    def caption(self, batch: np.ndarray, beam: int) -> list[list[int]]:
        torch, dec, e = self.torch, self.decoder, self.e
        with torch.no_grad():
            feats = self.memory(batch)
            h0, c0, proj = dec.init(feats)

            def step(words, h, c, rows):
                out = dec.step(torch.from_numpy(words), torch.as_tensor(h), torch.as_tensor(c),
                               feats[rows], proj[rows])
                return tuple(o.numpy() for o in out)

            hyps = beam_search(ArrayDecoder(lambda _: (h0.numpy(), c0.numpy()), step), batch, beam, e.max_len,
                               e.start, e.end, e.length_alpha, e.block_ngram, banned=(e.pad, e.start, e.unk))
        return [h.ids for h in hyps]


def bundle_mb(eng: Engine) -> float:
    """Megabytes of the model files the bundle's manifest lists (what the app loads)."""
    return round(sum(int(f.get("size", 0)) for f in eng.bundle.manifest.get("files", {}).values()) / 1e6, 1)


def summary(eng: Engine, rows: list[dict], batch: int) -> dict:
    """The figures the issue is judged by: beam 3 on one image against eager, batch throughput, size."""
    by = {r["measure"]: r for r in rows}
    one, many = by["caption beam 3, 1 image"], by[f"caption beam 3, batch {batch}"]
    weights = eng.bundle.manifest.get("weights", {})
    return {"beam3_single_image_ms": one["onnxruntime_ms_per_image"],
            "beam3_single_image_speedup_vs_eager": one.get("speedup"),
            f"beam3_batch{batch}_images_per_s": many["onnxruntime_images_per_s"],
            f"beam3_batch{batch}_speedup_vs_eager": many.get("speedup"),
            "bundle_mb": bundle_mb(eng),
            "weights": weights.get("kind", "float32") if isinstance(weights, dict) else str(weights)}


def compare_captions(eng: Engine, base: TorchBaseline, batch: np.ndarray) -> dict:
    """Do ONNX Runtime and eager say the same? A float32 bundle must give identical captions. A shrunk
    one (float16 encoder, int8 decoder, ``capdesk train shrink``) runs rounded weights against eager's
    float32, so the rule is a tolerance: the first word's probabilities within 0.01, and the
    captions counted that still come out word for word the same."""
    torch = base.torch
    onnx_words = [c.words for c in eng.caption_arrays(batch, 3)]
    eager_words = [[eng.vocab[i] for i in ids] for ids in base.caption(batch, 3)]
    same = sum(a == b for a, b in zip(onnx_words, eager_words))
    h, c, proj, memory = eng.decoder.run_init(eng.caption_input(batch))
    start = np.full(len(batch), eng.start, np.int64)
    p_onnx = np.exp(eng.decoder.step_graph.run(None, {"word": start, "h": h, "c": c, "features": memory,
                                            "projected": proj})[0].astype(np.float64))
    with torch.no_grad():
        tf = base.memory(batch)
        th, tc, tp = base.decoder.init(tf)
        p_eager = torch.exp(base.decoder.step(torch.from_numpy(start), th, tc, tf, tp)[0]).double().numpy()
    diff = float(np.abs(p_onnx - p_eager).max())
    shrunk = "weights" in eng.bundle.manifest
    return {"captions": len(batch), "identical": same, "same_captions": same == len(batch),
            "first_word_probability_max_diff": round(diff, 5),
            "rule": ("shrunk weights: first-word probabilities within 0.01 of eager float32, "
                     f"{'met' if diff < 0.01 else 'NOT met'}; {same} of {len(batch)} captions identical")
            if shrunk else "float32 bundle: every caption identical"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--provider", default="cpu")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0, help="threads for both engines (0: all cores)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args()

    import os

    threads = ns.threads or os.cpu_count() or 1
    eng = Engine(ns.model, provider=ns.provider, threads=ns.threads)
    arrs = [eng.preprocess.load(p)[1] for p in SAMPLES]
    single = arrs[0][None]
    batch = np.stack([arrs[i % len(arrs)] for i in range(ns.batch)])
    # All engine timings first, then PyTorch's: torch's OpenMP threads keep spinning for a while after
    # each call and would steal the cores from ONNX Runtime if the two were interleaved.
    paths = [SAMPLES[i % len(SAMPLES)] for i in range(ns.batch)]
    measures = [
        ("encoder only, 1 image", 1, lambda: eng.encode(single), ("enc", single)),
        (f"encoder only, batch {ns.batch}", ns.batch, lambda: eng.encode(batch), ("enc", batch)),
    ]
    for beam in (1, 3):
        measures.append((f"caption beam {beam}, 1 image", 1, lambda b=beam: eng.caption_arrays(single, b),
                         ("cap", single, beam)))
        measures.append((f"caption beam {beam}, batch {ns.batch}", ns.batch,
                         lambda b=beam: eng.caption_arrays(batch, b), ("cap", batch, beam)))
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.folders.reading import describe_paths

    describer = Describer(ns.model or str(eng.bundle.path), provider=ns.provider, beam=3, threads=ns.threads,
                          options=DescribeOptions(ocr="never"))
    measures.append((f"file -> description beam 3, {ns.batch} files (load, preprocess, model, routing)", ns.batch,
                     lambda: list(describe_paths(describer, paths, beam=3, batch_size=ns.batch)), None))
    rows = []
    for what, n, fn, _ in measures:
        t = median_time(fn, ns.runs) / n
        rows.append({"measure": what, "images": n, "onnxruntime_ms_per_image": round(t * 1000, 2),
                     "onnxruntime_images_per_s": round(1 / t, 1)})
    base = None
    if not ns.no_torch:
        try:
            base = TorchBaseline(eng, threads)
        except ImportError as exc:
            print(f"(no PyTorch baseline: {exc})")
    if base is not None:
        def torch_fn(spec):
            if spec[0] == "enc":
                def run():
                    with base.torch.no_grad():
                        base.encoder(base.torch.from_numpy(spec[1]))
                return run
            return lambda: base.caption(spec[1], spec[2])

        for row, (_, n, _, spec) in zip(rows, measures):
            if spec is None:
                continue
            t_pt = median_time(torch_fn(spec), max(3, ns.runs // 2)) / n
            row.update(pytorch_ms_per_image=round(t_pt * 1000, 2),
                       speedup=round(t_pt / (row["onnxruntime_ms_per_image"] / 1000), 2))
        agreement = compare_captions(eng, base, batch)
        print(f"same captions from both engines: {agreement['same_captions']} ({agreement['rule']})")
    for row in rows:
        print(json.dumps(row))
    info = {"model": eng.name, "provider": eng.provider, "threads": threads, "runs": ns.runs,
            "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "summary": summary(eng, rows, ns.batch), "results": rows}
    if base is not None:
        info["agreement_with_pytorch"] = agreement
    print(json.dumps({"summary": info["summary"]}))
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(info, indent=2))
    print(f"model {eng.name}, provider {eng.provider}, {threads} threads, median of {ns.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
