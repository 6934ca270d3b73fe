"""Photos of things on plain backgrounds, made here from everyday photos, for the picture-kind model.

The kind model learnt that a thing on a plain ground is a drawing or an icon: every drawing and icon it
saw was one, and nearly every photo it saw had a scene all round. So product photos and cut-out photos (a
zebra, a broccoli head, a toilet, a robin on a rail against a blank sky) were called drawings, icons, even
screenshots. Packages hold a few such photos (gcompris-qt-data's tools), too few and too alike.

Here the main thing of an everyday *train* photo (never val or test) is cut out: the object detector's
surest box that is neither tiny nor the whole picture starts OpenCV's GrabCut, whose mask, feathered, lays
the thing on a new ground. Two sources, so that one can be held out whole:

- ``cutout-white``: white or nearly white, sometimes with a soft shadow under the thing, as shops and
  catalogues show products;
- ``cutout-plain``: a light grey, a pale or a dark colour, or a gradient, as stock photos and slides do.

A cut that keeps too little or nearly all of its box is left out (GrabCut found no thing in it).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from picture_kind_paint import photo_paths  # beside this file: the everyday train photos in a seeded order
from PIL import Image, ImageFilter

SOURCES = ("cutout-white", "cutout-plain")
PER_SOURCE = 600
MAX_UPSCALE = 3.0  # the everyday photos are about 224 px on the short side; more would only blur them
PERSON_SHARE = 0.35  # Flickr8k is mostly people: keep them to about this share, so that things and animals lead


def _main_box(detector, img: Image.Image, r: random.Random) -> tuple[int, int, int, int] | None:
    area = img.width * img.height
    found = detector.detect(img, floor=0.5)
    if r.random() > PERSON_SHARE:
        found = [d for d in found if d.label != "person"]
    for d in found:
        x0, y0, x1, y1 = d.box
        share = (x1 - x0) * (y1 - y0) / area
        if 0.06 <= share <= 0.8 and x1 - x0 >= 24 and y1 - y0 >= 24:
            return max(x0, 1), max(y0, 1), min(x1, img.width - 2), min(y1, img.height - 2)
    return None


def cut_out(img: Image.Image, box: tuple[int, int, int, int]) -> Image.Image | None:
    """The thing in ``box`` as an RGBA picture cropped to it, or None where GrabCut keeps too little or
    nearly the whole box."""
    import cv2

    rgb = np.asarray(img.convert("RGB"))
    mask = np.zeros(rgb.shape[:2], np.uint8)
    x0, y0, x1, y1 = box
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.grabCut(rgb[:, :, ::-1].copy(), mask, (x0, y0, x1 - x0, y1 - y0), bgd, fgd, 4, cv2.GC_INIT_WITH_RECT)
    fg = ((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)).astype(np.uint8)
    share = fg[y0:y1, x0:x1].mean()
    if not 0.25 <= share <= 0.92:
        return None
    # one piece: the largest connected part, so that stray scraps of the scene do not float about
    n, labels, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    if n < 2:
        return None
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    alpha = Image.fromarray(((labels == big) * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.8))
    thing = img.convert("RGB").copy()
    thing.putalpha(alpha)
    return thing.crop(alpha.getbbox())


def _ground(source: str, size: tuple[int, int], r: random.Random) -> Image.Image:
    w, h = size
    if source == "cutout-white":
        v = r.choice([255, 255, 255, r.randint(242, 254)])
        return Image.new("RGB", size, (v, v, v))
    choice = r.random()
    if choice < 0.3:
        v = r.randint(200, 240)
        return Image.new("RGB", size, (v, v, v))
    if choice < 0.55:
        return Image.new("RGB", size, tuple(r.randint(170, 250) for _ in range(3)))
    if choice < 0.7:
        return Image.new("RGB", size, tuple(r.randint(10, 60) for _ in range(3)))
    top = np.array([r.randint(150, 255) for _ in range(3)], np.float32)
    bottom = np.array([r.randint(60, 230) for _ in range(3)], np.float32)
    t = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    return Image.fromarray(np.broadcast_to(top * (1 - t) + bottom * t, (h, w, 3)).astype(np.uint8))


def compose(thing: Image.Image, source: str, r: random.Random) -> Image.Image:
    """The cut-out thing on a plain ground. Half are framed tight at the thing's own size, as cut-out PNGs
    and stickers come (a transparent ground is seen as white); half on a larger ground with a margin, at
    most ``MAX_UPSCALE`` times the thing's size, as product shots are."""
    if r.random() < 0.4:  # product photos are sharp; the everyday photos, small and compressed, are not
        thing = thing.filter(ImageFilter.UnsharpMask(radius=1.5, percent=r.randint(60, 140), threshold=2))
    if r.random() < 0.5:
        pad = [int(r.uniform(0, 0.06) * max(thing.size)) for _ in range(4)]
        size = (thing.width + pad[0] + pad[1], thing.height + pad[2] + pad[3])
        x, y = pad[0], pad[2]
    else:
        side = r.randint(200, 400)
        size = (side, int(side * r.choice([1.0, 1.0, 0.75, 1.33])))
        fill = r.uniform(0.55, 0.95)
        s = min(fill * size[0] / thing.width, fill * size[1] / thing.height, MAX_UPSCALE)
        thing = thing.resize((max(int(thing.width * s), 8), max(int(thing.height * s), 8)), Image.LANCZOS)
        x = (size[0] - thing.width) // 2 + r.randint(-size[0] // 10, size[0] // 10)
        y = (size[1] - thing.height) // 2 + r.randint(-size[1] // 10, size[1] // 10)
        x, y = min(max(x, 0), size[0] - thing.width), min(max(y, 0), size[1] - thing.height)
    im = _ground(source, size, r)
    if r.random() < 0.3:  # a soft shadow on the ground, as studio photos have
        shadow = Image.new("L", size, 0)
        shadow.paste(thing.getchannel("A").point(lambda a: a * 0.35), (x + r.randint(2, 8), y + r.randint(3, 10)))
        shadow = shadow.filter(ImageFilter.GaussianBlur(r.uniform(3, 8)))
        im = Image.composite(Image.new("RGB", size, (0, 0, 0)), im, shadow)
    im.paste(thing, (x, y), thing)
    return im


def render_cutouts(out: Path, data: Path) -> None:
    from capdesk.describe.detector import open_detector

    detector = open_detector()
    photos = iter(photo_paths(data, order="cutout"))
    for source in SOURCES:
        dest = out / "photo" / source
        dest.mkdir(parents=True, exist_ok=True)
        for i in range(PER_SOURCE):
            p = dest / f"{i:04d}.png"
            if p.exists():
                continue
            r = random.Random(f"{source}:{i}")
            for photo in photos:
                with Image.open(photo) as im:
                    im = im.convert("RGB")
                box = _main_box(detector, im, r)
                thing = cut_out(im, box) if box else None
                if thing is not None:
                    compose(thing, source, r).save(p)
                    (dest / f"{i:04d}.from").write_text(photo.name)
                    break
