"""The labelled list of the picture-kind pictures: OUT/labels.csv with path, kind, source, split.

Splits: ``fit`` (the model and, by cross-validation over whole sources, its threshold), ``val`` (everyday
and RSICD val photos: no photo may be called another kind at the chosen threshold) and ``test`` (whole
sources never seen in fitting, one or two of each kind, and the everyday and RSICD test photos).

Besides the pictures rendered and gathered by picture_kind_data.py, the list takes the rows of
training/studies/picture_kind_labels.csv whose package is unpacked under OUT/pkgs (their labels were
given by eye in the former round): gimp-help-en's dialogs (screenshots), asymptote-doc's figures
(diagrams), gnome-user-docs' screenshots, openclipart's flowcharts (diagrams, from the SVG package) and
gcompris-qt-data's photos of things on plain backgrounds (photos).
"""

from __future__ import annotations

import csv
import json
import random
import subprocess
from pathlib import Path

from picture_kind_paint import LEFT_OUT_STYLES  # beside this file

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"  # the everyday and RSICD photos, beside the checkout

# Whole sources held out for the test figures (never in fitting): the renderer or package differs from
# every fit source of the same kind.
TEST_SOURCES = {"mpl-bmh", "mpl-dark_background", "pil-blocks", "firefox-table", "pdf-gnuplot", "abcm2ps",
                "streets", "firefox-page", "oxygen", "raycast", "gcompris-paintings", "gcompris-details",
                "openclipart-people", "openclipart-transportation", "gnome-user-docs", "openclipart-diagrams",
                "gcompris-monuments", "gcompris-renewable", "globe"}
# The Wesnoth story pictures labelled painting by eye from a contact sheet (sorted paths, numbered from
# 0): painted landscapes, scenes and portraits; left out were the character art on black, the game's own
# map and room screens, a book and the title lettering.
WESNOTH_PAINTINGS = set(range(0, 39)) | set(range(80, 106))
# gcompris-qt-data's puzzle paintings: the Pieta (a photographed sculpture) and its crops left out.
GCOMPRIS_NOT_PAINTINGS = {68, 69, 70, 71}
# Van Gogh's paintings among gcompris-qt-data's "details" backgrounds; the others there are photos.
DETAILS_PAINTINGS = ("Gogh", "Van_Gogh", "PortraitOfPereTanguy", "Eglise_dAuvers")
# Labelled by eye from contact sheets: every picture of Endless Sky's planet landscapes (photographs, some
# retouched), Widelands' game-loading pictures (photographs of mountains, meadows and coasts) and Flare's
# 36 painted portraits. The wallpapers' 22 photos (MATE's nature set, ten of Plasma's) are the former round's
# labels in picture_kind_labels.csv, read again from the same contact sheet and found the same.
MORE_MAPS = {"globe", "political"}  # rendered for the maps tried and not shipped: in the list with ``more``
MORE_PACKAGES = {"mate-backgrounds", "plasma-workspace-wallpapers"}  # their photos: in the list with ``more``
# The ordinary pictures of issue 60's tuning sets (labelled before any run; kept outside the repository,
# beside the checkout); the second held-out set is never listed.
ORDINARY = HERE.parents[2] / "ordinary"
ORDINARY_TUNING = (("tuning", "ordinary_tuning_labels.csv"), ("old_heldout", "ordinary_heldout_labels.csv"))
ALL = 100000  # more than a split holds: every photo of it
PHOTOS = {"train": 900, "val": 400, "test": ALL}  # everyday photos per split (test: all; val too with ``more``)
RSICD = {"train": 250, "val": 120, "test": ALL}


def _old_rows(out: Path, more: bool = False) -> list[tuple[str, str, str, str]]:
    rows = []
    with open(HERE / "picture_kind_labels.csv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            pic, kind, source = r["picture"], r["kind"], r["source"]
            if not pic.startswith("deb:"):
                continue
            _, pkg, path = pic.split(":", 2)
            if pkg == "gcompris-qt-data" and ".rcc:" in path:
                rcc, inner = path.split(".rcc:", 1)
                local = out / "gcompris" / Path(rcc).name / inner.lstrip("/")
            elif pkg == "openclipart-png" and kind == "diagram":
                svg = out / "pkgs/openclipart-svg" / path.lstrip("/").replace("/png/", "/svg/", 1)
                local = out / "old" / source / (svg.stem + ".png")
                if svg.with_suffix(".svg").exists() and not local.exists():
                    local.parent.mkdir(parents=True, exist_ok=True)
                    subprocess.run(["rsvg-convert", "-b", "white", "-w", "400", "--keep-aspect-ratio", "-o",
                                    str(local), str(svg.with_suffix(".svg"))], capture_output=True, timeout=30)
            else:
                local = out / "pkgs" / pkg / path.lstrip("/")
            if not local.exists() or kind not in ("photo", "screenshot", "diagram") or \
                    (pkg in MORE_PACKAGES and not more):
                continue
            split = "test" if source in TEST_SOURCES else "fit"
            rows.append((str(local), kind, source, split))
    return rows


def _photos(more: bool = False) -> list[tuple[str, str, str, str]]:
    rows = []
    for name, counts in (("everyday", PHOTOS), ("rsicd", RSICD)):
        counts = {**counts, "val": ALL} if more else counts
        meta = json.loads((DATA / name / f"dataset_{name}.json").read_text())
        by = {}
        for im in meta["images"]:
            by.setdefault(im["split"], []).append(im)
        for split, n in counts.items():
            ims = sorted(by.get(split, []), key=lambda m: m["filename"])
            random.Random(split).shuffle(ims)
            for im in ims[:n]:
                src = f"{name}-{split}" + (f"-{im['source']}" if "source" in im else "")
                rows.append((str(DATA / name / "images" / im["filename"]), "photo", src,
                             {"train": "fit"}.get(split, split)))
    return rows


def _gathered_more(out: Path) -> list[tuple[str, str, str, str]]:
    pkgs = out / "pkgs"
    rows = [(str(f), "photo", "endless-sky-land", "fit")
            for f in sorted(pkgs.glob("endless-sky-data/usr/share/games/endless-sky/images/land/*")) if f.is_file()]
    rows += [(str(f), "photo", "widelands-photos", "fit") for f in sorted(pkgs.glob(
        "widelands-data/usr/share/games/widelands/data/templates/default/loadscreens/gameloading/*/*.png"))]
    rows += [(str(f), "painting", "flare-portraits", "fit") for f in sorted(pkgs.glob(
        "flare-game/usr/share/games/flare/mods/fantasycore/images/portraits/*.png"))]
    return rows


def _ordinary_tuning() -> list[tuple[str, str, str, str]]:
    rows = []
    for folder, labels in ORDINARY_TUNING:
        if not (ORDINARY / folder).is_dir():
            continue
        with open(HERE / labels, encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                kind = {"3d": "render3d"}.get(r["kind"], r["kind"])
                rows.append((str(ORDINARY / folder / r["file"]), kind, f"ord-{folder}", "fit"))
    return rows


def write_list(out: Path, more: bool = False) -> None:
    """OUT/labels.csv; ``more``: with the sources of the studies tried and not shipped (docs/training.md, "Maps
    people meet" and "Paintings, tried again"): political maps and globes, paintings made from photos, Endless
    Sky's and Widelands' photos, the wallpapers' photos, Flare's portraits, the ordinary tuning pictures and
    every val photo. The shipped network was fitted on the list without them."""
    rows = []
    for kind_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        kind = kind_dir.name
        if kind not in ("chart", "diagram", "table", "text", "music", "map", "icon", "render3d", "screenshot",
                        "drawing", "painting", "photo", "other"):
            continue
        for src_dir in sorted(p for p in kind_dir.iterdir() if p.is_dir()):
            if src_dir.name in LEFT_OUT_STYLES or (not more and (src_dir.name.startswith("paint-")
                                                                  or src_dir.name in MORE_MAPS)):
                continue
            for f in sorted(src_dir.glob("*.png")):
                if src_dir.name == "gcompris-paintings" and int(f.stem) in GCOMPRIS_NOT_PAINTINGS:
                    continue
                rows.append((str(f), kind, src_dir.name, "test" if src_dir.name in TEST_SOURCES else "fit"))
    story = [p for p in (out / "pkgs").glob("wesnoth-1.16-*/**/*") if "images/story" in str(p)
             and p.suffix in (".png", ".jpg") and p.is_file()]
    for i, f in enumerate(sorted(story, key=lambda p: str(p.relative_to(out / "pkgs")))):
        if i in WESNOTH_PAINTINGS:
            rows.append((str(f), "painting", "wesnoth", "fit"))
    details = out / "gcompris/details/gcompris/src/activities/details/resource/image"
    for f in sorted(details.glob("*_background.webp")):
        kind = "painting" if f.name.startswith(DETAILS_PAINTINGS) else "photo"
        rows.append((str(f), kind, "gcompris-details", "test"))
    rows += _old_rows(out, more)
    if more:
        rows += _gathered_more(out) + _ordinary_tuning()
    rows += _photos(more)
    with open(out / "labels.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["path", "kind", "source", "split"])
        w.writerows(rows)
    print(f"{len(rows)} pictures listed in {out / 'labels.csv'}")
