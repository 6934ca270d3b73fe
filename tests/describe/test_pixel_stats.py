"""The picture-kind model's pixel statistics, computed channel by channel, are the numbers its linear model
was fitted on: the same to the last bit as the reductions along the colour axis they were first written with."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.describe.picture_kind import SIDE, pixel_stats


def reference(img: Image.Image) -> np.ndarray:
    a = np.asarray(img.convert("RGB").resize((SIDE, SIDE), Image.BILINEAR), dtype=np.int16)
    q = (a[..., 0] >> 4) * 256 + (a[..., 1] >> 4) * 16 + (a[..., 2] >> 4)
    counts = np.bincount(q.ravel(), minlength=4096)
    grey = a.mean(axis=2)
    gx = np.abs(np.diff(grey, axis=1))[:-1, :]
    gy = np.abs(np.diff(grey, axis=0))[:, :-1]
    strong = (gx + gy) > 40
    straight = ((gx > 4 * gy) | (gy > 4 * gx)) & strong
    mx, mn = a.max(axis=2), a.min(axis=2)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1), 0)
    return np.array([np.log((counts > 0).sum() / 4096 + 1e-4), counts.max() / q.size,
                     ((a > 235).all(axis=2)).mean(), ((a < 20).all(axis=2)).mean(), sat.mean(),
                     ((gx + gy) < 3).mean(), (gx + gy).mean() / 255, straight.sum() / max(strong.sum(), 1),
                     strong.mean()], dtype=np.float32)


def _pictures() -> list[Image.Image]:
    rng = np.random.default_rng(3)
    drawn = Image.new("RGB", (300, 200), "white")
    drawn.paste((20, 40, 200), (40, 40, 260, 60))  # a bar across: straight edges
    return [Image.open(p) for p in sorted(SAMPLES.glob("*.png"))] + [
        drawn, Image.fromarray(rng.integers(0, 256, (90, 160, 3), dtype=np.uint8)),
        Image.new("L", (64, 64), 0), Image.new("RGBA", (50, 70), (250, 250, 250, 10))]


@pytest.mark.parametrize("i", range(len(_pictures())))
def test_the_statistics_are_those_the_model_was_fitted_on(i):
    img = _pictures()[i]
    got, want = pixel_stats(img), reference(img)
    assert got.dtype == np.float32 and got.shape == (9,)
    assert np.array_equal(got, want), (got, want)
