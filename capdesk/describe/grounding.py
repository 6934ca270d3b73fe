"""Grounded decoding: the beam search steered away from object words the picture does not support.

The concept head says how likely a person would name each object category for this picture; an
object word of the decoder's vocabulary whose category has probability ``p < tau`` costs
``alpha * log(p / tau)`` when the beam ranks its candidates (``capdesk.model.beam``). A supported
object costs nothing, and words that name no object are never touched. ``alpha`` and ``tau`` come
from the bundle's manifest (``grounding``), chosen on its val split.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from capdesk.describe.objects import WORD_CATEGORY, said_name

FLOOR = 1e-3  # a concept's probability is never taken as lower than this (the penalty stays finite)


def token_concepts(vocab: Sequence[str], concept_words: Sequence[str]) -> np.ndarray:
    """For each decoder word, the index of its object's concept, or -1."""
    index = {w: i for i, w in enumerate(concept_words)}
    out = np.full(len(vocab), -1, dtype=np.int64)
    for v, w in enumerate(vocab):
        cat = WORD_CATEGORY.get(w)
        if cat is not None and said_name(cat) in index:
            out[v] = index[said_name(cat)]
    return out


def bias_matrix(tokens: np.ndarray, probs: np.ndarray, alpha: float, tau: float) -> np.ndarray:
    """[B, V] penalties (zero or negative) for a batch of concept probabilities [B, C]."""
    bias = np.zeros((len(probs), len(tokens)), dtype=np.float64)
    if alpha <= 0:
        return bias
    has = tokens >= 0
    p = np.maximum(probs[:, tokens[has]].astype(np.float64), FLOOR)
    bias[:, has] = alpha * np.minimum(0.0, np.log(p / tau))
    return bias
