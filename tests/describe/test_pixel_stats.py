"""The picture-kind model's pixel statistics, computed channel by channel, are the numbers its linear model
was fitted on: the same to the last bit as the reductions along the colour axis they were first written with."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.describe.picture_kind import pixel_stats

ROOT = Path(__file__).resolve().parents[2]


def _former():
    """The statistics as first written, kept by the benchmark as its baseline (one copy of them)."""
    spec = importlib.util.spec_from_file_location("bench_detector", ROOT / "bench" / "bench_detector.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.former_pixel_stats


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
    got, want = pixel_stats(img), _former()(img)
    assert got.dtype == np.float32 and got.shape == (9,)
    assert np.array_equal(got, want), (got, want)
