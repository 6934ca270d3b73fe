"""What a user waits for, against a baseline checkout in the same run: a folder (``capdesk batch``, pictures a
second, default settings and ``--ocr never``), one cold picture (``capdesk caption ONE.png``: wall time and
peak memory), and text on photos of signs (``--ocr auto``: how many signs reach the alt text, how many
photos without text get any, and what the test for text costs a picture).

    python bench/bench_user_speed.py --baseline /tmp/base48 --runs 5 [--pictures 200] [--json out.json]

Every command runs as a user runs it, in a fresh process with fresh settings, ledger and output folders;
the trees are interleaved (this, baseline, this, baseline, ...) so that the load of a shared machine falls
on both alike; figures are medians of ``--runs``. Python may write its bytecode (to a cache of the
bench's own), as an installed CapDesk has it. The photos: the first ``--pictures`` val photos of
``../shared/data/everyday`` (by file name), and the val photos below, looked at one by one: 16 whose point
is a sign, a banner or a printed shirt, and 44 without any text.
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

def _names(text: str) -> list[str]:
    return text.split()


# Val photos whose text a person reads at 224 px ("FREE HUGS", "STOP", "Run for Rights", "pepco Energy
# Services", "CHINA SHIPPING", a shirt saying "GENETIC FREAK", a Chinese notice with a phone number).
SIGNS = _names("""3286761458_34af7e4499 3005124440_c096b310fb 476740978_45b65ebe0c 000000336587 000000097988
2914800692_0c512d27b8 3583293892_c96af8cd98 3331525712_af1dcc47f2 3044359043_627488ddf0 261883591_3f2bca823c
1425919702_ddb761aeec 000000499181 3679407035_708774de34 2714674623_8cd05ac114 3286543624_7a327f79ae
3091580843_178042c50b""")
# Val photos without any text (dogs, beaches, children, a bathroom, a tulip field, roof tiles).
NO_TEXT = _names("""3401902253_cd27e6d0fe 2596619849_7b635dd310 000000089232 3425685827_03683e8e5a 505944126_f9a6ab8944
3380519003_9f91d5a7fb 2517284816_9b8fd3c6b6 3292277400_f95cdd13d1 186346360_541047336f 525538142_7348f0bce7
3146355833_1b7fc80210 1388970365_162edcceb4 3689727848_b53f931130 000000515025 326028454_fb396167e6
2142232919_c857a09dd7 2140305708_591d10b54d 3423509305_e399d005db 3294830188_e46bd9b93c 3215108916_0473007b47
2135502491_a15c6b5eae 000000193348 000000369323 3094278545_febac56382 000000329323 3275711232_e261143664
3718305988_fe2c91fd44 1355935187_2c99648138 000000308631 460478198_83039f2593 2483792149_a9b4ffecec
2701271123_6761bc5f26 462080147_ca088e6541 2693539377_5442430f81 000000466125 2282522980_45cfa8e0cf
2429212017_77fc107699 2399551242_c62a46dd5f 3653484549_f316590b0f 000000134096 3448490813_f9623e864d
2460159430_71ab1aacfa 3587596696_9c5964c94d 1077546505_a4f6c4daa9""")


def _env(tree: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CAPDESK_GRAPH_CACHE")}
    # The cache folder (optimised graphs, capdesk.model.graphcache) is kept from run to run, one per tree,
    # as an installed CapDesk keeps it; settings, ledger and state are fresh each run.
    cache = Path(tempfile.gettempdir()) / "capdesk-bench-cache" / str(tree).strip("/").replace("/", "_")
    env.update(PYTHONPATH=str(tree), XDG_STATE_HOME=f"{tmp}/state", XDG_DATA_HOME=f"{tmp}/data",
               XDG_CONFIG_HOME=f"{tmp}/config", XDG_CACHE_HOME=str(cache),
               PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "capdesk-bench-pyc" / tree.name))
    return env


def run(tree: Path, args: list[str]) -> tuple[float, int, str, float]:
    """(wall seconds, peak RSS in MiB, stdout, CPU seconds: user and system) of ``capdesk ARGS`` run in
    ``tree``. The CPU time is what a shared machine's load disturbs least."""
    with tempfile.TemporaryDirectory(prefix="capdesk-bench-user-") as tmp:
        cmd = ["/usr/bin/time", "-f", "%U %S %M", sys.executable, "-m", "capdesk", *args]
        started = time.monotonic()
        r = subprocess.run(cmd, cwd=tree, env=_env(tree, Path(tmp)), capture_output=True, text=True)
        wall = time.monotonic() - started
    if r.returncode not in (0, 1):
        raise SystemExit(f"{tree}: capdesk {' '.join(args)} failed ({r.returncode}): {r.stderr[-800:]}")
    user, system, peak = r.stderr.strip().splitlines()[-1].split()
    return wall, int(peak) // 1024, r.stdout, float(user) + float(system)


def folder_of(names: list[str], tmp: Path) -> Path:
    folder = tmp / "pictures"
    folder.mkdir()
    for n in names:
        shutil.copy(DATA / "images" / n, folder / n)
    return folder


def val_photos(n: int) -> list[str]:
    images = json.loads((DATA / "dataset_everyday.json").read_text())["images"]
    return sorted(i["filename"] for i in images if i["split"] == "val")[:n]


def measure(trees: dict[str, Path], jobs: dict[str, list[str]], runs: int) -> dict[str, dict[str, list]]:
    """Each job on each tree, ``runs`` times, interleaved; two first runs of each tree warm the caches (the
    second is the one that saves the optimised graphs) and are dropped."""
    got: dict[str, dict[str, list]] = {t: {j: [] for j in jobs} for t in trees}
    for tree in [*trees.values()] * 2:
        run(tree, ["caption", str(ROOT / "resources" / "samples" / "page.png")])
    for _ in range(runs):
        for job, args in jobs.items():
            for name, tree in trees.items():
                with tempfile.TemporaryDirectory(prefix="capdesk-bench-out-") as out:
                    wall, rss, _, cpu = run(tree, [a.replace("{out}", out) for a in args])
                got[name][job].append((round(wall, 3), rss, round(cpu, 2)))
    return got


def signs_said(tree: Path, folder: Path) -> dict[str, object]:
    """How many sign photos get 'Text:' in the default alt text, and how many no-text photos get any text."""
    _, _, out, _ = run(tree, ["caption", "--json", *[str(folder / f"{n}.avif") for n in SIGNS + NO_TEXT]])
    recs = {Path(r["path"]).stem: r for r in map(json.loads, out.splitlines())}
    return {"signs_said": sum('Text: "' in (recs[n]["description"] or "") for n in SIGNS), "signs": len(SIGNS),
            "no_text_with_text": sum(bool(recs[n]["text"]) for n in NO_TEXT), "no_text": len(NO_TEXT),
            "said": {n: recs[n]["text"] for n in SIGNS}}


def presence_cost(runs: int) -> dict[str, float]:
    """The test for text alone, in this process: ms a picture (median over ``runs`` passes of the sign and
    no-text photos), and how many of each it finds."""
    sys.path.insert(0, str(ROOT))
    from capdesk.describe import text_presence
    from capdesk.imageio import load_image

    signs = [load_image(DATA / "images" / f"{n}.avif") for n in SIGNS]
    plain = [load_image(DATA / "images" / f"{n}.avif") for n in NO_TEXT]
    text_presence.has_text(signs[0])  # the session, made once
    passes = []
    for _ in range(runs):
        t = time.perf_counter()
        found = [text_presence.has_text(im) for im in signs + plain]
        passes.append((time.perf_counter() - t) / len(found) * 1000)
    return {"ms_a_picture": round(statistics.median(passes), 1), "signs_found": sum(found[:len(signs)]),
            "no_text_found": sum(found[len(signs):])}


def main() -> int:
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True, help="an older checkout (git worktree) to compare")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pictures", type=int, default=200)
    ap.add_argument("--only", choices=["folder", "cold", "text"], nargs="*", default=["folder", "cold", "text"])
    ap.add_argument("--data", type=Path, default=DATA, help="the everyday photos (default: ../shared/data/everyday)")
    ap.add_argument("--picture", type=Path, help="the cold picture (default: the first val photo, as PNG)")
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()
    DATA = ns.data.resolve()
    trees = {"this tree": ROOT, "baseline": ns.baseline.resolve()}
    report: dict[str, object] = {"load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="capdesk-bench-data-") as tmp:
        photos = folder_of(val_photos(ns.pictures), Path(tmp))
        one = Path(tmp) / "one.png"
        from PIL import Image

        Image.open(ns.picture or photos / sorted(os.listdir(photos))[0]).convert("RGB").save(one)
        jobs = {}
        if "folder" in ns.only:
            jobs["folder, default"] = ["batch", "-q", "--out", "{out}", str(photos)]
            jobs["folder, --ocr never"] = ["batch", "-q", "--ocr", "never", "--out", "{out}", str(photos)]
        if "cold" in ns.only:
            jobs["one picture, cold"] = ["caption", str(one)]
        got = measure(trees, jobs, ns.runs) if jobs else {}
        for job in jobs:
            print(f"\n{job}")
            for name in trees:
                walls = [w for w, _, _ in got[name][job]]
                rss = statistics.median(r for _, r, _ in got[name][job])
                cpu = statistics.median(c for _, _, c in got[name][job])
                wall = statistics.median(walls)
                rate = f", {ns.pictures / wall:.1f} pictures/s" if job.startswith("folder") else ""
                print(f"  {name}: {wall:.2f} s{rate} (runs {walls}), peak {rss:.0f} MiB, CPU {cpu:.2f} s")
        report["runs"] = got
        if "text" in ns.only:
            sign_dir = DATA / "images"
            report["text"] = {name: signs_said(tree, sign_dir) for name, tree in trees.items()}
            report["presence"] = presence_cost(ns.runs)
            print("\ntext on photos of signs (default settings)")
            for name in trees:
                t = report["text"][name]
                print(f"  {name}: signs in the alt text {t['signs_said']}/{t['signs']}, "
                      f"photos without text given text {t['no_text_with_text']}/{t['no_text']}")
            print(f"  the test for text: {report['presence']}")
    return finish(report, ns.json)


if __name__ == "__main__":
    raise SystemExit(main())
