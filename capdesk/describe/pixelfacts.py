"""Plain facts read from the pixels alone: for pictures no model can describe, and for the
extended description of every picture.

Only facts that pixels settle beyond doubt: a picture that is one colour ("A blank white
image.") or nearly so ("A mostly blank white image."), its size and orientation, and its main
colours by name. Guesses about the medium ("a photo", "a screenshot") are not said: on their
own they are placeholder text, not an alternative.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np
from PIL import Image

SIDE = 256  # the main colour is a property of the whole picture: a thumbnail finds it
STRIP_PIXELS = 1 << 20  # pixels compared at a time, so an 80-megapixel picture needs little memory
TOLERANCE = 20  # per channel, of 255: JPEG noise and gentle gradients stay "the same colour"
BLANK = 1 - 1e-5  # share of pixels in the main colour for "blank": one short word is more than this
MOSTLY_BLANK = 0.985  # ... for "mostly blank"; a page of text stays under it (measured: 0.90)
MAIN_COLOUR_SHARE = 0.10  # a colour named among the main ones covers at least this share of the picture
MAIN_COLOURS_MAX = 3


def colour_name(rgb: np.ndarray | tuple[float, float, float]) -> str:
    """A plain colour word for an RGB triple (0..255)."""
    r, g, b = (float(c) / 255 for c in rgb)
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    if v < 0.2:
        return "black"
    if s < 0.15:
        return "white" if v > 0.85 else "grey"
    deg = h * 360
    if deg < 15 or deg >= 345:
        name = "red"
    elif deg < 45:
        name = "orange"
    elif deg < 70:
        name = "yellow"
    elif deg < 170:
        name = "green"
    elif deg < 260:
        name = "blue"
    elif deg < 300:
        name = "purple"
    else:
        name = "pink"
    if name in ("orange", "red") and v < 0.6:
        return "brown"
    return name


def main_colour_share(img: Image.Image, at_least: float = 0.0) -> tuple[np.ndarray, float]:
    """The most common colour (RGB) and the share of pixels within ``TOLERANCE`` of it.

    The colour comes from a thumbnail; the share is counted on every pixel, a strip at a time,
    because a reduced picture would average a small word or mark into the background. Counting stops
    once the share can no longer reach ``at_least``: the share returned is then under it, not exact."""
    rgb = img if img.mode == "RGB" else img.convert("RGB")  # convert would copy an RGB picture whole
    small = rgb.copy()
    small.thumbnail((SIDE, SIDE), Image.Resampling.BOX)
    px = np.asarray(small, np.int16).reshape(-1, 3)
    bins = (px // 16).astype(np.int32)
    keys = bins[:, 0] * 256 + bins[:, 1] * 16 + bins[:, 2]
    main = px[keys == np.bincount(keys).argmax()].mean(0)
    w, h = rgb.size
    if small.size == rgb.size:  # a picture no bigger than the thumbnail: its pixels are all here
        return main, int((np.abs(px - main) <= TOLERANCE).all(1).sum()) / max(w * h, 1)
    rows = max(1, STRIP_PIXELS // max(w, 1))
    most_far = (1 - at_least) * w * h  # more pixels than this away from the main colour: under at_least
    close = far = 0
    for top in range(0, h, rows):
        strip = np.asarray(rgb.crop((0, top, w, min(h, top + rows))), np.int16)
        near = int((np.abs(strip - main) <= TOLERANCE).all(2).sum())
        close, far = close + near, far + strip.shape[0] * w - near
        if far > most_far:
            break
    return main, close / max(w * h, 1)


def plain_fact(img: Image.Image) -> str:
    """'A blank white image.', 'A mostly blank white image.' or '' (nothing certain to say)."""
    main, share = main_colour_share(img, at_least=MOSTLY_BLANK)
    if share >= BLANK:
        return f"A blank {colour_name(main)} image."
    if share >= MOSTLY_BLANK:
        return f"A mostly blank {colour_name(main)} image."
    return ""


@dataclass(frozen=True)
class PictureFacts:
    width: int  # pixels, upright (after the EXIF orientation)
    height: int
    colours: tuple[str, ...]  # the main colours by name, the most widespread first
    pages: int = 1  # a multi-page file (TIFF): how many pages; the first is the one described

    @property
    def orientation(self) -> str:
        if self.width == self.height:
            return "square"
        return "landscape" if self.width > self.height else "portrait"

    def sentence(self) -> str:
        """'A landscape picture, 451 by 300 pixels; main colours: brown, grey and white.'"""
        out = f"A {self.orientation} picture, {self.width} by {self.height} pixels"
        if self.colours:
            names = list(self.colours)
            said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            out += f"; main colour{'s' if len(names) > 1 else ''}: {said}"
        return out + "."


_NAMES = ("black", "white", "grey", "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown")
# Each 16-level RGB bin's colour word (an index into _NAMES; -1 until first met). Named once, when a picture
# first holds the bin: naming each occupied bin of each picture anew cost some 9 ms of a folder's picture in
# Python, and naming all 4,096 at import 14 ms of a cold start. Two threads naming a bin write the same word.
_BIN_NAME = np.full(4096, -1, np.int64)


def _bin_names(bins: np.ndarray) -> np.ndarray:
    """The index in ``_NAMES`` of the colour word of each bin's centre."""
    for key in bins[_BIN_NAME[bins] < 0].tolist():
        _BIN_NAME[key] = _NAMES.index(colour_name(((key // 256) * 16 + 8, (key // 16 % 16) * 16 + 8,
                                                   (key % 16) * 16 + 8)))
    return _BIN_NAME[bins]


def main_colours(img: Image.Image) -> tuple[str, ...]:
    """The colour names that cover at least ``MAIN_COLOUR_SHARE`` of the picture, most first."""
    small = img.convert("RGB")
    small.thumbnail((SIDE // 2, SIDE // 2), Image.Resampling.BOX)
    px = np.asarray(small, np.int32).reshape(-1, 3)
    if not len(px):
        return ()
    keys = (px[:, 0] // 16) * 256 + (px[:, 1] // 16) * 16 + px[:, 2] // 16
    counts = np.bincount(keys, minlength=4096)
    occupied = np.flatnonzero(counts)
    named = _bin_names(occupied)
    share = np.bincount(named, weights=counts[occupied], minlength=len(_NAMES)) / len(px)
    # Equal shares keep the order of the names' first occupied bins, as adding them up bin by bin does.
    first = np.full(len(_NAMES), 4096)
    np.minimum.at(first, named, occupied)
    ranked = sorted(np.flatnonzero(share > 0), key=lambda i: (-share[i], first[i]))
    return tuple(_NAMES[i] for i in ranked[:MAIN_COLOURS_MAX] if share[i] >= MAIN_COLOUR_SHARE)


def picture_facts(img: Image.Image, size: tuple[int, int] | None = None) -> PictureFacts:
    """Facts about ``img``; ``size``: the picture's real size when ``img`` was decoded smaller."""
    w, h = size or img.size
    return PictureFacts(int(w), int(h), main_colours(img), int(img.info.get("pages", 1)))
