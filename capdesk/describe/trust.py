"""How far a caption can be trusted: one score from every cheap signal there is, calibrated on the
model's val split so that it reads as the probability that the caption names no object that is not
in the picture.

The signals: the caption's own probability; the concept head's support for each object it names
(``capdesk.describe.objects``); whether the ImageNet tags name an object the caption contradicts or
confirms; how far the picture lies from the model's training pictures; and whether the beam's other
finalists name the same objects. A logistic regression over them is fitted by ``training`` and kept
in the bundle's manifest (``trust``); the thresholds that turn the score into fact, "Probably" or
withheld are in ``capdesk.limits``. A bundle without it keeps the older rule (confidence alone).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from capdesk.describe.objects import mentions, said_name

FEATURES = ("log_confidence", "min_support", "mean_support", "objects", "finalists_agree", "tag_conflict",
            "tag_support", "domain_ratio", "length")
TAG_THRESHOLD = 0.2  # ImageNet tags read as evidence from this probability (lower than the tags said aloud)
NO_OBJECT_SUPPORT = 1.0  # a caption that names no object has nothing to be unsupported


@dataclass
class Evidence:
    """What one caption's trust is computed from."""

    words: Sequence[str]
    confidence: float  # geometric-mean word probability
    concepts: Mapping[str, float] | None  # concept word -> probability, None when the bundle has no head
    finalists: Sequence[str] = ()  # the beam's other finished captions
    tags: Sequence[tuple[str, float]] = ()  # ImageNet tags (label, probability)
    domain_ratio: float | None = None  # distance to the training pictures over the gate's threshold


def support(category: str, concepts: Mapping[str, float] | None) -> float | None:
    """The concept head's probability that a person would name this category's object."""
    if concepts is None:
        return None
    return concepts.get(said_name(category))


def features(ev: Evidence) -> np.ndarray:
    text = " ".join(ev.words)
    objs = mentions(text)
    sup = [s for c in objs if (s := support(c, ev.concepts)) is not None]
    mine = set(objs)
    others = [set(mentions(f)) for f in ev.finalists]
    agree = sum(o == mine for o in others) / len(others) if others else 1.0
    conflict = supported = 0.0
    for label, p in ev.tags:
        cats = set(mentions(label))
        if not cats:
            continue
        if cats & mine:
            supported = max(supported, p)
        elif mine:
            conflict = max(conflict, p)
    ratio = 1.0 if ev.domain_ratio is None else float(ev.domain_ratio)
    return np.array([math.log(max(ev.confidence, 1e-6)), min(sup, default=NO_OBJECT_SUPPORT),
                     float(np.mean(sup)) if sup else NO_OBJECT_SUPPORT, float(len(objs)), agree, conflict,
                     supported, min(ratio, 5.0), float(len(ev.words))], dtype=np.float64)


@dataclass
class TrustModel:
    """A logistic regression over standardised ``FEATURES`` (from a manifest's ``trust`` section)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    fact_domain_ratio: float | None = None  # facts only for pictures this close to the training pictures

    @classmethod
    def from_manifest(cls, section: Mapping | None) -> TrustModel | None:
        if not section or list(section.get("features", ())) != list(FEATURES):
            return None  # fitted on other signals: the older rule is safer than a misread score
        zone = section.get("fact_domain_ratio")
        return cls(np.asarray(section["mean"], float), np.asarray(section["scale"], float),
                   np.asarray(section["weights"], float), float(section["bias"]),
                   None if zone is None else float(zone))

    def typical(self, domain_ratio: float | None) -> bool:
        """Whether a picture lies where the model's captions may be said as fact."""
        return self.fact_domain_ratio is None or domain_ratio is None or domain_ratio <= self.fact_domain_ratio

    def score(self, ev: Evidence) -> float:
        return self.score_features(features(ev))

    def score_features(self, x: np.ndarray) -> float:
        z = float(((x - self.mean) / self.scale) @ self.weights + self.bias)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> dict:
    """Logistic regression by Newton's method (numpy only), features standardised; the manifest section."""
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    reg = np.full(z.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ (p - y) + reg * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"features": list(FEATURES), "mean": mean.round(6).tolist(), "scale": scale.round(6).tolist(),
            "weights": w[:-1].round(6).tolist(), "bias": round(float(w[-1]), 6)}
