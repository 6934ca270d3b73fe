"""Plots drawn with Pillow alone (the app and its training need no plotting library)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)]


def _font(size: int):
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default()


def risk_coverage_png(curves: dict[str, list[tuple[float, float, float]]], path: Path, marks: dict[str, float],
                      title: str, target: float | None = None) -> Path:
    """Hallucination rate of facts (y) against the share said as fact (x), one line per collection;
    ``marks``: a labelled point at each named threshold; ``target``: a dashed line at that rate."""
    w, h, left, right, top, bottom = 900, 640, 90, 30, 85, 80
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    f, small = _font(18), _font(14)
    ymax = max(0.3, max((r for c in curves.values() for _, _, r in c), default=0.3))

    def xy(cov: float, rate: float) -> tuple[float, float]:
        return left + cov * (w - left - right), h - bottom - rate / ymax * (h - top - bottom)

    d.text((left, 15), title, fill="black", font=f)
    d.rectangle([left, top, w - right, h - bottom], outline="black")
    for i in range(11):
        x, _ = xy(i / 10, 0)
        d.line([x, h - bottom, x, h - bottom + 6], fill="black")
        d.text((x - 12, h - bottom + 10), f"{i * 10}%", fill="black", font=small)
    steps = 6
    for i in range(steps + 1):
        _, y = xy(0, ymax * i / steps)
        d.line([left - 6, y, left, y], fill="black")
        d.text((left - 55, y - 8), f"{100 * ymax * i / steps:.0f}%", fill="black", font=small)
    d.text((left + 250, h - 40), "share of photos whose caption is said as fact", fill="black", font=f)
    d.text((10, top - 30), "captions said as fact naming an absent object (CHAIRs)", fill="black", font=f)
    if target is not None:
        _, y = xy(0, target)
        for x in range(left, w - right, 14):
            d.line([x, y, x + 7, y], fill=(120, 120, 120))
    for n, (name, curve) in enumerate(curves.items()):
        colour = COLOURS[n % len(COLOURS)]
        pts = [xy(c, r) for _, c, r in sorted(curve, key=lambda t: t[1]) if c > 0]
        if len(pts) > 1:
            d.line(pts, fill=colour, width=3)
        d.text((w - right - 230, top + 12 + 24 * n), f"— {name}", fill=colour, font=f)
        for label, t in marks.items():
            near = min(curve, key=lambda p: abs(p[0] - t))
            x, y = xy(near[1], near[2])
            d.ellipse([x - 6, y - 6, x + 6, y + 6], outline=colour, width=3)
            text = f"{label} ({100 * near[1]:.0f}% said, {100 * near[2]:.1f}% wrong)"
            d.text((x + 8 if x < w - 260 else x - 250, y - 24), text, fill=colour, font=small)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)
    return path
