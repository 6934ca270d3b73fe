"""Whether a careful sighted reader would accept a caption as fact: a small logistic model over what the
other witnesses say of the caption's words, fitted to alt texts of val photos read by eye
(``training/studies/fact_by_eye.py``; the labels are ``training/studies/val_by_eye.csv``).

The trust score (``capdesk.describe.trust``) reads one thing: whether a caption names an object that is
not there. Read by eye, most wrong facts are wrong in another way: what the people do ("running" for
riding a skateboard), how many there are (one dog for two), which animal. So a caption said as fact must
also pass this check: its action words and nouns seen by the concept head, its number agreeing with the
detector, the beam's other captions agreeing with it. A caption that fails it is said as "Probably":
the check only ever takes facts away, never makes one.

The model ships in the everyday bundle's manifest (``fact_check``: weights, the threshold and the
figures that chose it); a bundle without it is not checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from capdesk.describe.evidence import PictureEvidence
from capdesk.describe.objects import mentions, tokens
from capdesk.describe.sentence import named, parse

FEATURES = ("trust", "log_confidence", "min_word", "mean_word", "min_action", "count_disagrees",
            "people_seen", "finalists_share_action", "finalists_share_subject", "domain_ratio", "words",
            "subject_seen")
UNSEEN = 0.05  # a concept word under the head's stored floor (0.1) reads as this
STOP = frozenset({"a", "an", "the", "is", "are", "of", "in", "on", "at", "with", "and", "to", "his", "her", "their",
                  "its", "it", "while", "for", "from", "by", "into", "through", "near", "next", "front", "top",
                  "other", "another", "one", "two", "three", "some", "that", "who", "there", "up", "down", "as"})


def _action_words(w: list[str]) -> list[str]:
    return [t for t in w if t.endswith("ing") and len(t) > 4]


def features(ev: PictureEvidence, said: str, vocabulary: frozenset[str]) -> np.ndarray:
    """The numbers the check reads for the caption ``said`` (as the alt text would say it) of a picture."""
    f0 = ev.caption
    w = tokens(said)
    content = [t for t in w if t in vocabulary and t not in STOP]
    probs = [max(ev.concepts.get(t, 0.0), UNSEEN) for t in content] or [1.0]
    actions = [t for t in _action_words(w) if t in vocabulary]
    action_probs = [max(ev.concepts.get(t, 0.0), UNSEEN) for t in actions] or [1.0]
    cats = named(w)
    subject = cats[0] if cats else ""
    said_n = parse(w).counts().get(subject) if subject else None
    seen_n = ev.count(subject, 0.5, 0.25) if subject else 0
    disagrees = bool(subject) and ev.detector and (
        (said_n == "one" and seen_n >= 2) or (said_n == "several" and seen_n == 1))
    others = [f.text for f in ev.finalists[1:]]
    first_action = actions[0] if actions else (_action_words(w) or [""])[0]
    share_action = (sum(first_action in tokens(t) for t in others) / len(others)) if others and first_action else 1.0
    share_subject = (sum(subject in mentions(t) for t in others) / len(others)) if others and subject else 1.0
    return np.array([
        f0.trust if f0 is not None and f0.trust is not None else 0.5,
        math.log(max(f0.confidence, 1e-3)) if f0 is not None else math.log(1e-3),
        min(probs), float(np.mean(probs)), min(action_probs), float(disagrees),
        min(ev.count("person", 0.5, 0.25), 5) / 5, share_action, share_subject,
        min(ev.ratio if ev.ratio is not None else 1.0, 3.0), min(len(w), 20) / 20,
        ev.best_detection(subject) if subject else 1.0,
    ], dtype=np.float64)


@dataclass(frozen=True)
class FactCheck:
    """The fitted check: standardised features, logistic weights, and the probability from which a caption
    passes (chosen on the by-eye val labels; the manifest keeps the figures that chose it)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float
    vocabulary: frozenset[str]

    def probability(self, ev: PictureEvidence, said: str) -> float:
        x = (features(ev, said, self.vocabulary) - self.mean) / self.scale
        return float(1 / (1 + math.exp(-(float(x @ self.weights) + self.bias))))

    def passes(self, ev: PictureEvidence, said: str) -> bool:
        return self.probability(ev, said) >= self.threshold

    @classmethod
    def from_manifest(cls, entry: dict | None, vocabulary: list[str]) -> FactCheck | None:
        """The check a bundle's manifest carries (``fact_check``), or None where it carries none."""
        if not entry or list(entry.get("features", [])) != list(FEATURES) or not vocabulary:
            # Without the concept head's words the check reads nothing of the caption.
            return None
        return cls(np.asarray(entry["mean"], float), np.asarray(entry["scale"], float),
                   np.asarray(entry["weights"], float), float(entry["bias"]), float(entry["threshold"]),
                   frozenset(vocabulary))
