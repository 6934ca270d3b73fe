"""A folder batch as a user runs it: ``capdesk batch`` over N pictures, wall time per run, pictures a second.

Compares, in one run and interleaved (A B C A B C ...), this tree with the object detector, this tree without
it (``CAPDESK_DETECTOR`` naming no folder), and optionally an older checkout (``--baseline DIR``, e.g. a
``git worktree`` of the commit before a change): so that a change to the file handling of a batch (reading
sidecars and pictures from descriptors, link checks) can be told apart from the detector's cost. Each run
gets a fresh copy of the pictures and a fresh ledger; text reading is off (``--ocr never``) so that the
figures are about the rest. Medians of ``--runs``.

    python bench/bench_batch.py --pictures 120 --runs 3 --baseline /tmp/capdesk-before
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ["astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg"]


def one_run(tree: Path, pictures: int, env_extra: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory(prefix="capdesk-bench-batch-") as tmp:
        folder = Path(tmp) / "pictures"
        folder.mkdir()
        for i in range(pictures):
            name = SAMPLES[i % len(SAMPLES)]
            shutil.copy(ROOT / "resources" / "samples" / name, folder / f"{i:04d}-{name}")
        env = dict(os.environ, PYTHONPATH=str(tree), XDG_STATE_HOME=f"{tmp}/state", XDG_DATA_HOME=f"{tmp}/data",
                   XDG_CONFIG_HOME=f"{tmp}/config", **env_extra)
        started = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "capdesk", "batch", "-q", "--ocr", "never", str(folder)],
                           cwd=tree, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if r.returncode != 0:
            raise SystemExit(f"{tree}: batch failed ({r.returncode}): {r.stderr[-500:]}")
        written = len(list(folder.glob("*.xmp")))
        if written != pictures:
            raise SystemExit(f"{tree}: {written} of {pictures} pictures got sidecars")
        return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pictures", type=int, default=120)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="an older checkout to compare against")
    ns = ap.parse_args()
    modes = {"this tree": (ROOT, {}), "this tree, no detector": (ROOT, {"CAPDESK_DETECTOR": "/nonexistent"})}
    if ns.baseline is not None:
        modes["baseline"] = (ns.baseline.resolve(), {})
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(ns.runs):
        for m, (tree, extra) in modes.items():
            times[m].append(one_run(tree, ns.pictures, extra))
    load = os.getloadavg()[0]
    print(f"{ns.pictures} pictures, {ns.runs} runs each, interleaved; "
          f"load average {load:.1f} on {os.cpu_count()} cores")
    base = statistics.median(times["baseline"]) if "baseline" in times else None
    for m, ts in times.items():
        med = statistics.median(ts)
        ratio = f"  {med / base:.2f}x the baseline's time" if base else ""
        print(f"{m:>24}: median {med:6.2f} s ({ns.pictures / med:5.1f} pictures/s), "
              f"runs {', '.join(f'{t:.2f}' for t in ts)}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
