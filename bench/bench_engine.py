"""Engine speed: ONNX Runtime engine against the same network in PyTorch eager, same run.

Measures, each as the median of several runs:
  * the encoder alone (the floor no caption can beat);
  * model time per image: preprocessed image -> caption, single images and batches, beam 1 and 3;
  * file time per image: image file -> caption, as the CLI does it.
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

from capdesk.beam import beam_search  # noqa: E402
from capdesk.engine import Engine  # noqa: E402

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

        from training.encoder import GridEncoder
        from training.export import decoder_from_bundle

        torch.set_num_threads(threads)
        self.torch = torch
        enc = engine.bundle.manifest["encoder"]
        self.encoder = GridEncoder(enc["architecture"].split("-")[-1], enc["input_size"]).eval()
        self.decoder, _, _ = decoder_from_bundle(engine.bundle.path)
        self.e = engine

    def caption(self, batch: np.ndarray, beam: int) -> list[list[int]]:
        torch, dec, e = self.torch, self.decoder, self.e
        with torch.no_grad():
            feats, _ = self.encoder(torch.from_numpy(batch))
            h0, c0, proj = dec.init(feats)

            def step(words, h, c, rows):
                out = dec.step(torch.from_numpy(words), torch.as_tensor(h), torch.as_tensor(c),
                               feats[rows], proj[rows])
                return tuple(o.numpy() for o in out)

            hyps = beam_search((h0.numpy(), c0.numpy()), step, len(batch), beam, e.max_len, e.start, e.end,
                               e.length_alpha, e.block_ngram, banned=(e.pad, e.start, e.unk))
        return [h.ids for h in hyps]


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
    base = None
    if not ns.no_torch:
        try:
            base = TorchBaseline(eng, threads)
        except ImportError as exc:
            print(f"(no PyTorch baseline: {exc})")

    rows = []

    def record(what: str, images: int, ort_fn, torch_fn=None) -> None:
        t_ort = median_time(ort_fn, ns.runs) / images
        row = {"measure": what, "images": images, "onnxruntime_ms_per_image": round(t_ort * 1000, 2),
               "onnxruntime_images_per_s": round(1 / t_ort, 1)}
        if base is not None and torch_fn is not None:
            t_pt = median_time(torch_fn, max(3, ns.runs // 2)) / images
            row.update(pytorch_ms_per_image=round(t_pt * 1000, 2), speedup=round(t_pt / t_ort, 2))
        rows.append(row)
        print(json.dumps(row), flush=True)

    def torch_encoder(x: np.ndarray):
        if base is None:
            return None

        def run():
            with base.torch.no_grad():
                base.encoder(base.torch.from_numpy(x))
        return run

    record("encoder only, 1 image", 1, lambda: eng.encode(single), torch_encoder(single))
    record(f"encoder only, batch {ns.batch}", ns.batch, lambda: eng.encode(batch), torch_encoder(batch))
    for beam in (1, 3):
        record(f"caption beam {beam}, 1 image", 1, lambda b=beam: eng.caption_arrays(single, b),
               (lambda b=beam: base.caption(single, b)) if base else None)
        record(f"caption beam {beam}, batch {ns.batch}", ns.batch, lambda b=beam: eng.caption_arrays(batch, b),
               (lambda b=beam: base.caption(batch, b)) if base else None)
    paths = [SAMPLES[i % len(SAMPLES)] for i in range(ns.batch)]
    record(f"file -> caption beam 3, {ns.batch} files (load, preprocess, model)", ns.batch,
           lambda: list(eng.caption_paths(paths, beam=3, batch_size=ns.batch)))
    if base:  # the two must agree, or the comparison means nothing
        same = [c.words for c in eng.caption_arrays(batch, 3)] == [
            [eng.vocab[i] for i in ids] for ids in base.caption(batch, 3)]
        print(f"same captions from both engines: {same}")
    info = {"model": eng.name, "provider": eng.provider, "threads": threads, "runs": ns.runs,
            "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "results": rows}
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(info, indent=2))
    print(f"model {eng.name}, provider {eng.provider}, {threads} threads, median of {ns.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
