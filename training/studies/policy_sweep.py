"""The policy's thresholds against the figures they trade, on stored evidence (val only): each setting
is re-applied to a ``facts_eval.py --dump`` file of the val split without describing the photos again.

    python training/studies/facts_eval.py --split val --dump runs/facts-val.jsonl
    python training/studies/policy_sweep.py runs/facts-val.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe.settings import DEFAULT  # noqa: E402
from training.studies.facts_eval import replay  # noqa: E402

GRID = {
    "seeing.person_seen": (0.5, 0.7),
    "seeing.person_faint": (0.3, 0.4, 1.1),  # 1.1: a person not seen withholds the caption
    "seeing.thing_seen": (0.3, 0.5),
}


def sweep(dump: Path, grid: dict[str, tuple]) -> list[dict]:
    """The figures for every combination of ``grid``'s values, each on a copy of the shipped settings."""
    rows = []
    for values in itertools.product(*grid.values()):
        setting = dict(zip(grid, values))
        rows.append({"setting": setting, "figures": replay(dump, settings=DEFAULT.with_values(setting))})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("--grid", type=json.loads, default=None, help='JSON, e.g. {"mending.count_sure": [0.7, 0.9]}')
    ns = ap.parse_args(argv)
    for row in sweep(ns.dump, {k: tuple(v) for k, v in (ns.grid or GRID).items()}):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
