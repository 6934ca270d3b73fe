"""Beam search over a decoder, in numpy, for many images at once.

Images and their beams share the leading axis (image-major: row ``n * K + k``), so one
decoder call advances every beam of every image by one word. The search knows the decoder only
through ``Decoder``: whatever the decoder carries from word to word is opaque here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class Decoder(Protocol):
    """What the search asks of a decoder. A state holds one row per image after ``begin`` and one
    per beam after that; only the decoder reads it."""

    def begin(self, features: Any) -> Any:
        """The state before the first word, for a batch of images (one row each)."""
        ...

    def step(self, words: np.ndarray, state: Any, rows: np.ndarray) -> tuple[np.ndarray, Any, np.ndarray]:
        """Advance every beam by its previous word ``words`` [R]: (log-probabilities [R, V], the new
        state, attention [R, L]). ``rows`` [R] maps each beam to its image, and is the same array
        object for the whole search, so a decoder may gather per-image data once."""
        ...

    def reorder(self, state: Any, rows: np.ndarray) -> Any:
        """The state of rows ``rows`` of ``state``, in that order (beams kept after pruning, or images
        spread over their beams)."""
        ...


@dataclass
class Hypothesis:
    ids: list[int]  # words, without <start> and <end>
    logprobs: list[float]  # per emitted token, <end> included when it ended
    alphas: np.ndarray  # [len(ids), L] attention per word
    score: float  # length-normalised
    finished: bool


def _blocked(seq: list[int], n: int) -> set[int]:
    """Words that would repeat an n-gram already in ``seq``."""
    if n <= 0 or len(seq) < n - 1:
        return set()
    prefix = tuple(seq[len(seq) - (n - 1):]) if n > 1 else ()
    out = set()
    for i in range(len(seq) - n + 1):
        if tuple(seq[i:i + n - 1]) == prefix:
            out.add(seq[i + n - 1])
    return out


def _forbid_repeats(logp: np.ndarray, scores: np.ndarray, seqs: list[list[int]], block_ngram: int) -> None:
    """Rule out, in one image's [K, V] log-probabilities, the words that would repeat its live beams."""
    for k, seq in enumerate(seqs):
        if np.isfinite(scores[k]) and seq:
            logp[k, seq[-1]] = -np.inf  # a word never follows itself ("white white")
            if block_ngram:
                for w in _blocked(seq, block_ngram):
                    logp[k, w] = -np.inf


def beam_search(*args: Any, **kwargs: Any) -> list[Hypothesis]:
    """Best hypothesis per image: the first of ``beam_finalists`` (same arguments)."""
    return [pool[0] for pool in beam_finalists(*args, **kwargs)]


def beam_finalists(
    decoder: Decoder,
    features: Any,
    beam: int,
    max_len: int,
    start: int,
    end: int,
    length_alpha: float = 1.0,
    block_ngram: int = 0,
    banned: tuple[int, ...] = (),
    bias: np.ndarray | None = None,
) -> list[list[Hypothesis]]:
    """Every caption the search finished for each image (as many as the beam is wide, fewer when
    the search ran dry), best first. ``features`` (one row per image) is what ``decoder.begin`` takes.

    ``bias`` [n_images, V] (zero or negative) is added to every word's log-probability when the
    search ranks its candidates, not to the log-probabilities it records: grounding steers which
    caption is chosen without changing how sure the model was of its words.
    """
    K = max(1, int(beam))
    n_images = len(features)
    rows = np.repeat(np.arange(n_images), K)
    state = decoder.reorder(decoder.begin(features), rows)
    scores = np.full((n_images, K), -np.inf, dtype=np.float64)
    scores[:, 0] = 0.0  # all beams start identical: keep one alive
    seqs: list[list[list[int]]] = [[[] for _ in range(K)] for _ in range(n_images)]
    lps: list[list[list[float]]] = [[[] for _ in range(K)] for _ in range(n_images)]
    alps: list[list[list[np.ndarray]]] = [[[] for _ in range(K)] for _ in range(n_images)]
    words = np.full(n_images * K, start, dtype=np.int64)
    done: list[list[Hypothesis]] = [[] for _ in range(n_images)]
    # Each finished caption takes one beam away, so width 1 is exactly greedy decoding.
    live = np.full(n_images, K, dtype=np.int64)

    def norm(total: float, length: int) -> float:
        return total / (max(length, 1) ** length_alpha) if length_alpha else total

    for t in range(max_len):
        logp, state, alpha = decoder.step(words, state, rows)
        V = logp.shape[1]
        logp = logp.astype(np.float64).reshape(n_images, K, V)
        if banned:
            logp[:, :, list(banned)] = -np.inf
        if t == 0:
            logp[:, :, end] = -np.inf  # an empty caption says nothing
        alpha = alpha.reshape(n_images, K, -1)
        new_rows = np.arange(n_images * K, dtype=np.int64)
        new_words = np.full(n_images * K, end, dtype=np.int64)
        new_scores = np.full((n_images, K), -np.inf)
        for n in range(n_images):
            if live[n] <= 0:
                continue
            _forbid_repeats(logp[n], scores[n], seqs[n], block_ngram)
            ranked = logp[n] if bias is None else logp[n] + bias[n]
            cand = (scores[n][:, None] + ranked).ravel()
            take = int(live[n])
            top = np.argpartition(-cand, take - 1)[:take]
            top = top[np.argsort(-cand[top], kind="stable")]
            s_seqs, s_lps, s_alps = [], [], []
            for flat in top:
                total = cand[flat]
                if not np.isfinite(total):
                    break
                k, w = divmod(int(flat), V)
                seq, lp = seqs[n][k], lps[n][k] + [float(logp[n, k, w])]
                al = alps[n][k] + [alpha[n, k]]
                if w == end or t == max_len - 1:
                    ended = w == end
                    ids = list(seq) if ended else seq + [w]
                    word_alphas = np.array(al[:-1] if ended else al) if ids else np.zeros((0, alpha.shape[2]))
                    done[n].append(Hypothesis(ids, lp, word_alphas, norm(total, len(seq) + 1), ended))
                    live[n] -= 1
                    continue
                j = len(s_seqs)
                s_seqs.append(seq + [w])
                s_lps.append(lp)
                s_alps.append(al)
                new_rows[n * K + j] = n * K + k
                new_words[n * K + j] = w
                new_scores[n, j] = total
            if not s_seqs:
                live[n] = 0
            while len(s_seqs) < K:
                s_seqs.append([])
                s_lps.append([])
                s_alps.append([])
            seqs[n], lps[n], alps[n] = s_seqs, s_lps, s_alps
        state = decoder.reorder(state, new_rows)
        words = new_words
        scores = new_scores
        if not (live > 0).any():
            break

    out = []
    for n in range(n_images):
        pool = list(done[n])
        if not pool:
            pool.append(Hypothesis([], [], np.zeros((0, 1)), -np.inf, False))
        out.append(sorted(pool, key=lambda hy: -hy.score))  # stable: ties keep the order they ended in
    return out
