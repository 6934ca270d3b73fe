"""The by-eye precision of what is said as fact now that only a caption's confirmed subject is
(``capdesk.describe.subject_fact``), replayed on alt texts read by eye.

    python training/studies/subject_facts.py DUMP.jsonl LABELS.csv [--judged training/studies/subject_facts_judged.csv]

The labels (``val_by_eye.csv``, ``test_by_eye.csv``) judge the whole sentence that was said; the fact now
says only who and how many. A fact is taken as right in its main thing where the sentence's label is
``right`` or ``detail``, or ``wrong`` in what they do or the scene (who and how many were not what was
wrong); where it was wrong in who, which animal or how many, the fact is judged again by eye (``--judged``:
image, fact, label, note), since "People" for "two people" where there are three is right, and "People" for
"a person holding a little child" where there are four women too. The same file holds facts looked at beside
their pictures whatever their sentence's label, and those judgements come first: 36 test facts drawn at random
(one wrong: a rugby tackle of three players said "Two people"), then the other 120 test facts (three wrong: a man
leaping into a river with two swimmers by him said "A person", a child on a ladder with an adult above said "A
person", the aerial model's "a piece of yellow bareland" for a close photo of a cliff face). With them every test
fact is judged by eye. Facts not yet judged are listed for judging.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe import composer, policy  # noqa: E402
from capdesk.describe.evidence import PictureEvidence  # noqa: E402
from capdesk.status import SaidAs  # noqa: E402

JUDGED = ROOT / "training" / "studies" / "subject_facts_judged.csv"


def replay(dump: Path, labels: Path, judged: Path = JUDGED) -> dict:
    records = {}
    for line in dump.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        records[Path(r["image"]).name] = r
    again = {}
    if judged.exists():
        with judged.open(encoding="utf-8", newline="") as fh:
            again = {(row["image"], row["fact"]): row["label"] for row in csv.DictReader(fh)}
    tally: Counter = Counter()
    unjudged, wrong = [], []
    with labels.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            r = records.get(row["image"])
            if r is None or not r.get("record") or row["said_as"] != "fact":
                continue
            tally["facts before"] += 1
            tally["wrong before"] += row["label"] == "wrong"
            tally["wholly right before"] += row["label"] == "right"
            d = policy.decide(PictureEvidence.from_record(r["record"]))
            if d.said_as is not SaidAs.FACT:
                tally["now probably"] += 1
                continue
            fact = d.fact or d.caption
            tally["facts"] += 1
            looked = again.get((row["image"], fact))
            if looked is not None:  # the fact itself judged beside its picture (first, as for a whole sentence)
                ok = looked == "right"
            elif not d.fact:  # said whole, as before
                ok = row["label"] != "wrong"
            elif row["label"] == "wrong" and row["aspect"] in ("who", "animal", "count"):
                label = again.get((row["image"], fact))
                if label is None:
                    unjudged.append((row["image"], fact, row["said"], row["note"]))
                    continue
                ok = label == "right"
            else:
                ok = True
            tally["right in the main thing"] += ok
            if not ok:
                wrong.append((row["image"], composer.alt_text(d).text, row["note"]))
    n = tally["facts"] - len(unjudged)
    return {"tally": dict(tally), "main": round(tally["right in the main thing"] / max(n, 1), 4),
            "main_before": round(1 - tally["wrong before"] / max(tally["facts before"], 1), 4),
            "kept": round(tally["facts"] / max(tally["facts before"], 1), 4),
            "wrong": wrong, "unjudged": unjudged}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("labels", type=Path)
    ap.add_argument("--judged", type=Path, default=JUDGED)
    ns = ap.parse_args(argv)
    print(json.dumps(replay(ns.dump, ns.labels, ns.judged), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
