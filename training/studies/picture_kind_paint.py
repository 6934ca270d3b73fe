"""Paintings made here from photos, for the picture-kind model's painting kind.

Only a few dozen real paintings can be had in packages (gcompris-qt-data's famous paintings, Wesnoth's
story art), too few to learn what makes a painting a painting rather than what those paintings show. So
everyday train photos (never val or test ones) are repainted in five ways a painter works, each a source
of its own so that one can be held out whole:

- ``paint-oil``: curved brush strokes in layers from broad to fine, each stroke one colour taken from the
  photo and laid across the gradient (the way of Hertzmann's painterly rendering), on a canvas weave;
- ``paint-smooth``: a smoothed, glazed picture as the old masters' oils look: a Kuwahara filter keeps
  edges and flattens texture, a warm varnish, darker corners, fine cracks (made, measured, left out:
  ``LEFT_OUT_STYLES``);
- ``paint-watercolour``: few flat washes of colour with darker rims where they meet, paper grain and
  white paper left bare;
- ``paint-dots``: dabs of pure colour on a pale ground (pointillism);
- ``paint-bold``: broad strokes in colours pushed brighter and shifted (expressionist).

The real paintings stay the held-out measure: a network fitted with these and without them is measured on
the gcompris-qt-data paintings.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

SIDE = 448  # the long side the paintings are made at; strokes stay visible at the model's 224
STYLES = ("paint-oil", "paint-smooth", "paint-watercolour", "paint-dots", "paint-bold")
# Made and measured, not learnt: with the smoothed oils, photos in soft focus (a chameleon, a seal, washed-out
# snow) were called paintings; without them, fewer ordinary photos (1 against 4 of the 53 of held-out set 2
# above 0.9, one network each) and no fewer held-out paintings.
LEFT_OUT_STYLES = frozenset({"paint-smooth"})
PER_STYLE = 160


def _sized(img: Image.Image) -> Image.Image:
    img = img.convert("RGB")
    s = SIDE / max(img.size)
    return img.resize((max(int(img.width * s), 8), max(int(img.height * s), 8)), Image.LANCZOS)


def _weave(size: tuple[int, int], r: random.Random, depth: float) -> np.ndarray:
    """A canvas or paper texture: a fine weave with grain, as a factor around 1."""
    w, h = size
    period = r.choice([3, 4, 5])
    yy, xx = np.mgrid[0:h, 0:w]
    weave = np.sin(xx * 2 * math.pi / period) * np.sin(yy * 2 * math.pi / period)
    grain = np.asarray(Image.fromarray((np.random.default_rng(r.getrandbits(32)).random((h, w)) * 255)
                                       .astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.8)), np.float32) / 255
    return 1 + depth * (0.5 * weave + (grain - 0.5))


def _apply(arr: np.ndarray, factor: np.ndarray) -> Image.Image:
    return Image.fromarray(np.clip(arr * factor[..., None], 0, 255).astype(np.uint8))


def _stroke(ref: np.ndarray, gx: np.ndarray, gy: np.ndarray, x: float, y: float, radius: int,
            r: random.Random) -> list[tuple[float, float]]:
    """A curved stroke from (x, y), each step across the gradient, ending where the colour changes."""
    h, w = ref.shape[:2]
    start = ref[int(y), int(x)].astype(np.float32)
    pts, dx0, dy0 = [(x, y)], 0.0, 0.0
    for _ in range(r.randint(2, 8)):
        ix, iy = int(min(max(x, 0), w - 1)), int(min(max(y, 0), h - 1))
        if np.abs(ref[iy, ix] - start).sum() > 90:
            break
        g = math.hypot(gx[iy, ix], gy[iy, ix])
        if g < 1e-3:
            dx, dy = (dx0, dy0) if (dx0 or dy0) else (math.cos(r.uniform(0, 6.3)), math.sin(r.uniform(0, 6.3)))
        else:
            dx, dy = -gy[iy, ix] / g, gx[iy, ix] / g
            if dx * dx0 + dy * dy0 < 0:
                dx, dy = -dx, -dy
        dx, dy = 0.6 * dx + 0.4 * dx0, 0.6 * dy + 0.4 * dy0
        n = math.hypot(dx, dy) or 1
        dx0, dy0 = dx / n, dy / n
        x, y = x + radius * dx0, y + radius * dy0
        pts.append((x, y))
    return pts


def oil(img: Image.Image, r: random.Random, bold: bool = False) -> Image.Image:
    src = _sized(img)
    if bold:
        src = ImageEnhance.Color(src).enhance(r.uniform(1.6, 2.4))
        src = ImageEnhance.Contrast(src).enhance(r.uniform(1.1, 1.4))
    ground = tuple(int(v) for v in np.asarray(src, np.float32).reshape(-1, 3).mean(0) * r.uniform(0.7, 1.1))
    canvas = Image.new("RGB", src.size, ground)
    draw = ImageDraw.Draw(canvas)
    radii = [r.choice([14, 18, 24]), r.choice([7, 9]), r.choice([3, 4])] if not bold else [r.choice([16, 20]), 9]
    for radius in radii:
        ref = np.asarray(src.filter(ImageFilter.GaussianBlur(radius * 0.6)), np.float32)
        grey = ref.mean(axis=2)
        gy, gx = np.gradient(grey)
        have = np.asarray(canvas, np.float32)
        points = [(x + r.uniform(0, radius), y + r.uniform(0, radius))
                  for y in range(0, src.height - 1, radius) for x in range(0, src.width - 1, radius)]
        r.shuffle(points)
        for x, y in points:
            ix, iy = min(int(x), src.width - 1), min(int(y), src.height - 1)
            if radius != radii[0] and np.abs(have[iy, ix] - ref[iy, ix]).sum() < 40:
                continue
            c = ref[iy, ix] * r.uniform(0.9, 1.1) + r.uniform(-12, 12)
            draw.line(_stroke(ref, gx, gy, ix, iy, radius, r), fill=tuple(int(v) for v in np.clip(c, 0, 255)),
                      width=max(2, int(radius * r.uniform(0.8, 1.3))), joint="curve")
    arr = np.asarray(canvas, np.float32)
    relief = np.asarray(canvas.convert("L").filter(ImageFilter.EMBOSS), np.float32) / 128 - 1
    return _apply(arr, _weave(canvas.size, r, 0.06) + 0.12 * relief)


def _kuwahara(arr: np.ndarray, k: int) -> np.ndarray:
    """Each pixel the mean of the least varied of the four (k+1)-square windows it is a corner of."""
    h, w = arr.shape[:2]
    grey = arr.mean(axis=2)

    def box(a: np.ndarray) -> np.ndarray:  # the mean of every (k+1)-square window, by an integral image
        p = np.pad(a, ((k + 1, k + 1), (k + 1, k + 1)) + ((0, 0),) * (a.ndim - 2), mode="edge")
        c = np.cumsum(np.cumsum(p, 0), 1)
        c = np.pad(c, ((1, 0), (1, 0)) + ((0, 0),) * (a.ndim - 2))
        s = c[k + 1:, k + 1:] - c[:-k - 1, k + 1:] - c[k + 1:, :-k - 1] + c[:-k - 1, :-k - 1]
        return s / (k + 1) ** 2

    m, m2, mc = box(grey), box(grey * grey), box(arr)
    var = m2 - m * m
    best_var = np.full((h, w), np.inf)
    out = np.zeros_like(arr)
    for oy in (0, k):
        for ox in (0, k):
            v = var[oy + 1:oy + 1 + h, ox + 1:ox + 1 + w]
            c = mc[oy + 1:oy + 1 + h, ox + 1:ox + 1 + w]
            take = v < best_var
            best_var = np.where(take, v, best_var)
            out[take] = c[take]
    return out


def _cracks(size: tuple[int, int], r: random.Random) -> np.ndarray:
    """Fine dark cracks in a net, as old varnish and paint crack: the edges of random cells."""
    w, h = size
    im = Image.new("L", size, 0)
    d = ImageDraw.Draw(im)
    step = r.choice([10, 14, 20])
    for y in range(0, h + step, step):
        for x in range(0, w + step, step):
            jx, jy = x + r.uniform(-step / 2, step / 2), y + r.uniform(-step / 2, step / 2)
            d.line([(jx, jy), (jx + r.uniform(-1, 1) * step, jy + r.uniform(-1, 1) * step)], fill=255, width=1)
    return np.asarray(im, np.float32) / 255


def smooth(img: Image.Image, r: random.Random) -> Image.Image:
    arr = np.asarray(_sized(img), np.float32)
    for _ in range(r.randint(1, 2)):
        arr = _kuwahara(arr, r.choice([3, 4, 5]))
    varnish = np.array([1.0, r.uniform(0.88, 0.96), r.uniform(0.68, 0.82)], np.float32)
    arr = (arr * r.uniform(0.75, 0.95) + r.uniform(0, 20)) * varnish
    h, w = arr.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    vignette = 1 - r.uniform(0.2, 0.5) * (((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2)
    factor = vignette * _weave((w, h), r, 0.04)
    if r.random() < 0.6:
        factor = factor * (1 - r.uniform(0.1, 0.3) * _cracks((w, h), r))
    return _apply(arr, factor)


def watercolour(img: Image.Image, r: random.Random) -> Image.Image:
    src = _sized(img).filter(ImageFilter.MedianFilter(r.choice([5, 7])))
    flat = src.quantize(r.choice([6, 8, 12]), method=Image.Quantize.MEDIANCUT).convert("RGB")
    flat = flat.filter(ImageFilter.GaussianBlur(r.uniform(1, 2.5)))
    arr = np.asarray(flat, np.float32)
    rims = np.asarray(flat.convert("L").filter(ImageFilter.FIND_EDGES).filter(ImageFilter.GaussianBlur(1)),
                      np.float32) / 255
    arr = 255 - (255 - arr) * r.uniform(0.55, 0.85)  # thin washes: lighter than the photo
    arr = arr * (1 - np.clip(rims * 2.5, 0, 0.35))[..., None]
    bare = arr.mean(axis=2) > r.uniform(200, 230)
    arr[bare] = 255 - (255 - arr[bare]) * 0.2
    paper = np.array([1.0, 0.99, r.uniform(0.93, 0.98)], np.float32) * 1.0
    return _apply(arr * paper, _weave(flat.size, r, 0.08))


def dots(img: Image.Image, r: random.Random) -> Image.Image:
    src = ImageEnhance.Color(_sized(img)).enhance(r.uniform(1.2, 1.8))
    ref = np.asarray(src.filter(ImageFilter.GaussianBlur(2)), np.float32)
    canvas = Image.new("RGB", src.size, tuple(r.randint(225, 250) for _ in range(3)))
    d = ImageDraw.Draw(canvas)
    rad = r.choice([2, 3, 4])
    for _ in range(int(src.width * src.height / (rad * rad) * 1.3)):
        x, y = r.randrange(src.width), r.randrange(src.height)
        c = ref[y, x] + np.array([r.uniform(-30, 30) for _ in range(3)])
        d.ellipse([x - rad, y - rad, x + rad, y + rad], fill=tuple(int(v) for v in np.clip(c, 0, 255)))
    return canvas


def photo_paths(data: Path, n: int | None = None, order: str = "paint") -> list[Path]:
    """Everyday train photos (never val or test), in a fixed order of their own (``order`` seeds it), the
    first ``n`` (all where None)."""
    meta = json.loads((data / "everyday" / "dataset_everyday.json").read_text())
    names = sorted(im["filename"] for im in meta["images"] if im["split"] == "train")
    random.Random(order).shuffle(names)
    return [data / "everyday" / "images" / f for f in names[:n]]


def render_paintings(out: Path, data: Path) -> None:
    makers = {"paint-oil": oil, "paint-smooth": smooth, "paint-watercolour": watercolour, "paint-dots": dots,
              "paint-bold": lambda im, r: oil(im, r, bold=True)}
    photos = photo_paths(data, PER_STYLE * len(STYLES))
    for s, style in enumerate(STYLES):
        if style in LEFT_OUT_STYLES:  # its photos stay its own, so that the other styles' are the same
            continue
        dest = out / "painting" / style
        dest.mkdir(parents=True, exist_ok=True)
        for i in range(PER_STYLE):
            p = dest / f"{i:04d}.png"
            if p.exists():
                continue
            photo = photos[s * PER_STYLE + i]
            with Image.open(photo) as im:
                makers[style](im, random.Random(f"{style}:{i}")).save(p)
            (dest / f"{i:04d}.from").write_text(photo.name)
