"""Where the picture-kind model finds a picture surely not a photo but no one kind sure (``OTHER``), how often
is the right kind among its two likeliest? Measured on whole held-out sources, by a network fitted on the fit
pictures only (as step 2 of ``picture_kind.py fit``), to choose what is said of such a picture.

    python training/studies/kind_hedge.py /work/kinddata/feats3.npz

Measured (feats of the shipped encoder; two seeds of the network give the same picture): of 1,012 held-out
non-photos, 76 are such pictures; the right kind is the likeliest for 26 and among the two likeliest for 47
(62%); no test or val photo is one. Where the two likeliest hold at least 0.7 between them (two seeds, 56 of
172), 73%. Saying "Perhaps a diagram or a screenshot." would name two wrong kinds for a quarter to a third
of these pictures, far from the at most 5% of guesses with a wrong word asked of what CapDesk says, so such
a picture is still said with its text only, and no kind.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe.picture_kind import OTHER, PHOTO  # noqa: E402
from training.studies.picture_kind import LEFT_OUT, _fit  # noqa: E402


def likeliest_kinds(kinds: list[str], probs: np.ndarray, n: int = 2) -> list[str]:
    """The ``n`` likeliest kinds other than a photo, likeliest first."""
    return [kinds[i] for i in np.argsort(-probs) if kinds[i] != PHOTO][:n]


def measure(feats: str) -> dict:
    z = np.load(feats)
    keep = ~np.isin(z["kind"], sorted(LEFT_OUT))
    x, kind, split = (z[k][keep] for k in ("x", "kind", "split"))
    kinds = sorted(str(k) for k in set(kind[split == "fit"]))
    fit_i = np.where(split == "fit")[0]
    m = _fit(x[fit_i], kind[fit_i], z["source"][keep][fit_i], kinds)
    spec = json.loads((ROOT / "models" / "everyday" / "manifest.json").read_text(encoding="utf-8"))["picture_kind"]
    m.threshold, m.thresholds, m.not_photo_below = 1.01, spec["thresholds"], spec["not_photo_below"]
    out = {}
    for name, rows in (("held-out sources", (split == "test") & (kind != PHOTO)),
                       ("test and val photos", np.isin(split, ("test", "val")) & (kind == PHOTO))):
        idx = np.where(rows)[0]
        probs = m.probabilities(x[idx])
        other = [(str(kind[i]), p) for i, p in zip(idx, probs) if m.kind(p)[0] == OTHER]
        top1 = sum(t == likeliest_kinds(m.kinds, p, 1)[0] for t, p in other)
        top2 = sum(t in likeliest_kinds(m.kinds, p, 2) for t, p in other)
        out[name] = {"pictures": len(idx), "surely not a photo, no kind sure": len(other),
                     "right kind first": top1, "right kind among the two": top2,
                     "of which kinds": dict(Counter(t for t, _ in other))}
    return out


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1]), indent=1))
