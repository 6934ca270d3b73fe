"""Build the pictures the picture-kind model learns from (none of them goes into the repository).

    python training/studies/picture_kind_data.py render OUT [KIND ...]   # renders and gathers, resumable
    python training/studies/picture_kind_data.py list OUT [--more]       # writes OUT/labels.csv

Every picture is made here or taken from a Debian 12 package (``apt-get download PKG`` and ``dpkg-deb
-x`` into OUT/pkgs/PKG; the packages are named in ``PACKAGES``) or from the everyday and RSICD photos.
Each picture's *source* is the renderer family or the package it comes from: the model is measured on
whole sources it never saw. Needs matplotlib and PySide6 (``pip install matplotlib``), OpenCV for the
cut-outs (``picture_kind_cutout.py``; it comes with rapidocr-onnxruntime), and the Debian
tools graphviz, lilypond, abcm2ps, povray, poppler-utils, librsvg2-bin, gmt with gmt-gshhg-low, xterm,
xvfb, x11-apps, netpbm and firefox-esr.

A render step skips the files already there, so a run that stops resumes where it stopped; every
random choice comes from a generator seeded by the source and the picture's number, so a rerun makes
the same pictures.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent))
from picture_kind_cutout import render_cutouts  # noqa: E402 - the photos of things on plain grounds, beside this file
from picture_kind_list import DATA  # noqa: E402 - the everyday and RSICD photos, as the list reads them
from picture_kind_paint import render_paintings  # noqa: E402 - the paintings made from photos, beside this file

PACKAGES = [
    "openclipart-svg",
    "gcompris-qt-data",
    "tango-icon-theme",
    "oxygen-icon-theme",
    "papirus-icon-theme",
    "breeze-icon-theme",
    "asymptote-doc",
    "gnuplot-doc",
    "octave-doc",
    "maxima-doc",
    "gnome-user-docs",
    "wesnoth-1.16-data",
    "wesnoth-1.16-trow",
    "wesnoth-1.16-sota",
    "wesnoth-1.16-low",
    "wesnoth-1.16-httt",
    "wesnoth-1.16-did",
    "wesnoth-1.16-dm",
    "wesnoth-1.16-l",
    "wesnoth-1.16-tsg",
    "wesnoth-1.16-ttb",
    # photos unlike Flickr's and COCO's (landscapes, space, macro: without them landscapes were called
    # paintings) and painted portraits
    "endless-sky-data",
    "widelands-data",
    "mate-backgrounds",
    "plasma-workspace-wallpapers",
    "flare-game",
]
FONTS = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf"]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "value",
    "total",
    "count",
    "north",
    "south",
    "east",
    "west",
    "river",
    "road",
    "park",
    "station",
    "market",
    "report",
    "sales",
    "users",
    "files",
    "data",
    "model",
    "input",
    "output",
    "error",
    "status",
    "summary",
    "region",
    "city",
    "year",
    "month",
    "week",
    "price",
    "cost",
    "energy",
    "water",
    "food",
    "school",
    "health",
    "index",
    "level",
    "speed",
    "rate",
    "time",
    "score",
    "group",
    "name",
    "open",
    "close",
    "save",
    "edit",
    "view",
    "help",
    "tools",
    "window",
    "search",
    "settings",
    "account",
    "profile",
    "home",
    "news",
]
N = {
    "chart": 70,
    "diagram": 80,
    "table": 100,
    "text": 70,
    "music": 150,
    "map": 110,
    "screenshot": 110,
    "icon": 90,
    "render3d": 200,
    "noise": 100,
}
if os.environ.get("KIND_N"):  # a quick trial: this many pictures of each source
    N = {k: int(os.environ["KIND_N"]) for k in N}


def rng_for(source: str, i: int) -> random.Random:
    return random.Random(int(hashlib.md5(f"{source}:{i}".encode()).hexdigest(), 16))


def words(r: random.Random, n: int) -> str:
    return " ".join(r.choice(WORDS) for _ in range(n))


def font(size: int, r: random.Random | None = None) -> ImageFont.FreeTypeFont:
    name = r.choice(FONTS) if r else FONTS[0]
    try:
        return ImageFont.truetype(name, size)
    except OSError:
        return ImageFont.load_default(size=size)


def run(cmd: list[str], timeout: float = 60, **kw) -> bool:
    try:
        return subprocess.run(cmd, timeout=timeout, capture_output=True, **kw).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def todo(out: Path, kind: str, source: str, n: int):
    """(number, path) of each picture of a source not yet made."""
    d = out / kind / source
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        p = d / f"{i:04d}.png"
        if not p.exists():
            yield i, p


# ---- charts (matplotlib): one source per style sheet -------------------------------------------------

CHART_STYLES = [
    "default",
    "ggplot",
    "seaborn-v0_8-whitegrid",
    "dark_background",
    "bmh",
    "fivethirtyeight",
    "classic",
    "grayscale",
    "Solarize_Light2",
    "seaborn-v0_8-pastel",
]


def _one_chart(ax, r: random.Random, kind: str) -> None:
    nr = np.random.default_rng(r.randrange(1 << 30))
    cats = [w.title() for w in r.sample(WORDS, r.randint(3, 9))]
    cmap = r.choice(["viridis", "tab10", "Set2", "plasma", "coolwarm", "Paired", "cividis", "Blues"])
    colours = [__import__("matplotlib").colormaps[cmap](x) for x in np.linspace(0.1, 0.9, 8)]
    if kind == "bar":
        k = r.randint(1, 3)
        w = 0.8 / k
        for j in range(k):
            v = nr.uniform(1, 100, len(cats))
            if r.random() < 0.3:
                ax.barh(np.arange(len(cats)) + j * w, v, w, color=colours[j], label=r.choice(WORDS))
            else:
                ax.bar(np.arange(len(cats)) + j * w, v, w, color=colours[j], label=r.choice(WORDS))
        ax.set_xticks(np.arange(len(cats))) if r.random() < 0.5 else None
    elif kind == "line":
        x = np.arange(r.randint(8, 60))
        for j in range(r.randint(1, 4)):
            ax.plot(
                x,
                np.cumsum(nr.normal(0, 1, len(x))) + nr.uniform(0, 10),
                marker=r.choice(["", "o", "s", "."]),
                color=colours[j * 2 % 8],
                label=r.choice(WORDS),
                linewidth=r.uniform(1, 3),
            )
    elif kind == "pie":
        v = nr.uniform(1, 10, min(len(cats), 6))
        wedge = {"width": 0.4} if r.random() < 0.3 else None
        ax.pie(
            v,
            labels=cats[: len(v)],
            autopct="%1.0f%%" if r.random() < 0.6 else None,
            colors=colours[: len(v)],
            wedgeprops=wedge,
            startangle=r.randint(0, 180),
        )
    elif kind == "hist":
        for j in range(r.randint(1, 2)):
            ax.hist(
                nr.normal(nr.uniform(-2, 2), nr.uniform(0.5, 2), 500),
                bins=r.randint(10, 40),
                alpha=0.7,
                color=colours[j * 3 % 8],
                label=r.choice(WORDS),
            )
    elif kind == "scatter":
        n = r.randint(20, 300)
        x = nr.normal(0, 1, n)
        ax.scatter(
            x,
            x * nr.uniform(-2, 2) + nr.normal(0, 1, n),
            c=nr.uniform(0, 1, n) if r.random() < 0.5 else [colours[1]],
            cmap=cmap,
            s=r.uniform(5, 60),
            alpha=0.8,
        )
    elif kind == "area":
        x = np.arange(r.randint(10, 40))
        ys = [np.abs(nr.normal(3, 1, len(x))).cumsum() / 10 + 1 for _ in range(r.randint(2, 4))]
        ax.stackplot(x, *ys, colors=colours[: len(ys)], labels=[r.choice(WORDS) for _ in ys])
    else:
        ax.boxplot([nr.normal(nr.uniform(0, 5), nr.uniform(0.5, 2), 100) for _ in range(r.randint(3, 7))])
    if kind != "pie":
        ax.set_xlabel(
            r.choice(WORDS).title() + (f" ({r.choice(['%', 'kg', 'km', 'USD', 's'])})" if r.random() < 0.4 else "")
        )
        ax.set_ylabel(r.choice(WORDS).title())
        if r.random() < 0.4:
            ax.grid(True, alpha=0.5)
    if r.random() < 0.5 and kind not in ("pie", "scatter", "box"):
        ax.legend(fontsize="small")
    if r.random() < 0.8:
        ax.set_title(words(r, r.randint(2, 5)).title(), fontsize=r.randint(9, 16))


def render_charts(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for style in CHART_STYLES:
        src = "mpl-" + style.replace("seaborn-v0_8-", "seaborn-")
        for i, p in todo(out, "chart", src, N["chart"]):
            r = rng_for(src, i)
            with plt.style.context(style):
                plt.rcParams["font.family"] = r.choice(["DejaVu Sans", "DejaVu Serif", "Nimbus Sans", "C059"])
                rows, cols = (1, 1) if r.random() < 0.8 else r.choice([(1, 2), (2, 1), (2, 2)])
                fig, axes = plt.subplots(rows, cols, figsize=(r.uniform(4, 9), r.uniform(3, 6.5)), squeeze=False)
                for ax in axes.ravel():
                    _one_chart(ax, r, r.choice(["bar", "bar", "line", "line", "pie", "hist", "scatter", "area", "box"]))
                fig.tight_layout()
                fig.savefig(p, dpi=r.choice([60, 72, 90, 110]))
                plt.close(fig)


# ---- diagrams (graphviz, and boxes and arrows drawn with PIL) ----------------------------------------


def _gv_flow(r: random.Random) -> str:
    n = r.randint(4, 12)
    shapes = ["box", "ellipse", "diamond", "parallelogram", "box", "oval", "hexagon", "cylinder", "note"]
    fill = r.choice(["", "lightblue", "lightyellow", "#e0f0e0", "white", "#ffd8b0", "lavender"])
    lines = [
        f'digraph G {{ rankdir={r.choice(["TB", "TB", "LR"])}; bgcolor="{r.choice(["white", "white", "#f8f8f8"])}";',
        f'node [fontname="{r.choice(["Helvetica", "Times", "Courier"])}" style="{"filled" if fill else ""}'
        f'{",rounded" if r.random() < 0.3 else ""}" fillcolor="{fill or "white"}"];',
    ]
    for j in range(n):
        lines.append(f'n{j} [shape={r.choice(shapes)} label="{words(r, r.randint(1, 3))}"];')
    for j in range(1, n):
        a = r.randrange(j)
        lab = f' [label="{r.choice(["yes", "no", "ok", "error", ""])}"]' if r.random() < 0.3 else ""
        lines.append(f"n{a} -> n{j}{lab};")
    for _ in range(r.randint(0, 2)):
        lines.append(f"n{r.randrange(n)} -> n{r.randrange(n)};")
    return "\n".join(lines) + "}"


def _gv_graph(r: random.Random) -> str:
    n = r.randint(5, 20)
    directed = r.random() < 0.5
    e = "->" if directed else "--"
    col = r.choice(["black", "navy", "darkgreen", "gray30"])
    lines = [
        f"{'digraph' if directed else 'graph'} G {{ node [shape={r.choice(['circle', 'ellipse', 'box', 'point', 'doublecircle'])} "  # noqa: E501 - one line of the generated source
        f'color={col} fontname="Helvetica" style=filled fillcolor="{r.choice(["white", "lightgrey", "#cce5ff", "#ffe0e0"])}"];'  # noqa: E501 - one line of the generated source
    ]
    labels = [r.choice(WORDS) if r.random() < 0.6 else str(j) for j in range(n)]
    for j in range(n):
        lines.append(f'n{j} [label="{labels[j]}"];')
    for j in range(1, n):
        lines.append(f"n{r.randrange(j)} {e} n{j};")
    for _ in range(r.randint(0, n)):
        lines.append(f"n{r.randrange(n)} {e} n{r.randrange(n)};")
    return "\n".join(lines) + "}"


def _gv_uml(r: random.Random) -> str:
    lines = [
        'digraph G { node [shape=record fontname="Helvetica" fontsize=10 style=filled '
        f'fillcolor="{r.choice(["#ffffe0", "white", "#e8f0ff"])}"]; edge [arrowhead={r.choice(["empty", "vee", "diamond", "normal"])}];'  # noqa: E501 - one line of the generated source
    ]
    n = r.randint(3, 8)
    for j in range(n):
        attrs = "\\l".join(
            f"+ {r.choice(WORDS)}: {r.choice(['int', 'str', 'float', 'List', 'bool'])}" for _ in range(r.randint(1, 4))
        )
        meths = "\\l".join(f"{r.choice(WORDS)}()" for _ in range(r.randint(1, 3)))
        lines.append(f'c{j} [label="{{{r.choice(WORDS).title()}{r.choice(WORDS).title()}|{attrs}\\l|{meths}\\l}}"];')
    for j in range(1, n):
        lines.append(f"c{j} -> c{r.randrange(j)};")
    return "\n".join(lines) + "}"


def render_diagrams(out: Path) -> None:
    specs = {
        "gv-flow": (_gv_flow, ["dot"]),
        "gv-graph": (_gv_graph, ["neato", "circo", "fdp", "twopi"]),
        "gv-uml": (_gv_uml, ["dot"]),
    }
    for src, (make, engines) in specs.items():
        for i, p in todo(out, "diagram", src, N["diagram"]):
            r = rng_for(src, i)
            run(
                [r.choice(engines), "-Tpng", f"-Gdpi={r.choice([50, 60, 72, 90])}", "-o", str(p)],
                input=make(r).encode(),
            )
    for i, p in todo(out, "diagram", "pil-blocks", N["diagram"]):
        block_diagram(rng_for("pil-blocks", i)).save(p)


def block_diagram(r: random.Random) -> Image.Image:
    """Boxes with names joined by arrows, laid on a grid: a block diagram as slides and papers draw them."""
    w, h = r.randint(500, 900), r.randint(350, 650)
    im = Image.new("RGB", (w, h), r.choice(["white", "white", (248, 248, 240), (235, 240, 250)]))
    d = ImageDraw.Draw(im)
    cols, rows = r.randint(2, 4), r.randint(1, 3)
    f = font(r.randint(12, 18), r)
    fills = [
        r.choice([(200, 220, 255), (255, 230, 180), (210, 240, 210), (255, 255, 255), (230, 230, 230)])
        for _ in range(3)
    ]
    boxes = []
    for cx in range(cols):
        for cy in range(rows):
            if r.random() < 0.15:
                continue
            x = int((cx + 0.5) * w / cols)
            y = int((cy + 0.5) * h / rows)
            bw, bh = r.randint(70, 140), r.randint(35, 70)
            box = (x - bw // 2, y - bh // 2, x + bw // 2, y + bh // 2)
            shape = r.random()
            if shape < 0.6:
                d.rectangle(box, fill=r.choice(fills), outline="black", width=2)
            elif shape < 0.8:
                d.rounded_rectangle(box, 12, fill=r.choice(fills), outline="black", width=2)
            else:
                d.ellipse(box, fill=r.choice(fills), outline="black", width=2)
            d.text((x, y), r.choice(WORDS).title(), fill="black", font=f, anchor="mm")
            boxes.append(box)
    for a, b in zip(boxes, boxes[1:]):
        if r.random() < 0.85:
            x0, y0 = (a[0] + a[2]) // 2, (a[1] + a[3]) // 2
            x1, y1 = (b[0] + b[2]) // 2, (b[1] + b[3]) // 2
            if abs(x1 - x0) > abs(y1 - y0):
                s, e = (a[2], y0), (b[0], y1) if x1 > x0 else (b[2], y1)
            else:
                s, e = (x0, a[3]), (x1, b[1]) if y1 > y0 else (x1, b[3])
            d.line([s, e], fill="black", width=2)
            v = np.array(e, float) - np.array(s, float)
            v /= max(np.linalg.norm(v), 1)
            n = np.array([-v[1], v[0]])
            tip = np.array(e, float)
            d.polygon([tuple(tip), tuple(tip - 10 * v + 5 * n), tuple(tip - 10 * v - 5 * n)], fill="black")
    return im


# ---- tables ---------------------------------------------------------------------------------------------


def table_image(r: random.Random) -> Image.Image:
    """A grid of cells with a header row, numbers and names, drawn with PIL."""
    rows, cols = r.randint(4, 16), r.randint(3, 7)
    f = font(r.randint(11, 17), r)
    cw, ch = r.randint(70, 130), r.randint(20, 30)
    m = r.randint(5, 30)
    im = Image.new("RGB", (cols * cw + 2 * m, rows * ch + 2 * m), "white")
    d = ImageDraw.Draw(im)
    head = r.choice([(220, 220, 220), (50, 90, 160), (240, 240, 240), (255, 255, 255)])
    stripe = r.random() < 0.5
    grid = r.choice(["all", "rows", "none"])
    for y in range(rows):
        for x in range(cols):
            box = (m + x * cw, m + y * ch, m + (x + 1) * cw, m + (y + 1) * ch)
            if y == 0:
                d.rectangle(box, fill=head)
            elif stripe and y % 2 == 0:
                d.rectangle(box, fill=(242, 245, 250))
            if grid == "all":
                d.rectangle(box, outline=(120, 120, 120))
            txt = (
                r.choice(WORDS).title()
                if y == 0 or x == 0
                else (f"{r.uniform(0, 1000):.{r.randint(0, 2)}f}" if r.random() < 0.7 else r.choice(WORDS))
            )
            d.text(
                (box[0] + 5, box[1] + ch // 2),
                txt,
                anchor="lm",
                font=f,
                fill="white" if y == 0 and sum(head) < 400 else "black",
            )
        if grid == "rows":
            d.line([(m, m + (y + 1) * ch), (m + cols * cw, m + (y + 1) * ch)], fill=(150, 150, 150))
    return im


def html_table(r: random.Random) -> str:
    cols = r.randint(3, 7)
    css = r.choice(["border-collapse:collapse", "border-collapse:separate"])
    th = r.choice(["#ddd", "#4a6fa5;color:white", "#f4f4f4", "#2e7d32;color:white"])
    head = "".join(f"<th>{r.choice(WORDS).title()}</th>" for _ in range(cols))
    body = "".join(
        "<tr>"
        + "".join(f"<td>{r.uniform(0, 999):.1f}</td>" if c else f"<td>{r.choice(WORDS)}</td>" for c in range(cols))
        + "</tr>"
        for _ in range(r.randint(4, 18))
    )
    return (
        f"<html><body style='font-family:{r.choice(['sans-serif', 'serif', 'monospace'])};margin:20px'>"
        f"<style>table{{{css}}} td,th{{border:1px solid #999;padding:{r.randint(2, 9)}px}} th{{background:{th}}}"
        f"tr:nth-child(even){{background:{r.choice(['#fff', '#f2f6fb', '#f9f9f9'])}}}</style>"
        f"<table><tr>{head}</tr>{body}</table></body></html>"
    )


def firefox_shot(html: str, p: Path, size: tuple[int, int]) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(html, encoding="utf-8")
        ok = run(
            [
                "firefox-esr",
                "--headless",
                "--profile",
                tmp,
                "--screenshot",
                str(p),
                f"--window-size={size[0]},{size[1]}",
                page.as_uri(),
            ],
            timeout=60,
        )
    return ok and p.exists()


def render_tables(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for i, p in todo(out, "table", "pil-grid", N["table"]):
        table_image(rng_for("pil-grid", i)).save(p)
    for i, p in todo(out, "table", "mpl-table", N["table"]):
        r = rng_for("mpl-table", i)
        rows, cols = r.randint(3, 14), r.randint(2, 6)
        fig, ax = plt.subplots(figsize=(r.uniform(4, 8), r.uniform(2, 6)))
        ax.axis("off")
        cells = [[f"{r.uniform(0, 100):.1f}" for _ in range(cols)] for _ in range(rows)]
        t = ax.table(
            cellText=cells,
            colLabels=[r.choice(WORDS).title() for _ in range(cols)],
            rowLabels=[r.choice(WORDS) for _ in range(rows)] if r.random() < 0.5 else None,
            loc="center",
        )
        t.scale(1, r.uniform(1, 1.8))
        fig.savefig(p, dpi=r.choice([60, 80, 100]))
        plt.close(fig)
    for i, p in todo(out, "table", "firefox-table", N["table"] // 2):
        r = rng_for("firefox-table", i)
        firefox_shot(html_table(r), p, (r.randint(500, 1000), r.randint(350, 700)))


# ---- pages of text (real PDFs of Debian documentation packages) ------------------------------------

PDFS = {
    "pdf-gnuplot": "gnuplot-doc/usr/share/doc/gnuplot/gnuplot.pdf",
    "pdf-asymptote": "asymptote-doc/usr/share/doc/asymptote/asymptote.pdf",
    "pdf-octave": "octave-doc/usr/share/doc/octave/octave.pdf",
    "pdf-liboctave": "octave-doc/usr/share/doc/octave/liboctave.pdf",
}


def text_page(r: random.Random) -> Image.Image:
    """Paragraphs of words on a page or a note, in one of several fonts, sizes and spacings, some under a
    heading: text as a word processor or a plain text file shows it."""
    w = r.randint(500, 1000)
    h = r.choice([int(w * 1.3), int(w * 0.6), r.randint(300, 1200)])
    im = Image.new("RGB", (w, h), r.choice(["white", "white", (250, 248, 240), (245, 245, 245)]))
    d = ImageDraw.Draw(im)
    size = r.randint(11, 24)
    f = font(size, r)
    m = r.randint(15, 80)
    y = m
    if r.random() < 0.5:
        d.text((m, y), words(r, r.randint(2, 6)).title(), fill="black", font=font(int(size * 1.6), r))
        y += int(size * 2.5)
    gap = r.uniform(1.2, 2.0)
    per_line = max(3, int((w - 2 * m) / (size * 0.55 * 6)))
    same = words(r, per_line) if r.random() < 0.25 else ""  # a line said again and again, as in a drill
    while y < h - m - size:
        for _ in range(r.randint(2, 8)):
            if y >= h - m - size:
                break
            line = same or words(r, r.randint(per_line // 2, per_line))
            d.text((m, y), line, fill=r.choice(["black", (40, 40, 40)]), font=f)
            y += int(size * gap)
        y += int(size * r.uniform(0.5, 1.5))
    return im


def scanned(page: Image.Image, r: random.Random) -> Image.Image:
    """A page as a scanner or a camera gives it back: tinted paper, a slight turn, uneven light, grain."""
    nr = np.random.default_rng(r.randrange(1 << 30))
    base = r.randint(190, 250)
    tint = np.array([base, base - r.randint(0, 8), base - r.randint(0, 25)], dtype=np.float32) / 255  # grey to cream
    im = page.convert("RGB").rotate(r.uniform(-2.5, 2.5), expand=True, fillcolor=(255, 255, 255))
    a = np.asarray(im, dtype=np.float32) / 255 * tint
    h, w = a.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    light = 1 - r.uniform(0, 0.25) * ((xx / w - r.random()) ** 2 + (yy / h - r.random()) ** 2)
    a = a * light[..., None] + nr.normal(0, r.uniform(0.005, 0.04), a.shape)
    out = Image.fromarray((np.clip(a, 0, 1) * 255).astype(np.uint8))
    if r.random() < 0.5:
        out = out.filter(ImageFilter.GaussianBlur(r.uniform(0.3, 1.0)))
    return out


def photographed(page: Image.Image, r: random.Random) -> Image.Image | None:
    """Part of a page as a phone photographs a book: a few lines close up, grey paper under dim, uneven light
    with darker corners, a slight slant, soft focus, grain and JPEG. Photos of things on plain grounds
    (picture_kind_cutout.py) taught the model that a plain ground is no sign of a drawing; these keep a
    photographed page a page."""
    page = page.convert("L")
    w, h = page.size
    cw = int(w * r.uniform(0.4, 0.85))
    ch = min(h, int(cw / r.uniform(1.3, 2.6)))
    for _ in range(30):  # a part with words in it: a blank stretch of paper is no page of text
        x0, y0 = r.randint(0, w - cw), r.randint(0, max(h - ch, 0))
        im = page.crop((x0, y0, x0 + cw, y0 + ch))
        if (np.asarray(im) < 128).mean() >= 0.03:
            break
    else:
        return None
    side = r.randint(380, 640)
    im = im.resize((side, max(int(side * im.height / im.width), 120)), Image.LANCZOS)
    w, h = im.size
    d = [r.uniform(-0.04, 0.04) * v for v in (w, h, w, h, w, h, w, h)]
    im = im.transform((w, h), Image.QUAD, (d[0], d[1], d[2], h + d[3], w + d[4], h + d[5], w + d[6], d[7]),
                      Image.BICUBIC, fillcolor=255)
    a = np.asarray(im, dtype=np.float32) / 255
    paper, ink = r.uniform(0.55, 0.85), r.uniform(0.05, 0.25)
    a = ink + (paper - ink) * a
    yy, xx = np.mgrid[0:h, 0:w]
    cx, cy = r.uniform(0.3, 0.7), r.uniform(0.3, 0.7)
    a = a * (1 - r.uniform(0.2, 0.6) * ((xx / w - cx) ** 2 + (yy / h - cy) ** 2))
    nr = np.random.default_rng(r.randrange(1 << 30))
    a = a + nr.normal(0, r.uniform(0.01, 0.04), a.shape)
    grey = (np.clip(a, 0, 1) * 255).astype(np.uint8)
    tint = [1.0, r.uniform(0.97, 1.0), r.uniform(0.9, 1.0)]
    out = Image.fromarray(np.stack([grey * t for t in tint], -1).astype(np.uint8))
    out = out.filter(ImageFilter.GaussianBlur(r.uniform(0.3, 1.4)))
    buf = io.BytesIO()
    out.save(buf, "JPEG", quality=r.randint(35, 85))
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def render_pages(out: Path) -> None:
    for i, p in todo(out, "text", "pil-text", N["text"] * 2):
        text_page(rng_for("pil-text", i)).save(p)
    # scanned pages: pages of the liboctave manual and of text drawn here, as a scanner gives them back
    pages = sorted((out / "text" / "pdf-liboctave").glob("*.png")) + sorted((out / "text" / "pil-text").glob("*.png"))
    for i, p in todo(out, "text", "scanned", N["text"] * 2):
        r = rng_for("scanned", i)
        scanned(Image.open(r.choice(pages)), r).save(p)
    for i, p in todo(out, "text", "photo-page", N["text"] * 2):
        r = rng_for("photo-page", i)
        shot = None
        while shot is None:
            shot = photographed(Image.open(r.choice(pages)), r)
        shot.save(p)
    for src, rel in PDFS.items():
        pdf = out / "pkgs" / rel
        if not pdf.exists():
            continue
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        pages = int(next(ln.split()[-1] for ln in info.splitlines() if ln.startswith("Pages")))
        for i, p in todo(out, "text", src, N["text"]):
            r = rng_for(src, i)
            page = r.randint(min(10, pages), pages - 1)
            stem = p.with_suffix("")
            run(
                [
                    "pdftoppm",
                    "-png",
                    "-singlefile",
                    "-r",
                    str(r.choice([40, 50, 60, 75])),
                    "-f",
                    str(page),
                    "-l",
                    str(page),
                    str(pdf),
                    str(stem),
                ]
            )


# ---- sheet music (lilypond and abcm2ps on random melodies) ---------------------------------------------


def _melody_ly(r: random.Random) -> str:
    notes = "cdefgab"
    durs = ["4", "8", "2", "4", "8", "16"]
    bars = []
    for _ in range(r.randint(6, 24)):
        bars.append(" ".join(r.choice(notes) + r.choice(durs) for _ in range(4)))  # relative: the nearest octave
    key = r.choice(["c \\major", "g \\major", "f \\major", "d \\minor", "a \\minor", "bes \\major"])
    time = r.choice(["4/4", "3/4", "2/4", "6/8"])
    clef = r.choice(["treble", "treble", "bass", "alto"])
    mel = f"\\relative c' {{ \\clef {clef} \\key {key} \\time {time} {' | '.join(bars)} }}"
    if r.random() < 0.35:
        low = " ".join(r.choice(notes) + r.choice(["2", "4", "1"]) for _ in range(len(bars) * 2))
        music = f"\\new PianoStaff << \\new Staff {mel} \\new Staff {{ \\clef bass \\relative c {{ {low} }} }} >>"
    else:
        music = f"\\new Staff {mel}"
    lyr = ""
    if r.random() < 0.3:
        lyr = f"\\addlyrics {{ {words(r, len(bars) * 3)} }}"
    title = f'\\header {{ title = "{words(r, 3).title()}" composer = "{r.choice(WORDS).title()}" tagline = ##f }}'
    return (
        f'\\version "2.24.0"\n\\paper {{ paper-width = {r.randint(120, 210)}\\mm paper-height = '
        f"{r.randint(80, 297)}\\mm }}\n{title if r.random() < 0.6 else chr(92) + 'header { tagline = ##f }'}\n"
        f"\\score {{ {music} {lyr} \\layout {{ }} }}\n"
    )


def _melody_abc(r: random.Random) -> str:
    notes = "CDEFGABcdefgab"
    body = []
    for _ in range(r.randint(4, 8)):
        body.append(
            " | ".join("".join(r.choice(notes) + r.choice(["", "2", "", "/2"]) for _ in range(4)) for _ in range(4))
            + " |"
        )
    return (
        f"X:1\nT:{words(r, 3).title()}\nC:{r.choice(WORDS).title()}\nM:{r.choice(['4/4', '3/4', '6/8', '2/4'])}\n"
        f"L:1/8\nK:{r.choice(['C', 'G', 'D', 'F', 'Am', 'Em', 'Bb'])}\n" + "\n".join(body) + "\n"
    )


def render_music(out: Path) -> None:
    # lilypond takes seconds to start: many scores to one run, each to its own PNG
    missing = list(todo(out, "music", "lilypond", N["music"]))
    for start in range(0, len(missing), 25):
        batch = missing[start : start + 25]
        with tempfile.TemporaryDirectory() as tmp:
            names = []
            for i, _ in batch:
                r = rng_for("lilypond", i)
                res = r.choice([60, 75, 90, 110])
                (Path(tmp) / f"m{i:04d}.ly").write_text(
                    _melody_ly(r).replace("\\paper {", f"#(ly:set-option 'resolution {res})\n\\paper {{", 1)
                )
                names.append(f"m{i:04d}.ly")
            run(["lilypond", "--png", *names], timeout=900, cwd=tmp)
            for i, p in batch:
                made = sorted(Path(tmp).glob(f"m{i:04d}*.png"))
                if made:
                    _flatten(made[0]).save(p)
    for i, p in todo(out, "music", "abcm2ps", N["music"]):
        r = rng_for("abcm2ps", i)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "t.abc").write_text(_melody_abc(r))
            run(["abcm2ps", "-g", "-O", "t.svg", "t.abc"], cwd=tmp)
            svgs = sorted(Path(tmp).glob("t*.svg"))
            if svgs:
                run(
                    [
                        "rsvg-convert",
                        "-b",
                        "white",
                        "-z",
                        str(r.choice([0.8, 1.0, 1.3, 1.6])),
                        "-o",
                        str(p),
                        str(svgs[0]),
                    ]
                )


def _flatten(path: Path, bg: tuple[int, int, int] = (255, 255, 255)) -> Image.Image:
    im = Image.open(path)
    im.load()
    if im.mode in ("RGBA", "LA", "P"):
        im = im.convert("RGBA")
        base = Image.new("RGB", im.size, bg)
        base.paste(im, mask=im.split()[3])
        return base
    return im.convert("RGB")


# ---- maps --------------------------------------------------------------------------------------------


def render_maps(out: Path) -> None:
    for i, p in todo(out, "map", "gmt-coast", N["map"]):
        gmt_map(rng_for("gmt-coast", i), p)
    for i, p in todo(out, "map", "streets", N["map"]):
        street_map(rng_for("streets", i)).save(p)
    import matplotlib

    matplotlib.use("Agg")
    for i, p in todo(out, "map", "topo", N["map"]):
        topo_map(rng_for("topo", i), p)
    countries = dcw_countries()
    if countries:
        for i, p in todo(out, "map", "political", N["map"]):
            political_map(rng_for("political", i), p, countries)
    for i, p in todo(out, "map", "globe", N["map"]):
        globe_map(rng_for("globe", i), p)


LAND = [
    (10, 45),
    (20, 50),
    (-5, 40),
    (25, 60),
    (30, 0),
    (20, -25),
    (0, 10),
    (80, 20),
    (105, 30),
    (135, 35),
    (-100, 40),
    (-80, 35),
    (-60, -15),
    (-70, -35),
    (135, -25),
    (170, -42),
    (45, 25),
    (60, 45),
    (120, 0),
]


def gmt_map(r: random.Random, p: Path) -> None:
    """Coastlines, borders, rivers and land and sea colours of a random region (GMT, GSHHG crude/low)."""
    span = r.choice([8, 15, 25, 40, 70])
    lon, lat = r.choice(LAND)  # a corner of a land region, so that the map holds coasts and borders
    lon, lat = lon + r.uniform(-span / 2, 0), lat + r.uniform(-span / 3, 0)
    region = f"{lon:.0f}/{lon + span:.0f}/{lat:.0f}/{min(lat + span * 0.6, 85):.0f}"
    if r.random() < 0.15:
        region = "g"
    proj = r.choice(["M15c", "M15c", "Q15c", "J0/15c" if region == "g" else "M15c", "Cyl_stere/15c"])
    if region == "g":
        proj = r.choice(["N15c", "W15c", "R15c", "Kf15c"])
    land = r.choice(["lightgreen", "bisque", "wheat", "gray85", "palegreen3", "khaki", "white", "beige"])
    sea = r.choice(["lightblue", "skyblue", "white", "azure", "steelblue1", "lightcyan"])
    args = ["-R" + region, "-J" + proj, "-D" + r.choice(["c", "l"]), "-G" + land, "-S" + sea, "-W0.25p"]
    if r.random() < 0.7:
        args.append("-N1/0.5p,gray30" + (",-" if r.random() < 0.5 else ""))
    if r.random() < 0.4:
        args.append("-I1/0.5p,blue")
    frame = r.choice(
        ["-Baf", "-Bafg", "-B0", '-BWSne+t"' + words(r, 2).title() + '"', '-Bafg+t"' + r.choice(WORDS).title() + '"']
    )
    gmt_png(r, [f"gmt coast {' '.join(args)} {frame}"], p)


def gmt_png(r: random.Random, lines: list[str], p: Path, timeout: float = 120,
            ground: tuple[int, int, int] = (255, 255, 255)) -> None:
    """GMT commands run as one modern-mode session into a PNG at a random resolution, saved flat on ``ground``
    at ``p`` (nothing saved where GMT made no picture)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = f"gmt begin m png E{r.choice([40, 55, 70])}\n" + "\n".join(lines) + "\ngmt end\n"
        (Path(tmp) / "m.sh").write_text(script)
        run(["bash", "m.sh"], cwd=tmp, timeout=timeout, env={**os.environ, "GMT_SESSION_NAME": str(os.getpid())})
        made = Path(tmp) / "m.png"
        if made.exists():
            _flatten(made, ground).save(p)


def dcw_countries() -> list[str]:
    """The two-letter codes of the countries GMT's DCW data outlines (none where it is not installed)."""
    listing = Path("/usr/share/gmt/dcw/dcw-countries.txt")
    if not listing.exists():
        return []
    codes = [ln.split()[1] for ln in listing.read_text(encoding="utf-8", errors="replace").splitlines()
             if ln.strip() and not ln.startswith("#") and len(ln.split()) > 2 and len(ln.split()[1]) == 2]
    return sorted(set(codes))


POLITICAL_REGIONS = ["d", "d", "-25/45/33/72", "-20/55/-37/38", "60/150/-12/55", "-170/-50/5/75", "-85/-30/-57/13",
                     "110/180/-50/0", "25/65/10/45", "-12/32/35/60"]


def political_map(r: random.Random, p: Path, countries: list[str]) -> None:
    """A political map: each country filled its own colour (an atlas, a world map on a wall, a choropleth of
    one value per country with its colour bar), borders, sea, and names scattered over the land."""
    region = r.choice(POLITICAL_REGIONS)
    proj = r.choice(["N15c", "R15c", "W15c", "Kf15c"]) if region == "d" else r.choice(["M15c", "Q15c"])
    choropleth = r.random() < 0.4
    palette = (["#fde0c5", "#facba6", "#f8b58b", "#f59e72", "#f2855d", "#ef6a4c", "#eb4a40"] if r.random() < 0.5
               else ["#edf8fb", "#bfd3e6", "#9ebcda", "#8c96c6", "#8c6bb1", "#88419d", "#6e016b"]) if choropleth \
        else ["#f4cccc", "#fce5cd", "#fff2cc", "#d9ead3", "#d0e0e3", "#cfe2f3", "#d9d2e9", "#ead1dc", "#e6b8af",
              "#b6d7a8", "#a2c4c9", "#ffe599", "#f9cb9c", "#b4a7d6"]
    sea = r.choice(["lightblue", "white", "azure", "aliceblue", "lightcyan", "#a6cee3"])
    # Countries across the date line or the pole fill as bands in a regional projection: world maps only.
    usable = countries if region == "d" else [c for c in countries if c not in ("RU", "FJ", "KI", "AQ", "NZ", "US")]
    picked = r.sample(usable, min(len(usable), r.randint(60, 200)))
    lines = [f"gmt coast -R{region} -J{proj} -S{sea} -Ggray92 -Dc -A5000"]
    by_colour: dict[str, list[str]] = {}
    for code in picked:
        by_colour.setdefault(r.choice(palette), []).append(code)
    for colour, codes in by_colour.items():  # one call a colour: GMT takes a list of countries
        lines.append(f"gmt coast -E{','.join(codes)}+g{colour}+p0.25p,gray40")
    if r.random() < 0.6:
        names = " ".join(f"{r.uniform(-170, 170):.1f} {r.uniform(-50, 70):.1f} {r.choice(WORDS).upper()}"
                         for _ in range(r.randint(6, 18)))
        lines.append(f"echo '{names}' | xargs -n3 | gmt text -F+f{r.choice([5, 6, 7])}p,Helvetica,gray20 -N")
    if choropleth:
        lines.append(f"gmt makecpt -C{','.join(palette)} -T0/{len(palette)}/1 -H > c.cpt")
        lines.append('gmt colorbar -Cc.cpt -DJBC+w8c/0.3c+h -Bxaf+l"' + words(r, 2) + '"')
    frame = r.choice(["-B0", "-Bafg", '-B+t"' + words(r, 2).title() + '"', "-B0"])
    lines.append(f"gmt basemap {frame}")
    gmt_png(r, lines, p, timeout=180)


def globe_map(r: random.Random, p: Path) -> None:
    """The earth as a globe (orthographic and satellite views): land and sea, often a graticule, on a white,
    black or starless dark ground."""
    lon, lat = r.uniform(-180, 180), r.uniform(-60, 60)
    proj = r.choice([f"G{lon:.0f}/{lat:.0f}/15c", f"G{lon:.0f}/{lat:.0f}/15c", f"S{lon:.0f}/90/15c"])
    region = "g" if proj.startswith("G") else f"{lon - 180:.0f}/{lon + 180:.0f}/{r.choice([0, 20, 40])}/90"
    land = r.choice(["darkgreen", "forestgreen", "tan", "khaki", "olivedrab", "sienna", "gray70", "wheat"])
    sea = r.choice(["navy", "royalblue", "steelblue", "dodgerblue", "midnightblue", "lightblue"])
    args = [f"-R{region}", f"-J{proj}", "-Dc", "-A5000", f"-G{land}", f"-S{sea}"]
    if r.random() < 0.5:
        args.append("-W0.25p," + r.choice(["black", "white", "gray30"]))
    frame = r.choice(["-Bg30", "-Bg15", "-B0", "-Bafg"])
    ground = r.choice([(255, 255, 255), (0, 0, 0), (10, 12, 30)])
    gmt_png(r, [f"gmt coast {' '.join(args)} {frame}"], p, ground=ground)


def street_map(r: random.Random) -> Image.Image:
    """A street map as web maps draw them: blocks, parks, water, roads of three widths, names along them."""
    w, h = r.randint(500, 900), r.randint(400, 700)
    style = r.choice(
        [
            dict(
                bg=(242, 239, 233),
                road=(255, 255, 255),
                major=(252, 214, 164),
                edge=(200, 195, 185),
                park=(200, 230, 180),
                water=(170, 211, 223),
                block=(222, 214, 208),
            ),
            dict(
                bg=(236, 236, 236),
                road=(255, 255, 255),
                major=(255, 242, 175),
                edge=(190, 190, 190),
                park=(206, 234, 214),
                water=(170, 218, 255),
                block=(230, 230, 230),
            ),
            dict(
                bg=(36, 40, 48),
                road=(80, 86, 96),
                major=(140, 120, 80),
                edge=(20, 20, 20),
                park=(40, 70, 50),
                water=(20, 40, 70),
                block=(50, 54, 62),
            ),
        ]
    )
    im = Image.new("RGB", (w, h), style["bg"])
    d = ImageDraw.Draw(im)
    nr = np.random.default_rng(r.randrange(1 << 30))
    for _ in range(r.randint(0, 2)):  # a river or a lake
        if r.random() < 0.5:
            pts = [(x, h * r.uniform(0.2, 0.8) + 40 * np.sin(x / r.uniform(40, 120))) for x in range(0, w + 20, 20)]
            d.line(pts, fill=style["water"], width=r.randint(20, 60))
        else:
            cx, cy, rr = r.randint(0, w), r.randint(0, h), r.randint(40, 120)
            d.ellipse((cx - rr, cy - rr * 0.7, cx + rr, cy + rr * 0.7), fill=style["water"])
    for _ in range(r.randint(1, 4)):
        x, y = r.randint(0, w), r.randint(0, h)
        d.rectangle((x, y, x + r.randint(40, 160), y + r.randint(30, 120)), fill=style["park"])
    ang = r.uniform(-0.4, 0.4)
    step = r.randint(35, 70)
    f = font(r.randint(9, 12))
    lines = []
    for k in range(-w, 2 * w, step):
        jitter = nr.normal(0, 3)
        lines.append(((k, -10), (k + h * np.tan(ang) + jitter, h + 10)))
    for k in range(-h, 2 * h, step):
        lines.append(((-10, k), (w + 10, k + w * np.tan(-ang * 0.5))))
    for a, b in lines:
        major = r.random() < 0.15
        width = r.randint(7, 11) if major else r.randint(3, 6)
        d.line([a, b], fill=style["edge"], width=width + 2)
        d.line([a, b], fill=style["major"] if major else style["road"], width=width)
    for _ in range(r.randint(4, 12)):
        x, y = r.randint(20, w - 100), r.randint(20, h - 20)
        d.text(
            (x, y),
            f"{r.choice(WORDS).title()} {r.choice(['St', 'Ave', 'Road', 'Street', 'Lane', 'Park'])}",
            fill=(90, 90, 90) if style["bg"][0] > 100 else (200, 200, 200),
            font=f,
        )
    for _ in range(r.randint(0, 5)):  # markers
        x, y = r.randint(10, w - 10), r.randint(10, h - 10)
        d.ellipse((x - 6, y - 6, x + 6, y + 6), fill=r.choice([(220, 60, 50), (60, 120, 220)]), outline="white")
    return im


def topo_map(r: random.Random, p: Path) -> None:
    """A contour map of random terrain, with a colour scale or lines only, spot heights and a grid."""
    import matplotlib.pyplot as plt

    nr = np.random.default_rng(r.randrange(1 << 30))
    n = 200
    yy, xx = np.mgrid[0 : 1 : n * 1j, 0 : 1 : n * 1j]
    z = np.zeros_like(xx)
    for _ in range(r.randint(3, 12)):
        cx, cy, s, a = nr.uniform(0, 1), nr.uniform(0, 1), nr.uniform(0.05, 0.3), nr.uniform(-1, 1)
        z += a * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s * s))
    z = (z - z.min()) / (np.ptp(z) + 1e-9) * r.uniform(300, 3000)
    fig, ax = plt.subplots(figsize=(r.uniform(4, 8), r.uniform(4, 7)))
    if r.random() < 0.6:
        ax.contourf(xx, yy, z, levels=r.randint(8, 20), cmap=r.choice(["terrain", "gist_earth", "YlOrBr", "Greens"]))
    cs = ax.contour(
        xx,
        yy,
        z,
        levels=r.randint(8, 25),
        colors=r.choice(["k", "saddlebrown", "dimgray"]),
        linewidths=r.uniform(0.4, 1.0),
    )
    if r.random() < 0.6:
        ax.clabel(cs, fontsize=7, fmt="%d")
    if r.random() < 0.5:
        xs = np.linspace(0, 1, 30)
        ax.plot(xs, 0.5 + 0.2 * np.sin(xs * r.uniform(3, 9)), color="blue", linewidth=1.5)
    for _ in range(r.randint(0, 4)):
        ax.text(nr.uniform(0.1, 0.9), nr.uniform(0.1, 0.9), r.choice(WORDS).title(), fontsize=8)
    ax.set_xticks([]) if r.random() < 0.5 else None
    ax.set_yticks([]) if r.random() < 0.5 else None
    ax.set_aspect("equal")
    fig.savefig(p, dpi=r.choice([60, 75, 90]), bbox_inches="tight")
    plt.close(fig)


# ---- screenshots -------------------------------------------------------------------------------------


def render_screenshots(out: Path) -> None:
    qt_screenshots(out)
    for i, p in todo(out, "screenshot", "firefox-page", N["screenshot"] // 2):
        r = rng_for("firefox-page", i)
        firefox_shot(web_page(r), p, (r.randint(800, 1280), r.randint(500, 900)))
    xterm_screenshots(out)


def web_page(r: random.Random) -> str:
    bar = r.choice(["#24292f", "#1565c0", "#fafafa", "#2e7d32", "#6a1b9a", "#ffffff"])
    fg = "white" if bar not in ("#fafafa", "#ffffff") else "#333"
    nav = "".join(f"<a style='color:{fg};margin:0 12px'>{r.choice(WORDS).title()}</a>" for _ in range(r.randint(3, 7)))
    cards = "".join(
        f"<div style='display:inline-block;width:{r.randint(180, 260)}px;margin:8px;padding:10px;border:1px solid #ddd;"
        f"border-radius:6px;vertical-align:top'><div style='height:{r.randint(60, 120)}px;background:hsl({r.randint(0, 360)},40%,75%)'>"  # noqa: E501 - one line of the generated source
        f"</div><h4>{words(r, 3).title()}</h4><p>{words(r, r.randint(8, 20))}</p><button>{r.choice(WORDS).title()}</button></div>"  # noqa: E501 - one line of the generated source
        for _ in range(r.randint(0, 6))
    )
    paras = "".join(f"<p>{words(r, r.randint(20, 60))}.</p>" for _ in range(r.randint(1, 4)))
    form = (
        (
            "<form>"
            + "".join(
                f"<label>{r.choice(WORDS).title()}</label> <input value='{r.choice(WORDS)}'><br><br>"
                for _ in range(r.randint(1, 4))
            )
            + "<button>Submit</button></form>"
        )
        if r.random() < 0.4
        else ""
    )
    side = (
        (
            "<div style='float:left;width:200px;background:#f3f3f3;height:100%;padding:10px'>"
            + "".join(f"<div style='padding:6px'>{r.choice(WORDS).title()}</div>" for _ in range(r.randint(4, 12)))
            + "</div>"
        )
        if r.random() < 0.4
        else ""
    )
    return (
        f"<html><body style='margin:0;font-family:{r.choice(['sans-serif', 'serif', 'Nimbus Sans', 'DejaVu Sans'])}'>"
        f"<div style='background:{bar};color:{fg};padding:14px;font-size:18px'><b>{r.choice(WORDS).title()}</b>"
        f"{nav} <input placeholder='Search' style='float:right'></div>{side}<div style='padding:20px;"
        f"margin-left:{220 if side else 0}px'><h1>{words(r, 4).title()}</h1>{paras}{form}{cards}</div></body></html>"
    )


def qt_screenshots(out: Path) -> None:
    """Real Qt widgets and dialogs laid out at random, grabbed off screen."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    styles = QtWidgets.QStyleFactory.keys()
    for i, p in todo(out, "screenshot", "qt-widgets", N["screenshot"]):
        r = rng_for("qt-widgets", i)
        app.setStyle(r.choice(styles))
        win = QtWidgets.QMainWindow()
        win.setWindowTitle(words(r, 2).title())
        mb = win.menuBar()
        for _ in range(r.randint(3, 6)):
            mb.addMenu(r.choice(WORDS).title())
        if r.random() < 0.6:
            tb = win.addToolBar("t")
            for _ in range(r.randint(3, 8)):
                tb.addAction(r.choice(WORDS).title())
        central = QtWidgets.QWidget()
        lay = QtWidgets.QHBoxLayout(central) if r.random() < 0.5 else QtWidgets.QVBoxLayout(central)
        for _ in range(r.randint(1, 3)):
            lay.addWidget(_qt_widget(QtWidgets, r))
        win.setCentralWidget(central)
        if r.random() < 0.7:
            win.statusBar().showMessage(words(r, 4))
        win.resize(r.randint(500, 1100), r.randint(350, 800))
        win.show()
        app.processEvents()
        win.grab().save(str(p))
        win.close()
        win.deleteLater()
        app.processEvents()


def _qt_form(Qw, r: random.Random):
    """A group box of labelled fields with a row of buttons, as a settings dialog shows."""
    w = Qw.QGroupBox(r.choice(WORDS).title())
    form = Qw.QFormLayout(w)
    for _ in range(r.randint(2, 7)):
        field = r.choice([Qw.QLineEdit(r.choice(WORDS)), Qw.QSpinBox(), Qw.QCheckBox(r.choice(WORDS)),
                          Qw.QComboBox(), Qw.QSlider()])
        if isinstance(field, Qw.QComboBox):
            field.addItems(WORDS[:5])
        form.addRow(r.choice(WORDS).title() + ":", field)
    row = Qw.QHBoxLayout()
    for t in ("OK", "Cancel", "Apply")[: r.randint(1, 3)]:
        row.addWidget(Qw.QPushButton(t))
    form.addRow(row)
    return w


def _qt_widget(Qw, r: random.Random):
    k = r.randrange(7)
    if k == 0:
        w = Qw.QTextEdit()
        w.setPlainText("\n".join(words(r, r.randint(3, 12)) for _ in range(r.randint(5, 40))))
    elif k == 1:
        w = Qw.QTreeWidget()
        w.setHeaderLabels([r.choice(WORDS).title() for _ in range(r.randint(1, 4))])
        for _ in range(r.randint(3, 15)):
            it = Qw.QTreeWidgetItem([r.choice(WORDS) for _ in range(4)])
            for _ in range(r.randint(0, 3)):
                it.addChild(Qw.QTreeWidgetItem([r.choice(WORDS), str(r.randint(1, 999))]))
            w.addTopLevelItem(it)
        w.expandAll()
    elif k == 2:
        w = Qw.QTableWidget(r.randint(4, 20), r.randint(2, 6))
        for a in range(w.rowCount()):
            for b in range(w.columnCount()):
                w.setItem(a, b, Qw.QTableWidgetItem(r.choice(WORDS) if b == 0 else str(r.randint(0, 9999))))
    elif k == 3:
        w = Qw.QListWidget()
        w.addItems([words(r, r.randint(1, 3)) for _ in range(r.randint(4, 25))])
    elif k == 4:
        w = _qt_form(Qw, r)
    elif k == 5:
        w = Qw.QTabWidget()
        for _ in range(r.randint(2, 5)):
            t = Qw.QPlainTextEdit("\n".join(words(r, 8) for _ in range(10)))
            w.addTab(t, r.choice(WORDS).title())
    else:
        w = Qw.QWidget()
        v = Qw.QVBoxLayout(w)
        for _ in range(r.randint(3, 8)):
            v.addWidget(
                r.choice(
                    [
                        Qw.QLabel(words(r, 5)),
                        Qw.QPushButton(r.choice(WORDS).title()),
                        Qw.QRadioButton(r.choice(WORDS)),
                        Qw.QProgressBar(),
                    ]
                )
            )
    return w


def xterm_screenshots(out: Path) -> None:
    """xterm windows with the output of ordinary commands, under Xvfb, grabbed with xwd."""
    cmds = [
        "ls -la /usr/bin | head -60",
        "ps aux | head -40",
        "df -h; free -m; uname -a",
        "cat /etc/services | head -50",
        "dpkg -l | head -50",
        "ls -R /etc/apt | head -50",
        "env | sort | head -40",
        "python3 -c 'import this'",
        "cal -3; date",
        "head -60 /usr/share/common-licenses/GPL-3",
    ]
    d = out / "screenshot" / "xterm"
    d.mkdir(parents=True, exist_ok=True)
    missing = [(i, d / f"{i:04d}.png") for i in range(N["screenshot"] // 2) if not (d / f"{i:04d}.png").exists()]
    if not missing:
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "shots.sh"
        lines = ["set -u"]
        for i, p in missing:
            r = rng_for("xterm", i)
            bg, fg = r.choice(
                [
                    ("black", "white"),
                    ("white", "black"),
                    ("#300a24", "white"),
                    ("#1e1e1e", "#d4d4d4"),
                    ("#fdf6e3", "#657b83"),
                    ("black", "green"),
                ]
            )
            geo = f"{r.randint(70, 140)}x{r.randint(20, 50)}"
            cmd = r.choice(cmds).replace("'", "'\\''")
            lines.append(
                f"xterm -geometry {geo}+0+0 -bg '{bg}' -fg '{fg}' -fa '{r.choice(['DejaVu Sans Mono', 'Monospace', 'Nimbus Mono PS'])}' "  # noqa: E501 - one line of the generated source
                f"-fs {r.randint(8, 13)} -e bash -c 'echo \"$ {cmd[:40]}\"; {cmd}; sleep 30' & X=$!; sleep 1.5; "
                f"xwd -root -silent | xwdtopnm 2>/dev/null | pnmcrop 2>/dev/null | pnmtopng > {p}; kill $X"
            )
        script.write_text("\n".join(lines) + "\n")
        run(["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", "bash", str(script)], timeout=1200)


# ---- icons and emoji ---------------------------------------------------------------------------------

ICON_THEMES = {
    "tango": "tango-icon-theme/usr/share/icons/Tango",
    "oxygen": "oxygen-icon-theme/usr/share/icons/oxygen",
    "papirus": "papirus-icon-theme/usr/share/icons/Papirus",
    "breeze": "breeze-icon-theme/usr/share/icons/breeze",
}


def _on_plain(icon: Image.Image, r: random.Random) -> Image.Image:
    """An icon at a random size on a plain background, as icons are met in documents."""
    bg = r.choice(
        [
            (255, 255, 255),
            (255, 255, 255),
            (245, 245, 245),
            (30, 30, 30),
            (235, 242, 250),
            tuple(r.randint(180, 255) for _ in range(3)),
        ]
    )
    side = r.randint(64, 320)
    icon = icon.convert("RGBA")
    s = int(side * r.uniform(0.5, 0.95))
    icon = icon.resize((s, s), Image.LANCZOS)
    im = Image.new("RGB", (side + r.randint(0, 60), side + r.randint(0, 60)), bg)
    im.paste(icon, (r.randint(0, im.width - s), r.randint(0, im.height - s)), icon)
    return im


def render_icons(out: Path) -> None:
    for name, rel in ICON_THEMES.items():
        root = out / "pkgs" / rel
        files = sorted(
            f
            for f in root.rglob("*")
            if f.suffix in (".png", ".svg")
            and f.is_file()
            and ("scalable" in f.parts or any(s in str(f) for s in ("256", "128", "64x64", "48x48", "/64/", "/48/")))
        )
        if not files:
            continue
        for i, p in todo(out, "icon", name, N["icon"]):
            r = rng_for(name, i)
            f = r.choice(files)
            try:
                if f.suffix == ".svg":
                    png = subprocess.run(
                        ["rsvg-convert", "-w", "256", "-h", "256", str(f)], capture_output=True, timeout=30
                    ).stdout
                    icon = Image.open(io.BytesIO(png))
                else:
                    icon = Image.open(f)
                _on_plain(icon, r).save(p)
            except Exception as exc:  # noqa: BLE001 - a broken icon is skipped
                print(f"icon {f}: {exc}", file=sys.stderr)
    try:
        emoji = ImageFont.truetype("NotoColorEmoji.ttf", 109)
    except OSError:
        return
    cps = [c for c in range(0x1F300, 0x1FAFF)]
    for i, p in todo(out, "icon", "noto-emoji", N["icon"] * 2):
        r = rng_for("noto-emoji", i)
        im = Image.new("RGBA", (136, 128), (0, 0, 0, 0))
        ImageDraw.Draw(im).text((0, 0), chr(r.choice(cps)), font=emoji, embedded_color=True)
        if im.getbbox() is None:
            continue
        _on_plain(im.crop(im.getbbox()), r).save(p)


# ---- 3D renderings (POV-Ray scenes of random primitives and materials; a small numpy ray caster) -----


def _pov_scene(r: random.Random) -> str:
    def col():
        return f"rgb <{r.random():.2f},{r.random():.2f},{r.random():.2f}>"

    finish = lambda: r.choice(  # noqa: E731
        [
            "phong 0.9 reflection 0.1",
            "phong 0.3",
            "reflection 0.4 phong 1",
            "diffuse 0.8",  # noqa: E731
            "specular 0.6 roughness 0.02",
            "ambient 0.2 diffuse 0.6 phong 0.5",
        ]
    )
    floor = r.choice(
        [
            f"plane {{ y, 0 pigment {{ checker {col()} {col()} scale {r.choice([0.5, 1, 2])} }} }}",
            f"plane {{ y, 0 pigment {{ {col()} }} finish {{ reflection {r.uniform(0, 0.3):.2f} }} }}",
            "plane { y, 0 pigment { rgb 0.9 } }",
        ]
    )
    sky = r.choice(
        [
            "background { rgb <0.6,0.75,1> }",
            f"background {{ {col()} }}",
            "background { rgb 1 }",
            "sky_sphere { pigment { gradient y color_map { [0 rgb <1,1,1>] [1 rgb <0.3,0.5,0.9>] } } }",
        ]
    )
    objs = []
    for _ in range(r.randint(1, 7)):
        x, z = r.uniform(-3, 3), r.uniform(-1, 4)
        s = r.uniform(0.3, 1.2)
        shape = r.choice(
            [
                f"sphere {{ <{x:.2f},{s:.2f},{z:.2f}>, {s:.2f}",
                f"box {{ <{x - s:.2f},0,{z - s:.2f}>, <{x + s:.2f},{2 * s:.2f},{z + s:.2f}> rotate y*{r.randint(0, 90)}",  # noqa: E501 - one line of the generated source
                f"cylinder {{ <{x:.2f},0,{z:.2f}>, <{x:.2f},{2 * s:.2f},{z:.2f}>, {s * 0.6:.2f}",
                f"cone {{ <{x:.2f},0,{z:.2f}>, {s:.2f}, <{x:.2f},{2 * s:.2f},{z:.2f}>, 0",
                f"torus {{ {s:.2f}, {s * 0.3:.2f} translate <{x:.2f},{s * 0.3:.2f},{z:.2f}>",
            ]
        )
        tex = r.choice(
            [
                f"pigment {{ {col()} }}",
                f"pigment {{ {col()} filter 0.7 }} interior {{ ior 1.5 }}",
                f"pigment {{ marble turbulence 1 color_map {{ [0 {col()}] [1 {col()}] }} scale 0.5 }}",
                f"pigment {{ {col()} }}",
                "pigment { rgb <0.8,0.8,0.85> }",
            ]
        )
        objs.append(f"{shape} texture {{ {tex} finish {{ {finish()} }} }} }}")
    lights = "\n".join(
        f"light_source {{ <{r.uniform(-10, 10):.1f},{r.uniform(5, 15):.1f},{r.uniform(-10, 2):.1f}>"
        f" color rgb {r.uniform(0.6, 1.2):.2f} {'area_light <2,0,0>,<0,0,2>,3,3 adaptive 1' if r.random() < 0.3 else ''} }}"  # noqa: E501 - one line of the generated source
        for _ in range(r.randint(1, 2))
    )
    return (
        f"#version 3.7;\nglobal_settings {{ assumed_gamma 1 }}\ncamera {{ location <{r.uniform(-3, 3):.1f},"
        f"{r.uniform(1.5, 5):.1f},{r.uniform(-9, -5):.1f}> look_at <0,0.8,1> angle {r.randint(40, 70)} }}\n"
        f"{sky}\n{lights}\n{floor}\n" + "\n".join(objs) + "\n"
    )


def render_3d(out: Path) -> None:
    for i, p in todo(out, "render3d", "povray", N["render3d"]):
        r = rng_for("povray", i)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "s.pov").write_text(_pov_scene(r))
            w = r.choice([320, 400, 480])
            run(
                ["povray", "+Is.pov", "+Os.png", f"+W{w}", f"+H{w * 3 // 4}", "+A0.3", "-D", "+Q9"],
                cwd=tmp,
                timeout=120,
            )
            if (Path(tmp) / "s.png").exists():
                _flatten(Path(tmp) / "s.png").save(p)
    for i, p in todo(out, "render3d", "raycast", N["render3d"] // 2):
        raycast(rng_for("raycast", i)).save(p)


def raycast(r: random.Random) -> Image.Image:
    """Spheres on a floor, Phong-shaded with hard shadows: a plain computer rendering."""
    w, h = r.choice([(320, 240), (400, 300)])
    nr = np.random.default_rng(r.randrange(1 << 30))
    ys, xs = np.mgrid[0:h, 0:w]
    d = np.stack([(xs - w / 2) / w, -(ys - h / 2) / w, np.ones_like(xs, float)], -1)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    o = np.array([0, 1.0, -4.0])
    light = nr.normal(0, 1, 3) * [1, 0, 1] + [0, 5, -2]
    k = r.randint(1, 5)
    cen = np.stack([nr.uniform(-2, 2, k), np.zeros(k), nr.uniform(0, 4, k)], 1)
    rad = nr.uniform(0.3, 1.0, k)
    cen[:, 1] = rad
    colours = nr.uniform(0.1, 1, (k, 3))
    best = np.full((h, w), np.inf)
    idx = np.full((h, w), -1)
    for j in range(k):
        oc = o - cen[j]
        b = (d * oc).sum(-1)
        c = oc @ oc - rad[j] ** 2
        disc = b * b - c
        t = np.where(disc > 0, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
        hit = (t > 0) & (t < best)
        best[hit], idx[hit] = t[hit], j
    tf = np.where(d[..., 1] < 0, -o[1] / np.minimum(d[..., 1], -1e-9), np.inf)
    floor = (tf < best) & np.isfinite(tf)
    best[floor], idx[floor] = tf[floor], k
    p = o + d * np.where(np.isfinite(best), best, 0)[..., None]
    n = np.zeros_like(p)
    n[..., 1] = 1
    for j in range(k):
        m = idx == j
        n[m] = (p[m] - cen[j]) / rad[j]
    L = light - p
    L /= np.linalg.norm(L, axis=-1, keepdims=True)
    diff = np.clip((n * L).sum(-1), 0, 1)
    shadow = np.zeros((h, w), bool)
    for j in range(k):
        oc = p + n * 1e-3 - cen[j]
        b = (L * oc).sum(-1)
        c = (oc * oc).sum(-1) - rad[j] ** 2
        shadow |= (b * b - c > 0) & (-b > 0)
    hv = L - d
    hv /= np.linalg.norm(hv, axis=-1, keepdims=True)
    spec = np.clip((n * hv).sum(-1), 0, 1) ** r.choice([20, 50, 100])
    fc1, fc2 = nr.uniform(0.3, 1, 3), nr.uniform(0, 0.5, 3)
    checker = ((np.floor(p[..., 0]) + np.floor(p[..., 2])) % 2 == 0)[..., None]
    base = np.where((idx == k)[..., None], np.where(checker, fc1, fc2), colours[np.clip(idx, 0, k - 1)])
    light_f = np.where(shadow, 0.25, 0.25 + 0.75 * diff)[..., None]
    col = base * light_f + np.where(shadow, 0, spec)[..., None] * (idx < k)[..., None]
    skyc = np.array([0.5, 0.7, 1.0]) * (1 - 0.4 * np.clip(d[..., 1:2], 0, 1))
    col = np.where((idx < 0)[..., None], skyc, col)
    return Image.fromarray((np.clip(col, 0, 1) ** (1 / 2.2) * 255).astype(np.uint8))


# ---- gathered pictures: drawings, paintings, photos on white (files of packages) ---------------------


def gcompris_files(out: Path) -> None:
    """Every picture inside gcompris-qt-data's Qt resource files, written out as files (its own names)."""
    from PySide6.QtCore import QDirIterator, QFile, QResource

    dest = out / "gcompris"
    if (dest / ".done").exists():
        return
    for rcc in sorted((out / "pkgs" / "gcompris-qt-data/usr/share/gcompris-qt/rcc").glob("*.rcc")):
        root = f"/{rcc.stem}"
        if not QResource.registerResource(str(rcc), root):
            continue
        it = QDirIterator(f":{root}", QDirIterator.Subdirectories)
        while it.hasNext():
            name = it.next()
            if not name.lower().endswith((".png", ".jpg", ".jpeg", ".webp", ".svg", ".svgz")):
                continue
            f = QFile(name)
            if f.open(QFile.ReadOnly):
                target = dest / rcc.stem / name.split(f":{root}/", 1)[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(bytes(f.readAll()))
        QResource.unregisterResource(str(rcc), root)
    (dest / ".done").write_text("")


def gcompris_paintings(out: Path) -> None:
    """The famous paintings of gcompris-qt-data's puzzle, put together again from its pieces (each board
    names its pieces and their centres as shares of the board's width and height), whole and in crops."""
    import re

    from PySide6.QtCore import QDirIterator, QFile, QResource

    rcc = out / "pkgs" / "gcompris-qt-data/usr/share/gcompris-qt/rcc/paintings.rcc"
    dest = out / "painting" / "gcompris-paintings"
    if not rcc.exists() or (dest / ".done").exists():
        return
    dest.mkdir(parents=True, exist_ok=True)
    QResource.registerResource(str(rcc), "/pt")
    it = QDirIterator(":/pt", QDirIterator.Subdirectories)
    boards = []
    while it.hasNext():
        name = it.next()
        if re.search(r"/board/board.*\.qml$", name):
            f = QFile(name)
            f.open(QFile.ReadOnly)
            boards.append(bytes(f.readAll()).decode("utf-8", "replace"))
    images = out / "gcompris/paintings/gcompris/src/activities/paintings/resource"
    n = 0
    for text in boards:
        size = re.search(r'"width":\s*(\d+),\s*"height":\s*(\d+)', text)
        pieces = re.findall(
            r'"pixmapfile"\s*:\s*"(image/[^"]+\.webp)",\s*"x"\s*:\s*"([\d.]+)",\s*"y"\s*:\s*"([\d.]+)"', text
        )
        if not size or not pieces:
            continue
        w, h = int(size.group(1)), int(size.group(2))
        board = Image.new("RGBA", (w, h), (0, 0, 0, 0))
        for rel, x, y in pieces:
            piece = Image.open(images / rel).convert("RGBA")
            board.alpha_composite(piece, (int(float(x) * w - piece.width / 2), int(float(y) * h - piece.height / 2)))
        box = board.getchannel("A").point(lambda a: 255 if a > 250 else 0).getbbox()
        whole = board.crop(box).convert("RGB")
        r = random.Random(n)
        crops = [whole] + [
            whole.crop(
                (
                    int(whole.width * a),
                    int(whole.height * b),
                    int(whole.width * (a + 0.55)),
                    int(whole.height * (b + 0.55)),
                )
            )
            for a, b in ((r.uniform(0, 0.45), r.uniform(0, 0.45)) for _ in range(3))
        ]
        for c in crops:
            c.save(dest / f"{n:04d}.png")
            n += 1
    QResource.unregisterResource(str(rcc), "/pt")
    (dest / ".done").write_text("")


def render_gathered(out: Path) -> None:
    gcompris_files(out)
    gcompris_paintings(out)
    # openclipart-svg: drawings, one source per top folder (geography and the flowchart shapes left out)
    root = out / "pkgs" / "openclipart-svg/usr/share/openclipart/svg"
    skip = {
        "buildings",
        "geography",
        "shapes",
        "signs_and_symbols",
        "buttons",
        "special",
        "logos",
        "unsorted",
        "decorations",
    }
    for top in sorted(d for d in root.iterdir() if d.is_dir() and d.name not in skip):
        files = sorted(top.rglob("*.svg"))
        r = random.Random(top.name)
        r.shuffle(files)
        dest = out / "drawing" / f"openclipart-{top.name}"
        dest.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(files[:60]):
            p = dest / f"{i:04d}.png"
            if not p.exists():
                w = r.choice([256, 384, 512])
                if (
                    run(
                        ["rsvg-convert", "-b", "white", "-w", str(w), "--keep-aspect-ratio", "-o", str(p), str(f)],
                        timeout=20,
                    )
                    and p.exists()
                ):
                    (dest / f"{i:04d}.from").write_text(str(f.relative_to(out / "pkgs")))


# ---- noise: pictures of no kind at all (surely not photos) -------------------------------------------


def noise_picture(r: random.Random, blocks: bool) -> Image.Image:
    """Random pixels, in colour or grey, per pixel or in square blocks: no kind a person would name, and no
    photo. With photos of things on plain grounds in the data, noise alone came out a third likely a photo,
    and its ImageNet tags then gave "Perhaps an animal."."""
    nr = np.random.default_rng(r.randrange(1 << 30))
    w, h = r.randint(128, 640), r.randint(128, 640)
    cell = r.randint(2, 16) if blocks else 1
    sw, sh = max(w // cell, 2), max(h // cell, 2)
    a = nr.integers(0, 256, (sh, sw, 3)) if r.random() < 0.5 else \
        np.clip(nr.normal(r.uniform(60, 200), r.uniform(20, 80), (sh, sw, 3)), 0, 255)
    if r.random() < 0.3:
        a = np.repeat(a[..., :1], 3, axis=2)
    im = Image.fromarray(a.astype(np.uint8))
    return im.resize((w, h), Image.NEAREST) if blocks else im


def render_noise(out: Path) -> None:
    for source, blocks in (("noise-fine", False), ("noise-blocks", True)):
        for i, p in todo(out, "other", source, N["noise"]):
            noise_picture(rng_for(source, i), blocks).save(p)


def render_all(out: Path, kinds: list[str]) -> None:
    steps = {
        "chart": render_charts,
        "diagram": render_diagrams,
        "table": render_tables,
        "text": render_pages,
        "music": render_music,
        "map": render_maps,
        "icon": render_icons,
        "render3d": render_3d,
        "screenshot": render_screenshots,
        "gathered": render_gathered,
        "painting": lambda o: render_paintings(o, DATA),
        "cutout": lambda o: render_cutouts(o, DATA),
        "noise": render_noise,
    }
    for k, f in steps.items():
        if not kinds or k in kinds:
            print(f"rendering {k}", file=sys.stderr, flush=True)
            f(out)


if __name__ == "__main__":
    cmd, out_dir, *rest = sys.argv[1:]
    out_path = Path(out_dir)
    if cmd == "render":
        render_all(out_path, rest)
    elif cmd == "list":
        from picture_kind_list import write_list

        write_list(out_path, more="--more" in rest)
    else:
        sys.exit(f"unknown command {cmd}")
