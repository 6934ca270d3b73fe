"""Caption metrics computed the standard way: the COCO caption evaluation code (pycocoevalcap).

BLEU-1..4 are corpus-level with the closest reference length (``length_ratio`` is the captions'
length over those references': under 1, the brevity penalty lowers every BLEU); CIDEr is CIDEr-D with IDF
from the evaluated references. Texts are tokenised by ``training.data.tokenize`` (lower
case, punctuation dropped), which stands in for the Java PTB tokenizer. METEOR needs Java
and is computed only where ``java`` is on the PATH.
"""

from __future__ import annotations

import contextlib
import shutil


def score(references: dict[str, list[str]], hypotheses: dict[str, str],
          meteor: bool = False) -> dict[str, float]:
    """references: id -> tokenised reference strings; hypotheses: id -> tokenised string."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer
    from pycocoevalcap.cider.cider import Cider

    ids = sorted(hypotheses)
    gts = {i: references[i] for i in ids}
    res = {i: [hypotheses[i] if hypotheses[i] else "<empty>"] for i in ids}
    out: dict[str, float] = {}
    # BleuScorer as pycocoevalcap's Bleu wrapper drives it, kept so its length ratio can be read:
    # the brevity penalty is 1 whenever the captions are not shorter than the closest references.
    bleu_scorer = BleuScorer(n=4)
    for i in ids:
        bleu_scorer += (res[i][0], gts[i])
    bleu, _ = bleu_scorer.compute_score(option="closest", verbose=0)  # verbose=0: prints nothing
    for n, b in enumerate(bleu, 1):
        out[f"BLEU-{n}"] = float(b)
    out["length_ratio"] = float(bleu_scorer._testlen / max(bleu_scorer._reflen, 1))  # set by compute_score
    cider, _ = Cider().compute_score(gts, res)
    out["CIDEr"] = float(cider)
    if meteor and shutil.which("java"):
        try:
            from pycocoevalcap.meteor.meteor import Meteor

            m = Meteor()
            out["METEOR"] = float(m.compute_score(gts, res)[0])
            with contextlib.suppress(Exception):
                m.close()
        except Exception:  # METEOR is optional: a broken Java must not lose the other figures
            pass
    return out
