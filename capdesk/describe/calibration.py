"""Turning a detector's raw class score into a probability that people would name the class.

A detector's score is not a probability: PP-PicoDet says 0.5 for a cat far more surely than for a
handbag. ``fit_isotonic`` fits, on photos with human captions, a non-decreasing map from the raw
score to how often the captions name the class (pool adjacent violators, Barlow et al. 1972);
``Calibration`` holds one map per class (classes with too few photos share one pooled map) and is
what a detector bundle's ``calibration.json`` stores. Monotone by construction: a higher raw score
never gives a lower probability, so ranking by either says the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


class CalibrationError(ValueError):
    """A calibration file that cannot be used, in words."""


def pool_adjacent_violators(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(block values, block weights, block ends) of the non-decreasing least-squares fit to ``y``
    (already in the order of x) with weights ``w``."""
    vals: list[float] = []
    wts: list[float] = []
    ends: list[int] = []
    for i, (yi, wi) in enumerate(zip(y.tolist(), w.tolist())):
        vals.append(yi)
        wts.append(wi)
        ends.append(i)
        while len(vals) > 1 and vals[-2] >= vals[-1]:  # equal neighbours too: one knot per level
            wsum = wts[-2] + wts[-1]
            merged = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wsum
            vals[-2:] = [merged]
            wts[-2:] = [wsum]
            ends[-2:] = [ends[-1]]
    return np.array(vals), np.array(wts), np.array(ends)


def fit_isotonic(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[list[float], list[float]]:
    """Knots (xs, ys) of a non-decreasing map from ``x`` to the rate of ``y`` (0/1 or fractions).

    Each block of the fit becomes one knot at its weighted mean x; ``apply`` interpolates between
    knots linearly and holds the end values outside them, so the map stays monotone and has no
    steps as sharp as the blocks of the raw fit."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, np.float64)
    if x.size == 0:
        raise ValueError("nothing to fit")
    # Equal scores are one point (their mean rate, their summed weight), so every knot has its own x.
    ux, inv = np.unique(x, return_inverse=True)
    uw = np.bincount(inv, weights=w)
    uy = np.bincount(inv, weights=w * y) / uw
    vals, wts, ends = pool_adjacent_violators(uy, uw)
    starts = np.concatenate([[0], ends[:-1] + 1])
    bx = np.array([np.average(ux[s:e + 1], weights=uw[s:e + 1]) for s, e in zip(starts, ends)])
    # Half a photo named and half not added to each block: thirty photos all named are not a certainty
    # (0.98, not 1.0), nor ten thousand unnamed an impossibility. That can break the order; pool again.
    vals2, _, ends2 = pool_adjacent_violators((vals * wts + 0.5) / (wts + 1), wts)
    starts2 = np.concatenate([[0], ends2[:-1] + 1])
    kx = [float(np.average(bx[s:e + 1], weights=wts[s:e + 1])) for s, e in zip(starts2, ends2)]
    ky = vals2.tolist()
    return [round(v, 6) for v in kx], [round(v, 6) for v in ky]


@dataclass(frozen=True)
class Curve:
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    photos: int = 0  # val photos behind the curve
    present: int = 0  # of which the captions name the class

    def __call__(self, raw: np.ndarray | float) -> np.ndarray:
        return np.interp(np.asarray(raw, np.float64), self.xs, self.ys)

    @classmethod
    def from_json(cls, d: object, where: str) -> Curve:
        if not isinstance(d, dict):
            raise CalibrationError(f"{where} is not an object")
        xs, ys = d.get("x"), d.get("y")
        if not (isinstance(xs, list) and isinstance(ys, list) and 0 < len(xs) == len(ys) <= 100_000):
            raise CalibrationError(f"{where} needs lists 'x' and 'y' of the same length")
        nums = xs + ys
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in nums):
            raise CalibrationError(f"{where} holds something other than finite numbers")
        if any(b < a for a, b in zip(xs, xs[1:])) or any(b < a for a, b in zip(ys, ys[1:])):
            raise CalibrationError(f"{where} is not monotone (x and y must never decrease)")
        if not all(0.0 <= v <= 1.0 for v in ys):
            raise CalibrationError(f"{where} gives probabilities outside 0..1")
        return cls(tuple(map(float, xs)), tuple(map(float, ys)), int(d.get("photos", 0)), int(d.get("present", 0)))

    def to_json(self) -> dict:
        return {"x": list(self.xs), "y": list(self.ys), "photos": self.photos, "present": self.present}


@dataclass(frozen=True)
class Calibration:
    """One curve per class that had enough photos, and the pooled curve for all the others."""

    pooled: Curve
    classes: dict[str, Curve] = field(default_factory=dict)
    info: dict = field(default_factory=dict)  # how and on what it was fitted (kept in the file, not used)

    def curve(self, label: str) -> Curve:
        return self.classes.get(label, self.pooled)

    def apply(self, label: str, raw: np.ndarray | float) -> np.ndarray:
        return self.curve(label)(raw)

    @classmethod
    def from_json(cls, d: object, labels: list[str]) -> Calibration:
        if not isinstance(d, dict) or not isinstance(d.get("classes", {}), dict):
            raise CalibrationError("calibration is not an object with 'pooled' and 'classes'")
        unknown = sorted(set(d.get("classes", {})) - set(labels))
        if unknown:
            raise CalibrationError(f"calibration names classes the detector does not have: {unknown[:3]}")
        pooled = Curve.from_json(d.get("pooled"), "calibration 'pooled'")
        classes = {k: Curve.from_json(v, f"calibration class {k!r}") for k, v in d.get("classes", {}).items()}
        return cls(pooled, classes, {k: v for k, v in d.items() if k not in ("pooled", "classes")})

    def to_json(self) -> dict:
        return {**self.info, "pooled": self.pooled.to_json(),
                "classes": {k: c.to_json() for k, c in self.classes.items()}}
