"""ONNX Runtime execution providers end to end: a folder's pictures a second and one cold picture, on
each provider this onnxruntime offers (CPU, and CUDA where a GPU and onnxruntime-gpu are there), in the
same run and on the same machine, interleaved, medians of several runs.

    python bench/bench_providers.py --photos DIR [--runs 5] [--ocr never] [--json OUT]

``DIR`` holds the photos (the everyday val photos by default, copied to a temporary folder). Each run is a
fresh process (``capdesk batch``, ``capdesk caption``) with a fresh settings folder, as a user starts it;
the optimised-graph cache is kept between runs as an installed CapDesk keeps it, one per provider. The
sidecars of every provider are compared with the CPU's: the same words, or the differences are listed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import finish  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "everyday"


def offered() -> list[str]:
    ask = "import onnxruntime as o; print(' '.join(o.get_available_providers()))"
    out = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, check=True).stdout.split()
    names = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda"}
    return [names[p] for p in out if p in names][::-1]  # cpu first, the baseline


def _env(tmp: Path, provider: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CAPDESK_GRAPH_CACHE")}
    cache = Path(tempfile.gettempdir()) / "capdesk-bench-providers" / provider
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")])),
               XDG_STATE_HOME=f"{tmp}/state", XDG_DATA_HOME=f"{tmp}/data", XDG_CONFIG_HOME=f"{tmp}/config",
               XDG_CACHE_HOME=str(cache))
    return env


def run(provider: str, args: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in MiB, stdout) of ``capdesk ARGS --provider PROVIDER``."""
    with tempfile.TemporaryDirectory(prefix="capdesk-bench-prov-") as tmp:
        cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "capdesk", *args, "--provider", provider]
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, env=_env(Path(tmp), provider), capture_output=True, text=True)
        wall = time.monotonic() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"capdesk {' '.join(args)} --provider {provider} failed ({r.returncode}): {r.stderr[-1500:]}")
    return wall, int(r.stderr.strip().splitlines()[-1]) // 1024, r.stdout


def sidecars(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.txt"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photos", type=Path,
                    help="a folder of photos (default: the first --pictures everyday val photos)")
    ap.add_argument("--pictures", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ocr", default="never", choices=["auto", "always", "never"])
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()
    providers = offered()
    report: dict[str, object] = {"providers": providers, "load_before": os.getloadavg(), "cpus": os.cpu_count()}
    print(f"providers offered: {', '.join(providers)}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="capdesk-bench-data-") as tmp:
        photos = Path(tmp) / "pictures"
        if ns.photos:
            shutil.copytree(ns.photos, photos)
        else:
            images = json.loads((DATA / "dataset_everyday.json").read_text())["images"]
            photos.mkdir()
            for n in sorted(i["filename"] for i in images if i["split"] == "val")[:ns.pictures]:
                shutil.copy(DATA / "images" / n, photos / n)
        n = sum(1 for p in photos.iterdir() if p.is_file())
        one = sorted(p for p in photos.iterdir() if p.is_file())[0]
        jobs = {"folder": ["batch", "-q", "--ocr", ns.ocr, "--out", "{out}", str(photos)],
                "one picture, cold": ["caption", "--ocr", ns.ocr, str(one)]}
        for p in providers:  # two warm-up runs each: the second saves the optimised graphs
            for _ in range(2):
                run(p, ["caption", "--ocr", ns.ocr, str(one)])
        got: dict[str, dict[str, list]] = {p: {j: [] for j in jobs} for p in providers}
        words: dict[str, dict[str, str]] = {}
        for _ in range(ns.runs):
            for job, args in jobs.items():
                for p in providers:
                    with tempfile.TemporaryDirectory(prefix="capdesk-bench-out-") as out:
                        wall, rss, _ = run(p, [a.replace("{out}", out) for a in args])
                        if job == "folder" and p not in words:
                            words[p] = sidecars(Path(out))
                    got[p][job].append((round(wall, 3), rss))
        for job in jobs:
            print(f"\n{job} ({n} pictures)" if job == "folder" else f"\n{job}")
            for p in providers:
                walls = [w for w, _ in got[p][job]]
                wall, rss = statistics.median(walls), statistics.median(r for _, r in got[p][job])
                rate = f", {n / wall:.1f} pictures/s" if job == "folder" else ""
                print(f"  {p}: {wall:.2f} s{rate} (runs {walls}), peak {rss:.0f} MiB")
        base = words.get("cpu", {})
        for p in providers[1:]:
            differ = sorted(k for k in base if words[p].get(k) != base[k])
            report[f"sidecars_differ_{p}"] = differ
            print(f"\nsidecars on {p} differing from cpu: {len(differ)} of {len(base)}")
            for k in differ[:10]:
                print(f"  {k}: cpu {base[k]!r}\n  {' ' * len(k)}  {p} {words[p].get(k)!r}")
        report["runs"] = got
    return finish(report, ns.json)


if __name__ == "__main__":
    raise SystemExit(main())
