"""Where a picture's time goes: CPU ms per picture for each stage of describing, each measured alone on one
thread, beside the networks' own share of it, then the whole describing path (the detector beside the
caption model, as a folder runs it) and ``capdesk batch`` itself, with the ratio of what they cost to the
sum of the stages.

    python bench/bench_stages.py [--pictures 64] [--runs 3] [--json out.json]

Pictures: the first ``--pictures`` val photos of ``../shared/data/everyday`` (by file name), or
resources/samples when the data set is absent. Every stage runs over all pictures in each of ``--runs``
rounds; a stage's figure is the median round's CPU time of the process divided by the pictures (nothing else
runs meanwhile; the picture decoders may use threads of their own). "network" is the CPU time inside ONNX
Runtime's ``run`` alone (with one thread per graph it computes on the calling thread). The whole path and
``capdesk batch`` are measured in CPU time of the process (every thread) and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The sidecars' ledger and settings of a run of its own, never the user's.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="capdesk-stages-state-")
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="capdesk-stages-config-")
DATA = ROOT.parent / "shared" / "data" / "everyday"

import onnxruntime as ort  # noqa: E402

_network = defaultdict(float)  # seconds of thread CPU inside session.run, by the stage running it
_stage = ["-"]
_real_run = ort.InferenceSession.run


def _timed_run(self, *args, **kwargs):
    t = time.thread_time()
    try:
        return _real_run(self, *args, **kwargs)
    finally:
        _network[_stage[0]] += time.thread_time() - t


ort.InferenceSession.run = _timed_run


def pictures(n: int) -> list[Path]:
    if (DATA / "dataset_everyday.json").is_file():
        d = json.loads((DATA / "dataset_everyday.json").read_text())
        names = sorted(i["filename"] for i in d["images"] if i["split"] == "val")[:n]
        return [DATA / "images" / name for name in names]
    samples = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))
    return (samples * (n // max(1, len(samples)) + 1))[:n]


def stages(paths: list[Path], runs: int) -> dict[str, dict[str, float]]:
    from capdesk.describe import text_presence
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.describe.pixelfacts import picture_facts
    from capdesk.folders.batch import write_described
    from capdesk.model.domain import Route
    from capdesk.sidecars.writer import SidecarOptions, SidecarWriter

    d = Describer(options=DescribeOptions(ocr="never"), threads=1)
    eng = d.primary
    det = d.objects.detector()
    chunk = 8
    out_dir = Path(tempfile.mkdtemp(prefix="capdesk-stages-"))
    root = Path(os.path.commonpath([str(p.parent) for p in paths]))
    writer = SidecarWriter(SidecarOptions(out_dir=out_dir, out_root=root, overwrite=True))
    state: dict = {}

    def decode():
        state["images"] = [d.load_picture(p) for p in paths]
        for im in state["images"]:
            im.load()

    def preprocess():
        state["arrays"] = [eng.preprocess.to_array(im) for im in state["images"]]

    def encoder():
        import numpy as np
        state["named"] = []
        for i in range(0, len(paths), chunk):
            state["named"].append(eng.encode_named(np.stack(state["arrays"][i:i + chunk])))

    def route_and_kind():
        state["routes"], state["kinds"] = [], []
        for k, named in enumerate(state["named"]):
            ims = state["images"][k * chunk:(k + 1) * chunk]
            state["routes"] += d.route(named["features"])
            state["kinds"] += d.picture_kinds(ims, named["features"])

    def decoder():
        state["caps"], state["probs"] = [], []
        for named in state["named"]:
            probs = eng.concepts.probabilities(named["features"]) if eng.concepts else None
            state["probs"] += list(probs) if probs is not None else [None] * len(named["features"])
            state["caps"] += eng.decode(eng.decoder_input(named), None, named.get("class_logits"),
                                        d._grounding(eng, probs))

    def detector():
        state["objects"] = [det.detect(im) if det else [] for im in state["images"]]

    def text_test():
        # as --ocr auto runs it: the text gate where the describer has one (it reads the grid), then the finder
        d.options.ocr = "auto"
        looks = [True] * len(paths)
        if hasattr(d, "may_hold_text"):
            looks = [t for k, named in enumerate(state["named"])
                     for t in d.may_hold_text(named["features"], state["kinds"][k * chunk:(k + 1) * chunk])]
        d.options.ocr = "never"
        state["text"] = [text_presence.has_text(im) if look else False for im, look in zip(state["images"], looks)]

    def facts():
        for im in state["images"]:
            picture_facts(im)

    def finish():
        state["described"] = [
            d._finish(str(p), im, cap, eng, r if isinstance(r, Route) else r, pr, ob, k)
            for p, im, cap, r, pr, ob, k in zip(paths, state["images"], state["caps"], state["routes"],
                                                 state["probs"], state["objects"], state["kinds"])]

    def sidecars():
        for res in state["described"]:
            for f in out_dir.rglob("*"):
                if f.is_file():
                    f.unlink()
            write_described(res, writer)

    order = [("decode", decode), ("preprocess", preprocess), ("encoder", encoder),
             ("route and kind", route_and_kind), ("decoder (beam)", decoder), ("detector", detector),
             ("text gate and test", text_test), ("pixel facts", facts), ("finish (policy, facts, words)", finish),
             ("sidecars", sidecars)]
    rounds: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(runs + 1):  # the first round warms every graph and cache, and is not counted
        for name, fn in order:
            _stage[0] = name
            _network[name] = 0.0
            t = time.process_time()
            fn()
            rounds[name].append((time.process_time() - t, _network[name]))
    n = len(paths)
    out = {}
    for name, _ in order:
        counted = sorted(rounds[name][1:])
        total, net = counted[len(counted) // 2]
        out[name] = {"cpu_ms": round(1000 * total / n, 2), "network_ms": round(1000 * net / n, 2)}
    return out


def whole_path(paths: list[Path], runs: int) -> dict[str, float]:
    """describe_chunk over chunks of 8, the detector beside (as a folder runs it), one chunk at a time."""
    from capdesk.describe.describer import DescribeOptions, Describer

    d = Describer(options=DescribeOptions(ocr="never"))
    chunks = [[(str(p), d.load_picture(p), None) for p in paths[i:i + 8]] for i in range(0, len(paths), 8)]
    d.describe_chunk(chunks[0])
    cpu, wall = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        for ch in chunks:
            d.describe_chunk(ch)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    n = len(paths)
    return {"cpu_ms": round(1000 * statistics.median(cpu) / n, 2),
            "wall_ms": round(1000 * statistics.median(wall) / n, 2)}


def batch(paths: list[Path], runs: int, ocr: str) -> dict[str, float]:
    """``capdesk batch`` of the pictures (a folder of links to them), as a user runs it."""
    cpu, wall = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="capdesk-stages-batch-") as tmp:
            folder = Path(tmp) / "in"
            folder.mkdir()
            for p in paths:
                (folder / p.name).symlink_to(p)
            env = dict(os.environ, XDG_STATE_HOME=f"{tmp}/state", XDG_CONFIG_HOME=f"{tmp}/config",
                       XDG_DATA_HOME=f"{tmp}/data", PYTHONPATH=str(ROOT))
            cmd = ["/usr/bin/time", "-f", "%U %S", sys.executable, "-m", "capdesk", "batch", str(folder), "--out",
                   f"{tmp}/out", "-q", "--ocr", ocr]
            started = time.perf_counter()
            r = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall.append(time.perf_counter() - started)
            if r.returncode not in (0, 1):
                raise SystemExit(f"capdesk batch failed: {r.stderr[-600:]}")
            user, system = r.stderr.strip().splitlines()[-1].split()
            cpu.append(float(user) + float(system))
    n = len(paths)
    return {"pictures_per_s": round(n / statistics.median(wall), 1),
            "cpu_ms": round(1000 * statistics.median(cpu) / n, 2),
            "wall_ms": round(1000 * statistics.median(wall) / n, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pictures", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch-pictures", type=int, default=200, help="pictures for the capdesk batch rows")
    ap.add_argument("--no-batch", action="store_true")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    paths = pictures(a.pictures)
    report: dict = {"pictures": len(paths), "load_before": os.getloadavg()}
    report["stages"] = st = stages(paths, a.runs)
    total = sum(s["cpu_ms"] for s in st.values())
    nets = sum(s["network_ms"] for s in st.values())
    print(f"{'stage':34} {'CPU ms':>8} {'network ms':>11}")
    for name, s in st.items():
        print(f"{name:34} {s['cpu_ms']:8.2f} {s['network_ms']:11.2f}")
    print(f"{'sum of the stages':34} {total:8.2f} {nets:11.2f}")
    report["sum_cpu_ms"], report["sum_network_ms"] = round(total, 2), round(nets, 2)
    report["whole_path"] = w = whole_path(paths, a.runs)
    alone = total - st["sidecars"]["cpu_ms"] - st["text gate and test"]["cpu_ms"]
    print(f"whole describing path (--ocr never, detector beside, all cores): CPU {w['cpu_ms']} ms, wall {w['wall_ms']}"
          f" ms a picture; CPU / sum of its stages alone {w['cpu_ms'] / alone:.2f}")
    if not a.no_batch:
        bp = pictures(a.batch_pictures)
        for ocr in ("auto", "never"):
            b = report[f"batch_ocr_{ocr}"] = batch(bp, a.runs, ocr)
            print(f"capdesk batch --ocr {ocr}, {len(bp)} pictures: {b['pictures_per_s']} pictures/s, "
                  f"CPU {b['cpu_ms']} ms a picture (CPU / network sum {b['cpu_ms'] / nets:.2f}), "
                  f"wall {b['wall_ms']} ms")
    from report import finish
    return finish(report, a.json)


if __name__ == "__main__":
    raise SystemExit(main())
