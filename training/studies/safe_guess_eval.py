"""The guesses of the alt text said whole and said by their subject and place (``capdesk.describe.safe_guess``),
side by side, for reading by eye.

    python training/studies/facts_eval.py --split test --dump TEST.jsonl
    git worktree add /tmp/before <commit before the change>
    python training/studies/safe_guess_eval.py said TEST.jsonl BEFORE.json --tree /tmp/before
    python training/studies/safe_guess_eval.py sample TEST.jsonl OUT.csv --before BEFORE.json [--n 120] [--seed 7]
    (label OUT.csv by eye: columns label_a, aspect_a, label_b, aspect_b, by training/studies/BY_EYE_RUBRIC.md)
    python training/studies/safe_guess_eval.py tally OUT.csv
    python training/studies/safe_guess_eval.py said TEST.jsonl NOW.json
    python training/studies/safe_guess_eval.py score TEST.jsonl BEFORE.json NOW.json   # BLEU, CIDEr as said

``sample`` replays each photo's evidence with the policy as it is now and keeps the photos whose alt text has
a guess that ``safe_guess`` shortens: a caption said as "Probably ...", or a fact with the rest said as
probable. For each it writes the caption as the alt text said it before (``said`` replays the dump with
another tree's policy: "Probably a dog is running through the grass.", "A dog, probably running through the
grass.") and as it says it now, in a random order per row (``a``/``b``, ``order`` says which is which),
so that the reader does not know which is which. ``tally`` counts right / detail / wrong for each form.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tree(path: Path) -> None:
    """Import ``capdesk`` from ``path`` (this tree by default): the policy of another commit replays alike."""
    sys.path.insert(0, str(path))
    import capdesk

    assert Path(capdesk.__file__).resolve().is_relative_to(path.resolve()), capdesk.__file__


def _decisions(dump: Path):
    """(row, decision) of each photo of a ``facts_eval.py --dump`` file, by the imported tree's policy and the
    fact check its bundle carries."""
    from capdesk.describe import policy
    from capdesk.describe.evidence import PictureEvidence
    from capdesk.describe.fact_check import FactCheck
    from capdesk.model.bundle import resolve

    checks: dict = {}
    for line in dump.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if not r.get("record"):
            continue
        model = r["record"]["model"]
        if model not in checks:
            b = resolve(model)
            p = Path(b.path) / "concepts.json"
            words = json.loads(p.read_text(encoding="utf-8"))["words"] if p.exists() else []
            checks[model] = FactCheck.from_manifest(b.manifest.get("fact_check"), words)
        yield r, policy.decide(PictureEvidence.from_record(r["record"]), fact_check=checks[model])


def said(dump: Path, out: Path) -> None:
    from capdesk.describe import composer

    got = {r["image"]: composer.caption_said(d) if d.said_as.value in ("fact", "probably") else ""
           for r, d in _decisions(dump)}
    out.write_text(json.dumps(got, indent=0), encoding="utf-8")
    print(f"{len(got)} photos")


def sample(dump: Path, out: Path, before_file: Path, n: int, seed: int) -> None:
    from capdesk.describe import composer
    from capdesk.status import SaidAs

    before_of = json.loads(before_file.read_text(encoding="utf-8"))
    found, total = [], 0
    for r, d in _decisions(dump):
        total += 1
        if d.said_as not in (SaidAs.FACT, SaidAs.PROBABLY) or (d.said_as is SaidAs.FACT and not d.fact):
            continue
        now, before = composer.caption_said(d), before_of.get(r["image"], "")
        if before and now != before:
            found.append((r, str(d.said_as), before, now))
    rng = random.Random(seed)
    rng.shuffle(found)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["image", "collection", "said_as", "order", "a", "b", "label_a", "aspect_a", "label_b", "aspect_b",
                    "note"])
        for r, said_as, before, now in found[:n]:
            flip = rng.random() < 0.5
            a, b = (now, before) if flip else (before, now)
            w.writerow([r["image"], r["collection"], said_as, "now,before" if flip else "before,now", a, b,
                        "", "", "", "", ""])
    print(f"{len(found)} of {total} photos have a shortened guess; {min(n, len(found))} written to {out}")


def tally(labels: Path) -> None:
    rows = list(csv.DictReader(labels.open(encoding="utf-8")))
    forms: dict[str, Counter] = {"before": Counter(), "now": Counter()}
    aspects: dict[str, Counter] = {"before": Counter(), "now": Counter()}
    for r in rows:
        first, second = r["order"].split(",")
        for form, col in ((first, "a"), (second, "b")):
            forms[form][r[f"label_{col}"]] += 1
            if r[f"label_{col}"] != "right":
                aspects[form][r[f"aspect_{col}"]] += 1
    for form in ("before", "now"):
        c = forms[form]
        total = sum(c.values())
        print(f"{form:7s} {total} read: right {c['right']} ({c['right'] / total:.1%}), detail {c['detail']}, "
              f"wrong {c['wrong']} ({c['wrong'] / total:.1%}); aspects {dict(aspects[form].most_common())}")


def score(dump: Path, *said_files: Path) -> None:
    """BLEU and CIDEr of the caption part of the alt text ("probably" left out) against the human captions,
    per collection, for each ``said`` file."""
    from capdesk.describe.objects import tokens
    from training.metrics import score as metrics

    rows = {r["image"]: r for r in map(json.loads, dump.read_text(encoding="utf-8").splitlines())}
    for f in said_files:
        said = json.loads(f.read_text(encoding="utf-8"))
        for group in sorted({r["collection"] for r in rows.values()}):
            ims = [i for i, r in rows.items() if r["collection"] == group and said.get(i)]
            refs = {i: [" ".join(tokens(x)) for x in rows[i]["refs"]] for i in ims}
            hyps = {i: " ".join(t for t in tokens(said[i]) if t != "probably") for i in ims}
            m = metrics(refs, hyps)
            print(f"{f.name} {group} ({len(ims)} said): BLEU-4 {m['BLEU-4']:.4f}, CIDEr {m['CIDEr']:.4f}, "
                  f"length ratio {m['length_ratio']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("said")
    o.add_argument("dump", type=Path)
    o.add_argument("out", type=Path)
    o.add_argument("--tree", type=Path, default=ROOT)
    s = sub.add_parser("sample")
    s.add_argument("dump", type=Path)
    s.add_argument("out", type=Path)
    s.add_argument("--before", type=Path, required=True)
    s.add_argument("--n", type=int, default=120)
    s.add_argument("--seed", type=int, default=7)
    t = sub.add_parser("tally")
    t.add_argument("labels", type=Path)
    c = sub.add_parser("score")
    c.add_argument("dump", type=Path)
    c.add_argument("said", type=Path, nargs="+")
    a = ap.parse_args()
    _tree(a.tree if a.cmd == "said" else ROOT)
    if a.cmd == "said":
        said(a.dump, a.out)
    elif a.cmd == "sample":
        sample(a.dump, a.out, a.before, a.n, a.seed)
    elif a.cmd == "score":
        score(a.dump, *a.said)
    else:
        tally(a.labels)


if __name__ == "__main__":
    main()
