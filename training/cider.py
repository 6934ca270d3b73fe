"""CIDEr-D as a training reward: the formula of the COCO caption code (pycocoevalcap), but with
document frequencies taken once from the whole training corpus and references vectorised once.

pycocoevalcap recomputes document frequencies from whatever references it is handed, which for a
batch of 32 photos would make every common word look rare. Self-critical training needs the
corpus-wide figures and a few thousand scores a second, hence this small re-implementation.

Every sentence gets an end token (``</s>``) before counting, as in the reference self-critical
code: a sampled caption cut off mid-phrase then loses its final n-grams, so the model is not paid
for stopping on "a man riding a".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

N = 4
SIGMA = 6.0
END_TOKEN = "</s>"


def _ngrams(words: Sequence[str], end: bool = True) -> list[Counter]:
    words = [*words, END_TOKEN] if end else list(words)
    return [Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1)) for n in range(1, N + 1)]


class CiderD:
    """Scores hypotheses against the references of one image out of a fixed corpus."""

    def __init__(self, corpus: Sequence[Sequence[Sequence[str]]], end_token: bool = True) -> None:
        """corpus: per image, its reference captions as word lists (the training split).
        ``end_token=False`` gives pycocoevalcap's own numbers (when its references are the corpus)."""
        self.end = end_token
        df: Counter = Counter()
        counted = [[_ngrams(ref, end_token) for ref in refs] for refs in corpus]
        for refs in counted:
            df.update({g for ref in refs for grams in ref for g in grams})
        self.df = df
        self.log_n = math.log(float(len(corpus)))
        # References are vectorised on first use: a run only ever scores the images it trains on.
        self._refs: dict[int, list[tuple[list[dict], list[float], int]]] = {}
        self._counted = counted
        self._lengths = [[len(ref) + end_token for ref in refs] for refs in corpus]

    def _vec(self, grams: list[Counter]) -> tuple[list[dict], list[float]]:
        vecs, norms = [], []
        for counts in grams:
            v = {g: tf * (self.log_n - math.log(max(1.0, self.df.get(g, 0.0)))) for g, tf in counts.items()}
            vecs.append(v)
            norms.append(math.sqrt(sum(x * x for x in v.values())))
        return vecs, norms

    def _ref_vectors(self, image: int) -> list[tuple[list[dict], list[float], int]]:
        got = self._refs.get(image)
        if got is None:
            got = [(*self._vec(g), n) for g, n in zip(self._counted[image], self._lengths[image])]
            self._refs[image] = got
        return got

    def score(self, image: int, words: Sequence[str]) -> float:
        """CIDEr-D (x10, as reported) of one hypothesis against image ``image``'s references."""
        vec, norm = self._vec(_ngrams(words, self.end))
        length = len(words) + self.end
        refs = self._ref_vectors(image)
        total = 0.0
        for rvec, rnorm, rlen in refs:
            penalty = math.exp(-((length - rlen) ** 2) / (2 * SIGMA ** 2))
            for n in range(N):
                if norm[n] == 0 or rnorm[n] == 0:
                    continue
                r = rvec[n]
                dot = sum(min(x, r[g]) * r[g] for g, x in vec[n].items() if g in r)
                total += penalty * dot / (norm[n] * rnorm[n])
        return total / N / len(refs) * 10.0
