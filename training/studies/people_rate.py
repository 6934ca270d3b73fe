"""How often a caption names people that none of the five human captions mention.

For each image of a split: the model's caption (through the same describer the app uses, so the
domain gate applies), whether the caption names people (``capdesk.describe.alttext.names_people``) and
whether any of the human captions does. "Before" counts captions that name people wrongly; "said
as fact" counts those the alt-text rule still states without "Probably" for a given
``people_confidence`` (the confidence under which a people-naming caption is hedged). The
threshold is tuned on the val split and the figures reported on test:

    python training/studies/people_rate.py [--data ../shared/data/everyday] [--model NAME] [--beam 1]
                                [--target 0.05] [--cache DIR] [--json out.json]

Tuning rule: the lowest threshold at which, on val, at most ``--target`` of the people-naming
captions said as fact have no person in any human caption. Light on the CPU: one thread, beam 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe.alttext import names_people, word  # noqa: E402
from capdesk.describe.describer import (  # noqa: E402
    LOW_CONFIDENCE,
    PEOPLE_CONFIDENCE,
    DescribeOptions,
    Describer,
    animal_names,
)
from capdesk.folders.reading import describe_paths  # noqa: E402

GRID = [round(0.35 + 0.01 * i, 2) for i in range(56)]  # 0.35 .. 0.90


def split_items(data: Path, split: str, limit: int) -> list[tuple[Path, bool]]:
    """(image, does any human caption name people?) for a Karpathy-format split."""
    ds = json.loads(next(data.glob("dataset_*.json")).read_text())
    out = [(data / "images" / im["filename"], any(names_people(s["raw"]) for s in im["sentences"]))
           for im in ds["images"] if im["split"] == split]
    return out[:limit] if limit else out


def caption_split(describer: Describer, items: list[tuple[Path, bool]], beam: int, cache: Path | None,
                  model_key: str) -> list[dict]:
    """One record per image; cached per model, split and beam so a re-run only re-does the arithmetic."""
    if cache and cache.exists():
        recs = [json.loads(line) for line in cache.read_text().splitlines()]
        if recs and recs[0].get("model_key") == model_key and len(recs) == len(items):
            refs = {p.name: people for p, people in items}  # the word list may have changed since
            return [dict(r, refs_people=refs[r["path"]]) for r in recs]
    recs = []
    t0 = time.monotonic()
    for (path, refs_people), d in zip(items, describe_paths(describer, [p for p, _ in items], beam=beam)):
        if not d.ok:
            print(f"people_rate: {path}: {d.error}", file=sys.stderr)
            continue
        recs.append({"model_key": model_key, "path": path.name, "caption": d.caption.text,
                     "confidence": d.caption.confidence, "in_domain": d.in_domain, "refs_people": refs_people,
                     "tags": d.tags})
        if len(recs) % 200 == 0:
            print(f"people_rate: {len(recs)}/{len(items)} in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return recs


def rates(recs: list[dict], people_confidence: float, animals: frozenset[str] = frozenset()) -> dict:
    """The figures for one threshold (0: no confidence rule for people); ``animals``: the tag names
    that name animals (empty: without the rule that a people caption contradicted by an animal tag
    is hedged)."""
    n = len(recs)
    cap_people = [r for r in recs if names_people(r["caption"])]
    wrong = [r for r in cap_people if not r["refs_people"]]
    right = [r for r in cap_people if r["refs_people"]]

    def as_fact(r: dict) -> bool:
        return word(r["caption"], r["confidence"], r["in_domain"], "", [], None, low_confidence=LOW_CONFIDENCE,
                    people_confidence=people_confidence,
                    animal_tags=[n for n, _ in r.get("tags", []) if n in animals]).said_as == "fact"

    fact_people = [r for r in cap_people if as_fact(r)]
    fact_wrong = [r for r in fact_people if not r["refs_people"]]
    return {
        "people_confidence": people_confidence, "images": n,
        "caption_names_people": len(cap_people),
        "names_people_none_in_refs": len(wrong),
        "rate_of_all_images": round(len(wrong) / max(n, 1), 4),
        "rate_of_people_captions": round(len(wrong) / max(len(cap_people), 1), 4),
        "said_as_fact_names_people": len(fact_people),
        "said_as_fact_none_in_refs": len(fact_wrong),
        "said_as_fact_rate_of_all_images": round(len(fact_wrong) / max(n, 1), 4),
        "said_as_fact_rate_of_people_facts": round(len(fact_wrong) / max(len(fact_people), 1), 4),
        "right_people_captions_hedged_or_withheld": round(
            sum(not as_fact(r) for r in right) / max(len(right), 1), 4),
    }


def tune(recs: list[dict], target: float, animals: frozenset[str]) -> float:
    for x in GRID:
        if rates(recs, x, animals)["said_as_fact_rate_of_people_facts"] <= target:
            return x
    return GRID[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--model", default=None, help="model name or bundle folder (default: the default model)")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (a training job may share the CPU)")
    ap.add_argument("--limit", type=int, default=0, help="first N images of each split (0: all)")
    ap.add_argument("--target", type=float, default=0.05,
                    help="wanted share of people-naming captions said as fact with no person in the human captions")
    ap.add_argument("--cache", type=Path, default=None, help="folder for per-image results (reused when present)")
    ap.add_argument("--json", type=Path, default=None, help="write all figures here")
    ns = ap.parse_args(argv)
    if not (ns.data / "images").is_dir():
        print(f"people_rate: {ns.data}: no images folder (the everyday data set is needed)", file=sys.stderr)
        return 2
    describer = Describer(ns.model, provider="cpu", beam=ns.beam, threads=ns.threads,
                          options=DescribeOptions(ocr="never", tags="never"))
    key = f"{describer.name}:{describer.primary.bundle.manifest['files']['decoder_step.onnx']['sha256']}:{ns.beam}"
    recs = {}
    for split in ("val", "test"):
        cache = ns.cache / f"{describer.name}-{split}-beam{ns.beam}.jsonl" if ns.cache else None
        recs[split] = caption_split(describer, split_items(ns.data, split, ns.limit), ns.beam, cache, key)
    animals = animal_names(describer.primary.labels)
    x = tune(recs["val"], ns.target, animals)
    out = {"model": describer.name, "beam": ns.beam, "target": ns.target, "tuned_on": "val",
           "tuned_people_confidence": x, "shipped_people_confidence": PEOPLE_CONFIDENCE}
    for split in ("val", "test"):
        out[split] = {"before": rates(recs[split], 0.0),  # the old rule: only the confidence under 0.35
                      "animal_rule": rates(recs[split], 0.0, animals),
                      "after": rates(recs[split], x, animals),  # both rules, the threshold tuned on val
                      "shipped": rates(recs[split], PEOPLE_CONFIDENCE, animals)}
    out["sweep_val"] = [rates(recs["val"], g, animals) for g in GRID[::5]]
    text = json.dumps(out, indent=2)
    print(text)
    if ns.json:
        ns.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
