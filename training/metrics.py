"""Caption metrics computed the standard way: the COCO caption evaluation code (pycocoevalcap).

BLEU-1..4 are corpus-level with the closest reference length; CIDEr is CIDEr-D with IDF
from the evaluated references. Texts are tokenised by ``training.data.tokenize`` (lower
case, punctuation dropped), which stands in for the Java PTB tokenizer. METEOR needs Java
and is computed only where ``java`` is on the PATH.
"""

from __future__ import annotations

import contextlib
import io
import shutil


def score(references: dict[str, list[str]], hypotheses: dict[str, str],
          meteor: bool = False) -> dict[str, float]:
    """references: id -> tokenised reference strings; hypotheses: id -> tokenised string."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    ids = sorted(hypotheses)
    gts = {i: references[i] for i in ids}
    res = {i: [hypotheses[i] if hypotheses[i] else "<empty>"] for i in ids}
    out: dict[str, float] = {}
    with contextlib.redirect_stdout(io.StringIO()):  # Bleu prints its internals
        bleu, _ = Bleu(4).compute_score(gts, res)
    for n, b in enumerate(bleu, 1):
        out[f"BLEU-{n}"] = float(b)
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
