"""The fine-tuning demo, the user's case end to end: a few hundred aerial photos with captions in
a folder, ``capdesk train finetune`` from the default model, then the new model on RSICD's test.

    python training/studies/finetune_demo.py [--data ../shared/data/rsicd] [--n 300] [--seed 0] [--work DIR]

The photos are linked, not copied, into ``DIR/photos`` (one ``.txt`` of captions beside each, as a
user would have them), drawn at random with ``--seed`` from the data set's training split. The
model is installed into ``DIR/models``; nothing is written to the user's model folder. Prints
one JSON object: held-out figures before and after, test figures at beam 3, minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def lay_out(data: Path, n: int, seed: int, folder: Path) -> int:
    from training.data import read_any

    train = read_any(data).split("train")
    pick = random.Random(seed).sample(train, min(n, len(train)))
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for r in pick:
        link = folder / r.image.name
        os.symlink(r.image.resolve(), link)
        link.with_suffix(".txt").write_text("\n".join(r.raw) + "\n", encoding="utf-8")
    return len(pick)


def routed_share(data: Path, models: Path, name: str, n: int) -> dict:
    """Of ``n`` RSICD test photos described with automatic routing, how many the new model describes:
    beside every installed model, and beside the everyday model alone."""
    from collections import Counter

    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.folders.reading import describe_paths
    from capdesk.model.bundle import discover, open_bundle
    from training.data import read_any

    paths = [str(r.image) for r in sorted(read_any(data).split("test"), key=lambda r: str(r.image))[:n]]
    os.environ["CAPDESK_MODELS"] = str(models)
    opts = DescribeOptions(ocr="never")
    out = {"photos": len(paths)}
    for label, others in (("all installed", None),
                          ("everyday and the new model", [b for b in discover()[0] if b.name == "everyday"]
                           + [open_bundle(models / name)])):
        said = Counter(d.model for d in describe_paths(Describer(None, provider="cpu", options=opts, others=others,
                                                                 fixed=False), paths))
        out[label] = dict(said)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "rsicd"))
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--base", default="everyday")
    ap.add_argument("--name", default="aerial-300")
    ap.add_argument("--work", default="/tmp/capdesk-finetune-demo")
    ap.add_argument("--routed", type=int, default=300, help="RSICD test photos described with automatic routing")
    ns = ap.parse_args()
    work = Path(ns.work)
    photos, models = work / "photos", work / "models"
    count = lay_out(Path(ns.data), ns.n, ns.seed, photos)
    shutil.rmtree(models / ns.name, ignore_errors=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "capdesk", "train", "finetune", "--data", str(photos), "--base", ns.base,
                    "--out", ns.name, "--models-dir", str(models)], check=True, env=env, cwd=ROOT,
                   stdout=sys.stderr)  # stdout is this script's one JSON object
    minutes = (time.time() - t0) / 60
    manifest = json.loads((models / ns.name / "manifest.json").read_text(encoding="utf-8"))
    test = subprocess.run([sys.executable, "-m", "capdesk", "train", "evaluate", str(models / ns.name), ns.data,
                           "--beams", "3"], check=True, capture_output=True, text=True, cwd=ROOT)
    res = json.loads(test.stdout)
    held = manifest["metrics"]["heldout"]
    ft = manifest.get("finetune", {})
    print(json.dumps({
        "photos": count, "seed": ns.seed, "base": ns.base, "minutes": round(minutes, 1),
        "train_images": manifest["training"]["data"]["train"]["images"], "heldout_images": held["images"],
        "new_words": len(manifest["training"]["new_words"]),
        "heldout_greedy": {k: {m: round(held[k].get(m, float("nan")), 3) for m in ("BLEU-4", "CIDEr")}
                           for k in ("before", "after")},
        "test_beam3": {m: round(res["beam3"][m], 3) for m in ("BLEU-1", "BLEU-4", "CIDEr")},
        "test_images": res["images"],
        "verdict": ft.get("verdict"), "proved": ft.get("proved"), "automatic": ft.get("automatic"),
        "proof": {k: ft.get(k) for k in ("heldout", "others", "gate")},
        "routed_automatically": routed_share(Path(ns.data), models, ns.name, ns.routed),
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
