"""The main colours of a picture, named from each colour bin's centre."""

from __future__ import annotations

import numpy as np
from PIL import Image

from capdesk.describe import pixelfacts


def test_each_bin_is_named_as_its_centre_whenever_it_is_first_met():
    """The bins are named when a picture first holds them (not all 4,096 at import, 14 ms of a cold start):
    every bin gets its centre's word, in any order of meeting them."""
    order = np.random.default_rng(0).permutation(4096)
    for part in np.array_split(order, 7):
        pixelfacts._bin_names(part)
    got = [pixelfacts._NAMES[i] for i in pixelfacts._bin_names(np.arange(4096))]
    want = [pixelfacts.colour_name(((k // 256) * 16 + 8, (k // 16 % 16) * 16 + 8, (k % 16) * 16 + 8))
            for k in range(4096)]
    assert got == want


def test_main_colours_are_the_largest_shares_most_first():
    a = np.zeros((100, 100, 3), np.uint8)
    a[:, :60] = (20, 60, 200)  # blue, 60%
    a[:, 60:85] = (250, 250, 250)  # white, 25%
    a[:, 85:95] = (200, 30, 30)  # red, 10%
    a[:, 95:] = (30, 160, 40)  # green, 5%: under the share a main colour needs
    assert pixelfacts.main_colours(Image.fromarray(a)) == ("blue", "white", "red")
