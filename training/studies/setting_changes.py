"""The alt texts one policy setting changes, on stored evidence: each photo of a ``facts_eval.py --dump`` file (or
of an ``ordinary_dump.py --dump`` file)
decided with the setting at a base value and at each value tried, the changed alt texts listed (with their
by-eye label where a labels file has the photo), and the empty ones counted.

    python training/studies/facts_eval.py --split val --dump VAL.jsonl
    python training/studies/setting_changes.py VAL.jsonl seeing.faint_concept 0 0.9 0.95 \\
        [--labels training/studies/val_by_eye.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe import composer, policy  # noqa: E402
from capdesk.describe.evidence import PictureEvidence  # noqa: E402
from capdesk.describe.settings import DEFAULT  # noqa: E402
from training.studies.facts_eval import _fact_check  # noqa: E402


def changes(dump: Path, setting: str, base: float, values: list[float], labels: dict[str, dict]) -> None:
    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r.get("record")]
    first = DEFAULT.with_values({setting: base})
    for value in values:
        other = DEFAULT.with_values({setting: value})
        empty = [0, 0]
        changed = []
        for r in rows:
            ev, check = PictureEvidence.from_record(r["record"]), _fact_check(r["record"]["model"])
            a = composer.alt_text(policy.decide(ev, fact_check=check, settings=first)).text
            b = composer.alt_text(policy.decide(ev, fact_check=check, settings=other)).text
            empty[0] += not a
            empty[1] += not b
            if a != b:
                changed.append((Path(r.get("image") or r["path"]).name, a, b))
        print(f"{setting} {base} -> {value}: {len(changed)} of {len(rows)} alt texts change; empty {empty[0]} -> "
              f"{empty[1]}")
        for name, a, b in changed:
            lab = labels.get(name, {})
            print(f"  {name}: {a!r} -> {b!r}  [{lab.get('label', '')} {lab.get('note', '')}]".rstrip(" []"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("setting")
    ap.add_argument("base", type=float)
    ap.add_argument("values", type=float, nargs="+")
    ap.add_argument("--labels", type=Path)
    a = ap.parse_args()
    labels = {r["image"]: r for r in csv.DictReader(a.labels.open(encoding="utf-8"))} if a.labels else {}
    changes(a.dump, a.setting, a.base, a.values, labels)


if __name__ == "__main__":
    main()
