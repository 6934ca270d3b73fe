"""Attention maps drawn over the image (used by the window and the evaluation sheets).

A map is shown as colour laid over the picture, not as a darkening: a reader sees at once where a
word's attention was high (bright yellow) and where it was low (dark purple), and the picture stays
recognisable underneath.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# Matplotlib's "inferno", sampled at 0, 0.1, ..., 1: perceptually even and readable without colour
# vision (it runs dark to bright), so a reader who cannot tell hues apart still sees where it looked.
_INFERNO = np.array([
    (0, 0, 4), (22, 11, 57), (66, 10, 104), (106, 23, 110), (147, 38, 103), (188, 55, 84),
    (221, 81, 58), (243, 120, 25), (252, 165, 10), (246, 215, 70), (252, 255, 164),
], dtype=np.float32)


def colormap(values: np.ndarray) -> np.ndarray:
    """Values in 0..1 as inferno colours: an array of the same shape plus a last axis of RGB, 0..255."""
    v = np.clip(np.asarray(values, dtype=np.float32), 0.0, 1.0)
    stops = np.linspace(0.0, 1.0, len(_INFERNO))
    return np.stack([np.interp(v, stops, _INFERNO[:, c]) for c in range(3)], axis=-1).astype(np.float32)


def heatmap(att: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A [rows, cols] attention grid upsampled smoothly to ``size`` (w, h), stretched to 0..1.

    Stretched from its minimum to its maximum: a soft attention is spread over the whole grid,
    and what matters to a reader is where it looked more.
    """
    a = np.asarray(att, dtype=np.float32)
    span = float(a.max() - a.min())
    a = (a - a.min()) / span if span > 1e-9 else np.ones_like(a)
    small = Image.fromarray((a * 255).astype(np.uint8), "L")
    big = small.resize(size, Image.BICUBIC).filter(ImageFilter.GaussianBlur(radius=max(size) / 40))
    return np.asarray(big, dtype=np.float32) / 255.0


def overlay(img: Image.Image, att: np.ndarray, alpha: float = 0.6) -> Image.Image:
    """The picture with its attention map laid over it in colour, ``alpha`` of the colour on top.

    The colour is a little stronger where the model looked more, so the bright spot stands out while
    the dim parts of the picture can still be made out."""
    base = img.convert("RGB")
    h = heatmap(att, base.size)
    a = (alpha * (0.75 + 0.25 * h))[..., None]
    arr = np.asarray(base, dtype=np.float32)
    mixed = arr * (1 - a) + colormap(h) * a
    return Image.fromarray(np.clip(mixed + 0.5, 0, 255).astype(np.uint8), "RGB")


def legend(width: int, height: int) -> Image.Image:
    """The colour scale of ``overlay``, least attention on the left and most on the right."""
    row = colormap(np.linspace(0.0, 1.0, max(1, width)))
    return Image.fromarray(np.repeat(row[None], max(1, height), axis=0).astype(np.uint8), "RGB")


def strip(img: Image.Image, words: list[str], attention: np.ndarray, grid: tuple[int, int],
          tile: int = 128, per_row: int = 8) -> Image.Image:
    """The image followed by one small attended copy per word, each labelled with its word."""
    font = ImageFont.load_default(size=max(12, tile // 8))
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    boxes = [probe.textbbox((0, 0), w, font=font) for w in ["(image)", *words]]
    label_h = max(b[3] for b in boxes) + 6  # the tallest word, descenders included
    col = max(tile, *(b[2] + 4 for b in boxes))  # a long word widens every column, never cut
    thumb = img.convert("RGB").resize((tile, tile), Image.BICUBIC)
    tiles = [(thumb, "(image)")] + [
        (overlay(thumb, attention[i].reshape(grid)), w) for i, w in enumerate(words)
    ]
    rows = (len(tiles) + per_row - 1) // per_row
    sheet = Image.new("RGB", (per_row * (col + 4), rows * (tile + label_h + 4)), "white")
    draw = ImageDraw.Draw(sheet)
    for k, (im, word) in enumerate(tiles):
        x, y = (k % per_row) * (col + 4), (k // per_row) * (tile + label_h + 4)
        sheet.paste(im, (x + (col - tile) // 2, y))
        draw.text((x + col // 2, y + tile + 3), word, fill="black", font=font, anchor="ma")
    return sheet
