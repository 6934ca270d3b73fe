"""What kind of picture it is (a photo, a drawing, a painting, an icon, a 3D rendering, a diagram, a chart, a
map, a screenshot, a page of text, sheet music, a table), from the caption model's encoder features (their
mean and spread over the grid) and statistics of the pixels (colours, edges at two scales, flat and
textured patches, ink on a plain ground as text leaves it), by a small network fitted on pictures
rendered and gathered for each kind (``training/studies/picture_kind.py``; figures in docs/training.md,
"What kind of picture it is").

The caption models learnt from photos only, so a picture that is surely not a photo is said to be what
it is, and never captioned as a scene. The model ships in the everyday bundle as ``kind.npz`` (covered by
the manifest's hashes); it applies only to the encoder whose features it was fitted on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
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
    "icon": "an icon",
    "render3d": "a 3D rendering",
    "diagram": "a diagram",
    "chart": "a chart",
    "map": "a map",
    "screenshot": "a screenshot",
    "text": "a page of text",
    "music": "sheet music",
    "table": "a table",
    "graphic": "an abstract image",  # a kind of the former model
}
# Kinds whose content is told by what it holds ("A drawing of a cat."); the others are said on their own
# or with the text read in them, never with a scene caption or the detector's objects (a person icon in a
# screenshot is not a person).
DEPICTS = frozenset({"drawing", "painting"})
SIDE = 224  # the statistics are of the picture as the encoder sees it
BLANK = 0.97  # the commonest colour's share from which a picture is blank, of no kind
# The mean step between neighbouring pixels (a share of 255) from which a picture is noise, of no kind and no
# photo: no photo of 11,600 (every everyday and RSICD photo the kind data lists, 1,500 more RSICD train photos,
# the ordinary tuning and held-out ones) reaches 0.29 (an aerial forest); random pixels are 0.38. The network
# does not settle it: with photos of things on plain grounds learnt, noise came out a sixth likely a photo.
NOISE = 0.33
_EDGE_MEAN = 14  # where kind_stats keeps that mean
BLOCK = 128  # columns of one product (``_product``)


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


def _below(x: np.ndarray, cuts: tuple[float, ...]) -> list[float]:
    return [float((x < c).mean()) for c in cuts]


def kind_stats(img: Image.Image) -> np.ndarray:
    """48 numbers that tell the kinds apart where the encoder, which learnt from photos, sees alike: how
    many colours and how much of the picture the commonest take (flat drawings, icons, charts), edges at
    full and half scale and how much runs straight across or down (rules, boxes, staves), flat and
    textured 8-pixel patches and the finest detail (sensor noise against brush strokes and rendered
    shading), and ink on a plain ground in rows with gaps (text, tables, music). About 1 ms on a
    224-pixel picture; most of the time is the resizing."""
    a = np.asarray(img.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR), dtype=np.int16)
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    q = (r >> 4) * 256 + (g >> 4) * 16 + (b >> 4)
    counts = np.bincount(q.ravel(), minlength=4096)
    n = q.size
    nz = counts[counts > 0] / n
    cum = np.cumsum(-np.sort(-nz))
    top = [float(cum[min(k, len(cum) - 1)]) for k in (0, 1, 3, 7, 15, 63)]
    grey = (r + g + b).astype(np.float32) * np.float32(1 / 3)
    gx = np.abs(grey[:-1, 1:] - grey[:-1, :-1])
    gy = np.abs(grey[1:, :-1] - grey[:-1, :-1])
    edge = gx + gy
    strong = edge > 40
    nstrong = max(int(strong.sum()), 1)
    half = (grey[0::2, 0::2] + grey[1::2, 0::2] + grey[0::2, 1::2] + grey[1::2, 1::2]) * np.float32(0.25)
    edge2 = np.abs(half[:-1, 1:] - half[:-1, :-1]) + np.abs(half[1:, :-1] - half[:-1, :-1])
    lap = np.abs(4 * grey[1:-1, 1:-1] - grey[:-2, 1:-1] - grey[2:, 1:-1] - grey[1:-1, :-2] - grey[1:-1, 2:])
    patches = grey.reshape(SIDE // 8, 8, SIDE // 8, 8)
    pstd = np.sqrt(np.maximum((patches * patches).mean(axis=(1, 3)) - patches.mean(axis=(1, 3)) ** 2, 0))
    mx, mn = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    sat = (mx - mn) / np.maximum(mx, 1).astype(np.float32)
    ground = float(np.median(half)) if top[0] > 0.2 else float(grey.mean())
    ink = np.abs(grey - ground) > 60
    rows_ink, cols_ink = ink.mean(axis=1), ink.mean(axis=0)
    return np.array([
        np.log(len(nz) / 4096 + 1e-4), *top, -(nz * np.log(nz)).sum() / 8,
        ((r > 235) & (g > 235) & (b > 235)).mean(), ((r < 20) & (g < 20) & (b < 20)).mean(), sat.mean(),
        ((gy > 4 * gx) & strong).sum() / nstrong, ((gx > 4 * gy) & strong).sum() / nstrong, strong.mean(),
        edge.mean() / 255, np.log1p(lap.mean()), (lap < 0.5).mean(), (lap < 6).mean(),
        ink.mean(), (rows_ink == 0).mean(), (cols_ink == 0).mean(), rows_ink.std() * 4,
        (ink[:, 1:] != ink[:, :-1]).mean() * 4, (ink[1:, :] != ink[:-1, :]).mean() * 4,
        *_below(edge, (1, 3, 8, 20, 50)), *_below(edge2, (1, 3, 8, 20, 50)), *_below(pstd, (0.5, 2, 6, 15, 35)),
        *_below(sat, (0.05, 0.2, 0.4, 0.7)), *_below(mx, (30, 80, 130, 180, 230))], dtype=np.float32)


def _product(h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``h @ w`` in blocks of at most ``BLOCK`` columns, the same to the bit. Five networks side by side make
    a 2,608 x 640 product, over OpenBLAS's size for using its threads: for a picture, those threads waited
    on the core the detector held, 3-13 ms in a cold start against 0.2 ms for one network's 128 columns."""
    if w.shape[1] <= BLOCK:
        return h @ w
    return np.concatenate([h @ w[:, i:i + BLOCK] for i in range(0, w.shape[1], BLOCK)], axis=1)


def model_inputs(feats: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """What the network reads for each picture: the encoder grid's mean and spread (``feats``: (n, L, D))
    and the pixel statistics (n, 48)."""
    return np.concatenate([feats.mean(1), feats.std(1), stats], axis=1).astype(np.float32)


@dataclass
class KindModel:
    """A small network over ``model_inputs``: standardised, then ReLU layers, then a softmax over kinds."""
    kinds: list[str]
    mean: np.ndarray
    scale: np.ndarray
    layers: list[tuple[np.ndarray, np.ndarray]]  # (weights (in, out), bias) of each layer, the last one linear
    threshold: float  # a kind other than photo is said from this probability (where it has none of its own)
    features_sha256: str = ""
    not_photo_below: float = 0.0  # a picture whose photo probability is under this is surely not a photo
    thresholds: dict[str, float] = field(default_factory=dict)  # each kind's own, where it has one

    def save(self, path: str | Path) -> None:
        """Weights in float16 (the bundle stays small; the probabilities move by under 1e-3), stored
        uncompressed: float16 weights shrink by 7% in zlib, and inflating five networks' 3 MB took 11 ms
        of every cold start."""
        arrays = {f"w{i}": w.astype(np.float16) for i, (w, _) in enumerate(self.layers)}
        arrays |= {f"b{i}": b.astype(np.float32) for i, (_, b) in enumerate(self.layers)}
        np.savez(path, kinds=np.array(self.kinds), mean=self.mean.astype(np.float32),
                 scale=self.scale.astype(np.float32), **arrays)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Each kind's probability for each picture (``x``: ``model_inputs``)."""
        h = (x - self.mean) / self.scale
        for i, (w, b) in enumerate(self.layers):
            h = _product(h, w) + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0)
        z = np.exp(h - h.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    def of_pictures(self, feats: np.ndarray, images: list[Image.Image]) -> list[tuple[str, float]]:
        """The kind said for each picture, and how sure (``feats``: the encoder grid, (n, L, D))."""
        stats = np.stack([kind_stats(im) for im in images])
        said = [self.kind(p) for p in self.probabilities(model_inputs(feats, stats))]
        # a picture of nearly one colour is no kind the model learnt: the plain facts say it ("A blank
        # white image."), as for a photo; noise is surely no photo, and no kind either
        return [(PHOTO, 0.0) if s[1] >= BLANK else (OTHER, 1.0) if s[_EDGE_MEAN] >= NOISE else k
                for k, s in zip(said, stats)]

    def kind(self, probs: np.ndarray) -> tuple[str, float]:
        """The kind said for one picture's probabilities: a photo unless another kind is sure."""
        i = int(np.argmax(probs))
        k = self.kinds[i]
        if k != PHOTO and probs[i] >= self.thresholds.get(k, self.threshold):
            return k, float(probs[i])
        photo = float(probs[self.kinds.index(PHOTO)]) if PHOTO in self.kinds else 0.0
        if photo < self.not_photo_below:
            return OTHER, 1.0 - photo
        return PHOTO, photo


def from_bundle(bundle: Bundle) -> KindModel | None:
    """The bundle's picture-kind model (checked against the manifest's hashes), or None when it has none,
    it is not for the bundle's encoder, or it is of the former format (a linear model over other inputs)."""
    spec = bundle.manifest.get("picture_kind")
    if not isinstance(spec, dict) or not spec.get("file") or spec.get("format") != 2:
        return None
    fitted_on = str(spec.get("features_sha256", ""))
    if fitted_on and fitted_on != bundle.features_key:
        return None
    with np.load(io.BytesIO(bundle.read_verified(str(spec["file"]))), allow_pickle=False) as z:
        n = sum(1 for k in z.files if k.startswith("w"))
        layers = [(z[f"w{i}"].astype(np.float32), z[f"b{i}"].astype(np.float32)) for i in range(n)]
        own = spec.get("thresholds") if isinstance(spec.get("thresholds"), dict) else {}
        return KindModel([str(k) for k in z["kinds"]], z["mean"], z["scale"], layers,
                         float(spec.get("threshold", 0.9)), fitted_on, float(spec.get("not_photo_below", 0.0)),
                         {str(k): float(v) for k, v in own.items()})
