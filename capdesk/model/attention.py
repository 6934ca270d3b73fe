"""Attention maps drawn over the image, as in the paper's figures (used by the GUI and the sheets)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont


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


def overlay(img: Image.Image, att: np.ndarray, strength: float = 0.85) -> Image.Image:
    """Darken the image where the model did not look, as in the paper's figures."""
    base = img.convert("RGB")
    h = heatmap(att, base.size)[..., None]
    arr = np.asarray(base, dtype=np.float32)
    lit = arr * (1 - strength + strength * h) + 255 * 0.12 * h  # a faint glow where it looked
    return Image.fromarray(np.clip(lit, 0, 255).astype(np.uint8), "RGB")


def strip(img: Image.Image, words: list[str], attention: np.ndarray, grid: tuple[int, int],
          tile: int = 128, per_row: int = 8) -> Image.Image:
    """The image followed by one small attended copy per word, each labelled with its word."""
    font = ImageFont.load_default(size=max(10, tile // 9))
    label_h = tile // 6
    thumb = img.convert("RGB").resize((tile, tile), Image.BICUBIC)
    tiles = [(thumb, "(image)")] + [
        (overlay(thumb, attention[i].reshape(grid)), w) for i, w in enumerate(words)
    ]
    rows = (len(tiles) + per_row - 1) // per_row
    sheet = Image.new("RGB", (per_row * (tile + 4), rows * (tile + label_h + 4)), "white")
    draw = ImageDraw.Draw(sheet)
    for k, (im, word) in enumerate(tiles):
        x, y = (k % per_row) * (tile + 4), (k // per_row) * (tile + label_h + 4)
        sheet.paste(im, (x, y))
        draw.text((x + 2, y + tile + 1), word, fill="black", font=font)
    return sheet
