"""Teaching safely, the everyday case: a user fine-tunes on a few of their everyday photos, then
describes other everyday photos with automatic routing. Their descriptions should stay what they
were, and the fine-tune should say plainly whether it proved itself.

    python training/studies/teach_everyday.py [--data ../shared/data/everyday] [--n 20] [--others 100]
        [--seed 0] [--work DIR] [--epochs 30]

Draws ``--n`` photos of the data set's test split (with their captions, as ``.txt`` beside each) and
``--others`` other test photos, describes the others, runs ``capdesk train finetune`` into
``DIR/models``, describes the others again with that folder installed, and prints one JSON object:
the verdict, how many of the others changed, and which model described them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def describe(paths: list[str]) -> list[tuple[str, str]]:
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.folders.reading import describe_paths

    d = Describer(None, provider="cpu", options=DescribeOptions(ocr="never"))
    return [(x.model, x.description) for x in describe_paths(d, paths)]


def run(data: Path, n: int, others: int, seed: int, work: Path, epochs: int) -> dict:
    from training.data import read_any
    from training.finetune import finetune, report_lines

    test = sorted(read_any(data).split("test"), key=lambda r: str(r.image))
    pick = random.Random(seed).sample(test, n + others)
    mine, rest = pick[:n], [str(r.image) for r in pick[n:]]
    photos, models = work / "photos", work / "models"
    shutil.rmtree(work, ignore_errors=True)
    photos.mkdir(parents=True)
    for r in mine:
        os.symlink(r.image.resolve(), photos / r.image.name)
        (photos / r.image.name).with_suffix(".txt").write_text("\n".join(r.raw) + "\n", encoding="utf-8")
    os.environ.pop("CAPDESK_MODELS", None)
    before = describe(rest)
    t0 = time.time()
    m = finetune(photos, "my-photos", epochs=epochs, work=work / "run", models_dir=models, progress=False)
    minutes = (time.time() - t0) / 60
    os.environ["CAPDESK_MODELS"] = str(models)
    after = describe(rest)
    same = sum(b[1] == a[1] for b, a in zip(before, after))
    # Had it proved itself, its gate alone decides which of these it describes: mark it so and look again.
    mf = models / "my-photos" / "manifest.json"
    forced = json.loads(mf.read_text(encoding="utf-8"))
    forced["finetune"].update(proved=True, automatic=True)
    mf.write_text(json.dumps(forced), encoding="utf-8")
    if_proved = describe(rest)
    mf.write_text(json.dumps(m_on_disk(m)), encoding="utf-8")
    return {"photos": n, "others": len(rest), "seed": seed, "minutes": round(minutes, 1),
            "report": report_lines(m), "proved": m["finetune"]["proved"],
            "automatic": m["finetune"]["automatic"], "verdict": m["finetune"]["verdict"],
            "unchanged": same, "unchanged_share": round(same / len(rest), 3),
            "described_by_before": dict(Counter(b[0] for b in before)),
            "described_by_after": dict(Counter(a[0] for a in after)),
            "unchanged_had_it_proved": sum(b[1] == a[1] for b, a in zip(before, if_proved)),
            "described_by_had_it_proved": dict(Counter(a[0] for a in if_proved))}


def m_on_disk(m: dict) -> dict:
    """The manifest as finetune wrote it (its return value adds where the bundle went)."""
    return {k: v for k, v in m.items() if k not in ("installed_at", "kept_at")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "everyday"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--others", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--work", default="/tmp/capdesk-teach-everyday")
    ns = ap.parse_args()
    print(json.dumps(run(Path(ns.data), ns.n, ns.others, ns.seed, Path(ns.work), ns.epochs), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
