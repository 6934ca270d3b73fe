"""What kind of picture it is (a photo, a drawing, a diagram or chart, a screenshot, a page of text, a map,
sheet music, an abstract image), from the caption model's pooled encoder features and a few pixel
statistics, by a linear model fitted on pictures gathered from Debian's desktop and documentation
packages and the everyday val photos (``training/studies/picture_kind.py``; figures in docs/training.md,
"What kind of picture it is").

The caption models learnt from photos only, so a picture that is surely not a photo is said to be what
it is, and never captioned as a scene. The model ships in the everyday bundle as ``kind.npz`` (covered by
the manifest's hashes); it applies only to the encoder whose features it was fitted on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from capdesk.model.bundle import Bundle

PHOTO = "photo"
OTHER = "other"  # surely not a photo, but no one kind is sure: no scene caption, and no kind said
# How each kind is named first in an alt text ("A drawing of a fish.", "A screenshot.").
SAID = {
    "drawing": "a drawing",
    "painting": "a painting",
    "diagram": "a diagram or chart",
    "screenshot": "a screenshot",
    "text": "a page of text",
    "map": "a map",
    "music": "sheet music",
    "graphic": "an abstract image",
}
# Kinds whose content is told by what it holds ("A drawing of a cat."); the others are said on their own
# or with the text read in them, never with a scene caption or the detector's objects (a person icon in a
# screenshot is not a person).
DEPICTS = frozenset({"drawing", "painting"})
SIDE = 224  # the statistics are of the picture as the encoder sees it


def pixel_stats(img: Image.Image) -> np.ndarray:
    """Nine numbers that tell drawn pictures from photographed ones: how many colours, how flat, how much
    white or black, how saturated, and how much of the edges run straight across or down.

    The three channels are taken apart once and combined element by element: numpy's reductions along a
    last axis of length 3 (``mean``, ``max``, ``all`` over ``axis=2``) were most of the cost, and these
    are the same operations on the same numbers, so the statistics are the same to the last bit."""
    a = np.asarray(img.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR), dtype=np.int16)
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    q = (r >> 4) * 256 + (g >> 4) * 16 + (b >> 4)
    counts = np.bincount(q.ravel(), minlength=4096)
    n = q.size
    grey = (r + g + b).astype(np.float64) / 3  # what a.mean(axis=2) computes: the sum in float64, then / 3
    gx = np.abs(np.diff(grey, axis=1))[:-1, :]
    gy = np.abs(np.diff(grey, axis=0))[:, :-1]
    edge = gx + gy
    strong = edge > 40
    straight = ((gx > 4 * gy) | (gy > 4 * gx)) & strong
    mx, mn = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1), 0)
    return np.array([
        np.log((counts > 0).sum() / 4096 + 1e-4),
        counts.max() / n,
        ((r > 235) & (g > 235) & (b > 235)).mean(),
        ((r < 20) & (g < 20) & (b < 20)).mean(),
        sat.mean(),
        (edge < 3).mean(),
        edge.mean() / 255,
        straight.sum() / max(strong.sum(), 1),
        strong.mean(),
    ], dtype=np.float32)


@dataclass
class KindModel:
    kinds: list[str]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (features, kinds)
    bias: np.ndarray
    threshold: float  # a kind other than photo is said from this probability
    features_sha256: str = ""
    not_photo_below: float = 0.0  # a picture whose photo probability is under this is surely not a photo

    def save(self, path: str | Path) -> None:
        np.savez(path, kinds=np.array(self.kinds), mean=self.mean.astype(np.float32),
                 scale=self.scale.astype(np.float32), weights=self.weights.astype(np.float32),
                 bias=self.bias.astype(np.float32))

    def probabilities(self, pooled: np.ndarray, stats: np.ndarray) -> np.ndarray:
        """Each kind's probability for each picture (``pooled``: (n, dim) encoder features)."""
        x = (np.concatenate([pooled, stats], axis=1) - self.mean) / self.scale
        z = x @ self.weights + self.bias
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    def kind(self, probs: np.ndarray) -> tuple[str, float]:
        """The kind said for one picture's probabilities: a photo unless another kind is sure."""
        i = int(np.argmax(probs))
        k = self.kinds[i]
        if k != PHOTO and probs[i] >= self.threshold:
            return k, float(probs[i])
        photo = float(probs[self.kinds.index(PHOTO)]) if PHOTO in self.kinds else 0.0
        if photo < self.not_photo_below:
            return OTHER, 1.0 - photo
        return PHOTO, photo


def from_bundle(bundle: Bundle) -> KindModel | None:
    """The bundle's picture-kind model (checked against the manifest's hashes), or None when it has none
    or it is not for the bundle's encoder."""
    spec = bundle.manifest.get("picture_kind")
    if not isinstance(spec, dict) or not spec.get("file"):
        return None
    fitted_on = str(spec.get("features_sha256", ""))
    if fitted_on and fitted_on != bundle.features_key:
        return None
    with np.load(io.BytesIO(bundle.read_verified(str(spec["file"]))), allow_pickle=False) as z:
        return KindModel([str(k) for k in z["kinds"]], z["mean"], z["scale"], z["weights"], z["bias"],
                         float(spec.get("threshold", 0.9)), fitted_on, float(spec.get("not_photo_below", 0.0)))
