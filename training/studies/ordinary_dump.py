"""The evidence of ordinary pictures, stored once, and the alt texts the policy as it is now makes of it:
how the rules for pictures from outside Flickr and COCO are tuned without describing them again.

    python training/studies/ordinary_dump.py --dump tuning.dump.jsonl DIR/*
    python training/studies/ordinary_dump.py --replay tuning.dump.jsonl > out.jsonl
    python training/studies/ordinary_eval.py training/studies/ordinary_tuning_labels.csv out.jsonl

The replayed lines carry the fields of ``capdesk caption --json`` that ``ordinary_eval.py`` reads
(``path``, ``description``, ``said_as``). Default settings, as ``capdesk caption`` has them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training" / "studies"))


def dump(paths: list[str], out: Path) -> None:
    from capdesk.describe.describer import Describer
    from capdesk.folders.reading import describe_paths

    engine = Describer(None)  # automatic routing and the default options, as `capdesk caption --json` runs
    with out.open("w", encoding="utf-8") as f:
        for d in describe_paths(engine, paths):
            rec = d.evidence.to_record() if d.evidence is not None else None
            f.write(json.dumps({"path": str(d.path), "record": rec, "description": d.description,
                                "said_as": str(d.said_as)}) + "\n")
            f.flush()


def replay(dump_file: Path) -> None:
    from facts_eval import _fact_check

    from capdesk.describe import composer, policy
    from capdesk.describe.evidence import PictureEvidence

    for line in dump_file.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if not r["record"]:
            print(json.dumps({"path": r["path"], "description": "", "said_as": "none"}))
            continue
        d = policy.decide(PictureEvidence.from_record(r["record"]), fact_check=_fact_check(r["record"]["model"]))
        w = composer.alt_text(d)
        print(json.dumps({"path": r["path"], "description": w.text, "said_as": str(w.said_as)}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", type=Path, help="describe PATHS and write their evidence here")
    ap.add_argument("--replay", type=Path, help="the alt texts of a --dump file under the policy as it is now")
    ap.add_argument("paths", nargs="*")
    ns = ap.parse_args(argv)
    if ns.dump:
        dump(ns.paths, ns.dump)
    elif ns.replay:
        replay(ns.replay)
    else:
        ap.error("give --dump or --replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
