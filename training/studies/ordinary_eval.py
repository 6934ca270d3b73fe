"""Alt texts of ordinary pictures from outside Flickr and COCO, against labels written before the app saw
the pictures: a first reading by machine, to be checked by eye.

    capdesk caption --json DIR/* > out.jsonl
    python training/studies/ordinary_eval.py training/studies/ordinary_tuning_labels.csv out.jsonl

A labels file has the columns ``file`` (the picture's name in DIR), ``source`` (the Debian package and
the path inside it; for gcompris-qt-data, inside its Qt resource files), ``kind`` (photo, painting,
drawing, screenshot, ...), ``what`` (what a good alt text would say), ``right`` (words, any of which is a
right and useful word for the picture, separated by ";") and ``allowed`` (the COCO categories really in
the picture). An alt text is read as:

- **wrong** when it names a COCO category that is not in ``allowed`` (words read from the picture's text,
  after "Text:", do not count);
- **useful** when it holds one of the ``right`` words or names an allowed category, or names the kind
  of a picture that is not a photo;
- **nothing** when it says something and neither; **empty** when it says nothing.

The machine cannot see a wrong word that is no COCO category ("a school" for a circuit board), a wrong
colour or a wrong action; the figures of docs/training.md are the reading by eye
(``ordinary_heldout_by_eye.csv``), which this reading only helps to start.
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

from capdesk.describe.objects import mentions, tokens  # noqa: E402

KIND_WORDS = ("painting", "drawing", "screenshot", "diagram", "map", "page of text", "sheet music")


def _has(alt: str, word: str) -> bool:
    said = f" {' '.join(tokens(alt))} "
    return any(f" {' '.join(tokens(w))} " in said for w in (word, word + "s", word + "es"))


def verdict(alt: str, label: dict[str, str]) -> str:
    if not alt.strip():
        return "empty"
    described = alt.split("Text:", 1)[0]
    allowed = {c for c in label["allowed"].split(";") if c}
    if any(c not in allowed for c in mentions(described)):
        return "wrong"
    right = any(_has(described, w) for w in label["right"].split(";") if w)
    kind = label["kind"] != "photo" and any(k in described.lower() for k in KIND_WORDS)
    return "useful" if right or kind or any(c in allowed for c in mentions(described)) else "nothing"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labels", type=Path)
    ap.add_argument("captions", type=Path, help="the output of capdesk caption --json")
    ap.add_argument("--list", action="store_true", help="one line per picture")
    ns = ap.parse_args(argv)
    with ns.labels.open(encoding="utf-8", newline="") as fh:
        labels = {r["file"]: r for r in csv.DictReader(fh)}
    counts: Counter[str] = Counter()
    said_as: Counter[tuple[str, str]] = Counter()
    for line in ns.captions.read_text(encoding="utf-8").splitlines():
        out = json.loads(line)
        name = Path(out["path"]).name
        v = verdict(out.get("description") or "", labels[name])
        counts[v] += 1
        said_as[(out.get("said_as") or "", v)] += 1
        if ns.list:
            print(f"{name}\t{out.get('said_as')}\t{v}\t{out.get('description')}\t| {labels[name]['what']}")
    n = sum(counts.values())
    print(f"{n} pictures: " + ", ".join(f"{k} {counts[k]} ({counts[k] / n:.1%})" for k in
                                        ("useful", "wrong", "nothing", "empty")))
    print("said as fact: " + ", ".join(f"{v} {c}" for (s, v), c in sorted(said_as.items()) if s == "fact"))
    print("said as Probably: " + ", ".join(f"{v} {c}" for (s, v), c in sorted(said_as.items()) if s == "probably"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
