"""``capdesk batch --ray``: pictures per second against the number of Ray workers on this
machine, beside the plain batch in the same run, and the parts of the per-picture cost that
decide how far a cluster can take it.

Each configuration runs the real CLI on the same pictures (read in place; sidecars go to a fresh
``--out`` mirror and a fresh ledger each run), at two batch sizes, ``--runs`` times round-robin;
figures are medians. From the two sizes:
  * rate: (big - small) pictures / (big - small) seconds of wall time, the rate a long batch
    settles at, with every fixed cost (Python, Ray's start, the actors loading the models) taken
    out exactly. (Timing the sidecars as they appear would not do: Ray Data hands results back
    in order, so a slow first chunk holds back finished ones and they arrive in bursts.)
  * fixed: what is left of the small batch's wall time, the start-up a batch pays once;
  * end to end: pictures per second of the big batch, start-up included.
Then, in this process, the driver's share: writing the sidecars and the ledger for already
described pictures (``run_batch`` with a stream that only replays descriptions). Every picture
of a Ray batch passes through that one process, so its rate is the ceiling of any cluster.

    python bench/bench_ray.py [--sizes 80 800] [--runs 3] [--workers 1 2] [--json out.json]

Needs the ``ray`` extra and the everyday photos (../shared/data/everyday, test split).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CAPDESK_SHARED_DATA", ROOT.parent / "shared" / "data")) / "everyday"


def test_pictures(n: int) -> list[Path]:
    meta = json.loads((DATA / "dataset_everyday.json").read_text())
    names = sorted(im["filename"] for im in meta["images"] if im["split"] == "test")
    # Every k-th, so that both sources (COCO's AVIF and Flickr8k's JPEG) are in the sample.
    step = max(1, len(names) // n)
    return [DATA / "images" / name for name in names[::step][:n]]


def run_cli(listing: Path, extra: list[str], n: int) -> float:
    """Wall seconds of one ``capdesk batch`` over the pictures in ``listing``."""
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        env = dict(os.environ, XDG_STATE_HOME=str(Path(tmp) / "state"), RAY_USAGE_STATS_ENABLED="0")
        cmd = [sys.executable, "-m", "capdesk", "batch", "--files-from", str(listing), "--out", str(Path(tmp) / "out"),
               "--sidecar", "txt,xmp", "-q", *extra]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True)
        wall = time.perf_counter() - t0
        written = len(list((Path(tmp) / "out").rglob("*.txt")))
    if proc.returncode != 0 or written != n:
        raise SystemExit(f"{' '.join(extra) or 'plain'}: exit {proc.returncode}, {written} of {n} written\n"
                         f"{proc.stderr.decode(errors='replace')}")
    return wall


def driver_share(pictures: list[Path], runs: int) -> dict:
    """Seconds per picture the starting process spends per picture whatever describes it:
    the skip check, writing both sidecars (atomically, fsync'd) and the ledger."""
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.folders.batch import run_batch
    from capdesk.folders.pathlist import mirror_root
    from capdesk.folders.reading import describe_paths
    from capdesk.session.batch_run import RAY_WRITERS
    from capdesk.sidecars.ledger import Ledger
    from capdesk.sidecars.writer import SidecarOptions, SidecarWriter

    describer = Describer(provider="cpu", options=DescribeOptions(ocr="never"))
    paths = [str(p) for p in pictures]
    t0, c0 = time.perf_counter(), time.process_time()
    described = list(describe_paths(describer, paths))
    describe_s = (time.perf_counter() - t0) / len(paths)
    describe_cpu_s = (time.process_time() - c0) / len(paths)  # all threads: decoding, the model
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-ray-w-") as tmp:
            opts = SidecarOptions(("txt", "xmp"), out_dir=Path(tmp) / "out", out_root=mirror_root(paths))
            writer = SidecarWriter(opts, Ledger(Path(tmp) / "ledger.sqlite"))
            t0 = time.perf_counter()
            result = run_batch(paths, describer, writer, describe=lambda todo: iter(described), writers=RAY_WRITERS)
            times.append((time.perf_counter() - t0) / len(paths))
            assert result.counts() == {"captioned": len(paths)}, result.counts()
            writer.ledger.close()
    return {"driver_ms_per_picture": 1000 * statistics.median(times),
            "describe_ms_per_picture_here": 1000 * describe_s, "describe_cpu_ms_per_picture": 1000 * describe_cpu_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[80, 800], metavar=("SMALL", "BIG"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not DATA.exists():
        raise SystemExit(f"needs the everyday photos at {DATA}")
    small, big = args.sizes
    pictures = test_pictures(big)
    big = len(pictures)
    configs = {"plain": []} | {f"ray {w}": ["--ray", "--ray-workers", str(w)] for w in args.workers}
    runs: dict[str, list[dict]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as tmp:
        lists = {}
        for n in (small, big):
            lists[n] = Path(tmp) / f"pictures{n}.txt"
            lists[n].write_text("".join(f"{p}\n" for p in pictures[:n]), encoding="utf-8")
        for _ in pictures:  # the first reading of each file is the disk's, not the batch's: read them once
            _.read_bytes()
        for r in range(args.runs):
            for name, extra in configs.items():
                t_small, t_big = run_cli(lists[small], extra, small), run_cli(lists[big], extra, big)
                rate = (big - small) / (t_big - t_small)
                res = {"rate_ips": rate, "fixed_s": t_small - small / rate, "end_to_end_ips": big / t_big,
                       "wall_small_s": t_small, "wall_big_s": t_big}
                runs[name].append(res)
                print(f"run {r + 1} {name:8s} {small}: {t_small:5.1f} s  {big}: {t_big:5.1f} s  "
                      f"rate {rate:5.1f}/s  fixed {res['fixed_s']:4.1f} s", flush=True)
    share = driver_share(pictures, args.runs)
    table = {}
    for name, rs in runs.items():
        table[name] = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    base = table["plain"]["rate_ips"]
    for m in table.values():
        m["rate_vs_plain"] = m["rate_ips"] / base
    out = {"sizes": [small, big], "runs": args.runs, "cpus": os.cpu_count(),
           "machine": platform.processor() or platform.machine(), "results": table, "per_run": runs, **share,
           "driver_ceiling_ips": 1000 / share["driver_ms_per_picture"]}
    print(f"\neveryday test-split photos read in place, {os.cpu_count()} CPUs, median of {args.runs} runs\n")
    print(f"| run | rate /s | rate vs plain | fixed start-up s | {big} pictures, end to end /s |")
    print("| --- | --- | --- | --- | --- |")
    for name, m in table.items():
        print(f"| {name} | {m['rate_ips']:.1f} | {m['rate_vs_plain']:.2f}x | {m['fixed_s']:.1f} | "
              f"{m['end_to_end_ips']:.1f} |")
    print(f"\nthe starting process's own share: {share['driver_ms_per_picture']:.2f} ms per picture "
          f"(ceiling {out['driver_ceiling_ips']:.0f} pictures/s whatever the cluster); describing here, "
          f"in-process: {share['describe_ms_per_picture_here']:.1f} ms per picture, "
          f"{share['describe_cpu_ms_per_picture']:.1f} CPU-ms per picture (text reading off)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
