"""Text reading at screen scale: words read right and time taken, per text-detector scale, on pictures of
known text drawn the way a screen draws it (fonts at 10-28 px, dark on light, light on dark, on a photo),
and on resources/samples/page.png (a scanned page, text 12 px high).

    python bench/bench_text_reading.py [--runs 3] [--json out.json]

RapidOCR's own setting enlarges every picture whose short side is under 736 px to 736 px before finding
text (a 451x300 picture becomes 1128x736, six times the pixels), which suits phone photos of signs. Text
on a screen is drawn to be read at 1:1, so ``capdesk screen`` may find it at a smaller scale; this measures
what each scale costs in words. The scales: "736" (RapidOCR's own) and factors of the picture's own size,
never below it. Word recall: the share of the drawn words read exactly (case and punctuation aside), in
reading order or not; extra words: words read that were not drawn, per picture. Time: median of ``runs``
passes over the whole set, read one picture at a time as the describer does.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.describe import ocr  # noqa: E402

FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
         "/usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf",
         "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
SIZES = (10, 12, 14, 16, 20, 28)  # px: from small print in a web page to a heading
PHRASES = ("open the door before noon tickets on sale today free parking behind the market please keep left "
         "summer sale up to half price lost cat answers to tom call after six welcome to the harbour museum "
         "closed on mondays no entry except staff fresh bread every morning gate seven departures delayed "
         "meeting moved to room twelve do not feed the ducks bus stop for the old town hall")
WORDS = PHRASES.split()
PAGE_TEXT = ("Region-based segmentation Let us first determine markers of the coins and the background. "
             "These markers are pixels that we can label unambiguously as either object or background. Here, "
             "the markers are found at the two extreme parts of the histogram of grey values:")
SCALES: tuple[str, ...] = ("736", "1.0", "1.25", "1.5", "2.0")


def text_px(seed: int) -> int:
    """The text height of drawn picture ``seed``: the fonts vary fastest, then the sizes, then the styles."""
    return SIZES[(seed // len(FONTS)) % len(SIZES)]


def words(text: str | None) -> list[str]:
    return re.findall(r"[a-z0-9]+", (text or "").lower())


def prose() -> list[str]:
    """The README's sentences, as words: names, numbers and long words a sign rarely has."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"```.*?```|`[^`]*`|\[([^]]*)\]\([^)]*\)|<[^>]+>|[#*|>_]", " ", text, flags=re.S)
    return [w for w in text.split() if re.fullmatch(r"[A-Za-z][A-Za-z'’,.:;-]*[A-Za-z.,:;]?", w)]


def drawn(seed: int, source: list[str] | None = None) -> tuple[Image.Image, str]:
    """A picture the size of one on a web page with 1-4 lines of known words: common words drawn at
    random, or (``source``) a run of consecutive words from it."""
    rng = random.Random(seed)
    start = rng.randrange(len(source) - 60) if source else 0
    font_path = FONTS[seed % len(FONTS)]
    size = text_px(seed)
    style = (seed // (len(FONTS) * len(SIZES))) % 3
    w, h = rng.choice(((480, 320), (451, 300), (640, 360), (360, 240)))
    if style == 2:  # a caption bar on a photo, as in a meme or a poster
        photo = Image.open(ROOT / "resources" / "samples" / rng.choice(("chelsea.png", "coffee.png", "rocket.jpg")))
        img = photo.convert("RGB").resize((w, h))
        fg = (255, 255, 255)
    else:
        bg, fg = ((255, 255, 255), (20, 20, 20)) if style == 0 else ((34, 34, 40), (230, 230, 230))
        img = Image.new("RGB", (w, h), bg)
    font = ImageFont.truetype(font_path, size)
    d = ImageDraw.Draw(img)
    lines, y = [], 12
    for _ in range(rng.randint(1, 4)):
        line: list[str] = []
        while True:
            cand = line + [source[start + len(line)] if source else rng.choice(WORDS)]
            if d.textlength(" ".join(cand), font=font) > w - 24 or len(cand) > 7:
                break
            line = cand
        if not line or y + size * 1.6 > h:
            break
        start += len(line)
        if style == 2:
            box = d.textbbox((12, y), " ".join(line), font=font)
            d.rectangle((box[0] - 4, box[1] - 3, box[2] + 4, box[3] + 3), fill=(0, 0, 0))
        d.text((12, y), " ".join(line), font=font, fill=fg)
        lines.append(" ".join(line))
        y += int(size * 1.6) + rng.randint(0, 20)
    return img, " ".join(lines)


def cases(n: int) -> list[tuple[str, Image.Image, str]]:
    sentences = prose()
    out = [(f"drawn-{i}", *drawn(i)) for i in range(n)]
    out += [(f"prose-{i}", *drawn(i, sentences)) for i in range(n)]
    out.append(("page.png", Image.open(ROOT / "resources" / "samples" / "page.png").convert("RGB"), PAGE_TEXT))
    out.append(("chelsea.png (no text)", Image.open(ROOT / "resources" / "samples" / "chelsea.png").convert("RGB"), ""))
    return out


def score(read: str | None, truth: str) -> tuple[int, int, int]:
    """(words drawn, of them read, words read that were not drawn), counted as multisets."""
    t, r = words(truth), words(read)
    left = list(r)
    hit = 0
    for wd in t:
        if wd in left:
            left.remove(wd)
            hit += 1
    return len(t), hit, len(left)


def kind(name: str) -> str:
    return name.split("-")[0] if "-" in name else name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pictures", type=int, default=72,
                    help="drawn pictures of each kind (4 fonts x 6 sizes x 3 styles = 72)")
    ap.add_argument("--scales", nargs="+", default=list(SCALES))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not ocr.available():
        sys.exit("text reading is not installed (pip install 'capdesk[ocr]')")
    data = cases(args.pictures)
    ocr.read_text(data[0][1])  # loads the models before anything is timed
    ocr.spaced("warmup")
    rows = {}
    for scale in args.scales:
        upscale = None if scale == "736" else float(scale)
        times, spacing, results = [], [], []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            results = [ocr.read_text(img, max_chars=10_000, upscale=upscale, space_words=False)
                       for _, img, _ in data]
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            spaced = [ocr.spaced(r) if r else r for r in results]
            spacing.append(time.perf_counter() - t0)
        row = {"ms_per_picture": 1000 * statistics.median(times) / len(data),
               "spacing_ms_per_picture": 1000 * statistics.median(spacing) / len(data)}
        for label, texts in (("as_read", results), ("spaced", spaced)):
            by: dict[str, list[int]] = {}
            for (name, _, truth), read in zip(data, texts):
                n, hit, extra = score(read, truth)
                for key in (kind(name), f"{kind(name)}@{name_px(name)}"):
                    acc = by.setdefault(key, [0, 0, 0, 0])
                    acc[0], acc[1], acc[2], acc[3] = acc[0] + n, acc[1] + hit, acc[2] + extra, acc[3] + 1
            row[label] = {k: {"word_recall": v[1] / v[0] if v[0] else None, "extra_words_per_picture": v[2] / v[3]}
                          for k, v in sorted(by.items())}
        rows[scale] = row
        print(f"scale {scale:>5}: {row['ms_per_picture']:4.0f} ms/picture, "
              f"spacing {row['spacing_ms_per_picture']:.1f} ms")
        for label in ("as_read", "spaced"):
            r = row[label]
            print(f"  {label:<8} word recall: " + "  ".join(
                f"{k} {v['word_recall']:.3f} (+{v['extra_words_per_picture']:.2f})" for k, v in r.items()
                if "@" not in k and v["word_recall"] is not None))
            for k in ("drawn", "prose"):
                print(f"  {'':<8} {k} by text height: " + " ".join(
                    f"{kk.split('@')[1]}px {v['word_recall']:.2f}" for kk, v in r.items() if kk.startswith(k + "@")))
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


def name_px(name: str) -> str:
    if not name.startswith(("drawn-", "prose-")):
        return "-"
    return str(text_px(int(name.split("-")[1])))


if __name__ == "__main__":
    main()
