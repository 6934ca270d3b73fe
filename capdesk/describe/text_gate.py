"""Whether a photo may hold text, read off the caption encoder's grid that every picture already has: a
linear model in front of the text finder (``capdesk.describe.text_presence``) under ``--ocr auto``.

The finder costs about 20 ms of CPU a picture, as much as the object detector, and finds text on about one
everyday photo in ten; the gate lets it look only where the encoder's features say text is possible. Text is
local (a sign is a few cells of the 7x7 grid), so the model scores each cell and takes the highest: a
linear model of the grid's mean missed small signs and let through twice as many photos. It is fitted so
that it lets through every val photo whose text the finder finds and the reader says
(``training/studies/text_gate.py``; the figures in the manifest's ``text_gate`` and docs/performance.md).
Pictures of other kinds (screenshots, pages, charts, ...) are always looked at. It ships in the everyday
bundle as ``text_gate.npz`` (covered by the manifest's hashes) and applies only to the encoder whose
features it was fitted on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from capdesk.model.bundle import Bundle


@dataclass(frozen=True)
class TextGate:
    mean: np.ndarray  # (D,) of the grid cells it was fitted on
    scale: np.ndarray  # (D,)
    weights: np.ndarray  # (D,)
    bias: float
    threshold: float  # the finder looks where the probability reaches this
    features_sha256: str = ""

    def probabilities(self, grid: np.ndarray) -> np.ndarray:
        """How likely each picture (``grid``: (n, L, D), the encoder's features) holds text worth reading:
        the score of its likeliest cell."""
        z = (((grid - self.mean) / self.scale) @ self.weights).max(axis=1) + self.bias
        return 1 / (1 + np.exp(-np.clip(z, -40, 40)))

    def may_hold_text(self, grid: np.ndarray) -> list[bool]:
        """For each picture, whether the text finder should look at it."""
        return [bool(p >= self.threshold) for p in self.probabilities(grid)]

    def save(self, path: str) -> None:
        np.savez_compressed(path, mean=self.mean.astype(np.float32), scale=self.scale.astype(np.float32),
                            weights=self.weights.astype(np.float32), bias=np.float32(self.bias))


def from_bundle(bundle: Bundle) -> TextGate | None:
    """The bundle's text gate (checked against the manifest's hashes), or None when it has none or it was
    fitted on another encoder's features."""
    spec = bundle.manifest.get("text_gate")
    if not isinstance(spec, dict) or not spec.get("file"):
        return None
    fitted_on = str(spec.get("features_sha256", ""))
    if fitted_on and fitted_on != bundle.features_key:
        return None
    with np.load(io.BytesIO(bundle.read_verified(str(spec["file"]))), allow_pickle=False) as z:
        return TextGate(z["mean"].astype(np.float32), z["scale"].astype(np.float32),
                        z["weights"].astype(np.float32), float(z["bias"]), float(spec.get("threshold", 0.0)),
                        fitted_on)
