"""The shipped detector bundle (models/detector): the chosen detector, its class names in plain words,
and its per-class calibration fitted on the everyday val photos.

Reads the photo-level scores that ``detector_eval.py`` cached (run it first), fits for each class
present in at least ``--min-present`` val photos an isotonic map from the detector's highest raw
score for the class in a photo to the rate at which at least ``--min-refs`` of the photo's five
captions name the class; the other classes share one pooled map. Prints how well calibrated the
maps are when each half of val is scored by the maps fitted on the other half (so the figures are
not the maps' own training data), and what a floor on the calibrated score lists. Then writes the
bundle: the graph (with its weights no longer listed among its inputs and its hard-swish written so
that ONNX Runtime fuses it; the original file's sha256 is kept in the manifest), ``labels.json``,
``calibration.json`` and ``manifest.json`` with every file's sha256 and size.

    python training/studies/detector_bundle.py --cache /tmp/detector_scores.npz [--config picodet416-stretch]
        [--out models/detector] [--min-refs 2] [--min-present 25] [--floor 0.3]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from detector_eval import (  # noqa: E402
    CONFIGS,
    PICODET_MEAN,
    PICODET_STD,
    PICODET_STRIDES,
    class_figures,
    coco_names,
    load_split,
    ref_counts,
    with_fused_hardswish,
    without_initializer_inputs,
)

from capdesk.describe.calibration import Calibration, Curve, fit_isotonic  # noqa: E402
from capdesk.describe.detector import KIND  # noqa: E402

FLOORS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
UPSTREAM = {
    "picodet_s_416_coco.onnx": ("PP-PicoDet-S 416, COCO (PaddleDetection, legacy release 2021-10; "
                                "official ONNX export deploy/third_engine/picodet_s_416_coco.onnx)", 30.7),
    "picodet_s_320_coco.onnx": ("PP-PicoDet-S 320, COCO (PaddleDetection, legacy release 2021-10; "
                                "official ONNX export)", 27.1),
}


def fit(scores: np.ndarray, present: np.ndarray, names: list[str], min_present: int, info: dict) -> Calibration:
    """One curve per class present in ``min_present`` photos or more, one pooled curve for the rest."""
    own = [i for i in range(len(names)) if present[:, i].sum() >= min_present]
    rest = [i for i in range(len(names)) if i not in own]
    classes = {}
    for i in own:
        xs, ys = fit_isotonic(scores[:, i], present[:, i])
        classes[names[i]] = Curve(tuple(xs), tuple(ys), len(scores), int(present[:, i].sum()))
    xs, ys = fit_isotonic(scores[:, rest].ravel(), present[:, rest].ravel())
    pooled = Curve(tuple(xs), tuple(ys), len(scores), int(present[:, rest].sum()))
    return Calibration(pooled, classes, {**info, "pooled_classes": [names[i] for i in rest]})


def calibrated(cal: Calibration, scores: np.ndarray, names: list[str]) -> np.ndarray:
    return np.stack([cal.apply(n, scores[:, i]) for i, n in enumerate(names)], 1)


def cross_fitted(scores: np.ndarray, present: np.ndarray, names: list[str], min_present: int) -> np.ndarray:
    """Each half of the photos scored by the maps fitted on the other half."""
    out = np.zeros_like(scores, dtype=np.float64)
    half = np.arange(len(scores)) % 2 == 0
    for fold in (half, ~half):
        cal = fit(scores[~fold], present[~fold], names, min_present, {})
        out[fold] = calibrated(cal, scores[fold], names)
    return out


def reliability(p: np.ndarray, truth: np.ndarray, bins: int = 10) -> tuple[float, list[tuple[str, int, float, float]]]:
    """Expected calibration error over (photo, class) pairs, and the bins (range, pairs, mean p, rate)."""
    p, t = p.ravel(), truth.ravel().astype(np.float64)
    edges = np.linspace(0, 1, bins + 1)
    rows, ece = [], 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if m.any():
            rows.append((f"{lo:.1f}-{hi:.1f}", int(m.sum()), float(p[m].mean()), float(t[m].mean())))
            ece += m.sum() / len(p) * abs(p[m].mean() - t[m].mean())
    return float(ece), rows


def floor_rows(p: np.ndarray, present: np.ndarray) -> list[tuple[float, int, float, float]]:
    """(floor, classes listed per photo, precision, recall) of listing a class from ``floor`` up."""
    out = []
    for f in FLOORS:
        listed = p >= f
        tp = (listed & present).sum()
        out.append((f, float(listed.sum() / len(p)), float(tp / max(listed.sum(), 1)), float(tp / present.sum())))
    return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


CHANGED = ("the graph's initialisers removed from its input list (onnx), so that ONNX Runtime can fold constants; "
           "each hard-swish written as x * HardSigmoid(x) instead of Add, Clip, Mul and Div, so that ONNX Runtime "
           "fuses it into its convolution (the same function; raw outputs within 2e-5); weights unchanged. "
           "'files' hashes the shipped file, this entry the original.")


def shipped_graph(original: bytes) -> bytes:
    """The detector graph as the bundle ships it, made from the upstream file (``CHANGED`` says how)."""
    return with_fused_hardswish(without_initializer_inputs(original))


def write_bundle(out: Path, src: Path, cfg: str, names: list[str], cal: Calibration, val: dict) -> None:
    fname, size, resize = CONFIGS[cfg]
    original = src.read_bytes()
    graph = shipped_graph(original)
    out.mkdir(parents=True, exist_ok=True)
    blobs = {fname: graph, "labels.json": (json.dumps(names, indent=0) + "\n").encode(),
             "calibration.json": (json.dumps(cal.to_json(), indent=1) + "\n").encode()}
    for fn, data in blobs.items():
        (out / fn).write_bytes(data)
    what, map_ = UPSTREAM[fname]
    manifest = {
        "format_version": 1, "kind": KIND, "name": Path(fname).stem.replace("_", "-"),
        "created": datetime.date.today().isoformat(),
        "description": "Finds the 80 COCO object classes in a photo: label, box, and a score calibrated "
                       "to how often people describing such a photo name the class.",
        "graph": fname, "labels": "labels.json", "calibration": "calibration.json",
        "input": {"size": size, "resize": resize, "channels": "BGR", "mean": list(PICODET_MEAN),
                  "std": list(PICODET_STD)},
        "head": {"kind": "generalised focal loss (distribution of 8 bins per side), sigmoid class scores",
                 "strides": list(PICODET_STRIDES), "reg_max": 7},
        "nms_iou": 0.45,
        "source": {"model": what, "coco_map_50_95": map_, "file": fname, "sha256": sha(original),
                   "size": len(original),
                   "changed": CHANGED},
        "licence": {"weights": "Apache-2.0 (PaddlePaddle/PaddleDetection)", "code": "Apache-2.0"},
        "metrics": {"val": val},
        "files": {fn: {"sha256": sha(data), "size": len(data)} for fn, data in blobs.items()},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--detectors", type=Path, default=ROOT.parent / "shared" / "models" / "detectors")
    ap.add_argument("--cache", type=Path, required=True, help="the scores detector_eval.py cached")
    ap.add_argument("--config", default="picodet416-stretch", choices=[k for k in CONFIGS if "picodet" in k])
    ap.add_argument("--out", type=Path, default=None, help="write the bundle here (default: only print)")
    ap.add_argument("--min-refs", type=int, default=2)
    ap.add_argument("--min-present", type=int, default=25)
    ap.add_argument("--floor", type=float, default=0.3)
    a = ap.parse_args(argv)
    z = np.load(a.cache, allow_pickle=False)
    items = load_split(a.data, "val", 0)
    if list(z["files"]) != [im["filename"] for im in items]:
        raise SystemExit("detector_bundle: the cache is not of the whole val split; run detector_eval.py first")
    names = coco_names(a.detectors)
    scores = z[f"scores:{a.config}"].astype(np.float64)
    present = ref_counts(items, names) >= a.min_refs
    info = {"method": "isotonic regression (pool adjacent violators), linear between block means",
            "maps": "the detector's highest raw score for the class in a photo",
            "to": f"the rate at which at least {a.min_refs} of the photo's 5 human captions name the class",
            "data": f"everyday val split ({len(items)} photos: Flickr8k dev + COCO)",
            "own_curve_from": f"{a.min_present} photos present"}
    cal = fit(scores, present, names, a.min_present, info)
    print(f"{a.config}: {len(cal.classes)} classes with their own curve, {len(cal.info['pooled_classes'])}"
          f" pooled ({cal.pooled.present} present pairs)")
    print("| class | photos present | curve knots | p at raw 0.3 | 0.5 | 0.7 | 0.9 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, c in sorted(cal.classes.items(), key=lambda kv: -kv[1].present):
        print(f"| {n} | {c.present} | {len(c.xs)} | " + " | ".join(f"{float(c(v)):.2f}" for v in (0.3, 0.5, 0.7, 0.9))
              + " |")
    c = cal.pooled
    print(f"| (pooled) | {c.present} | {len(c.xs)} | " + " | ".join(f"{float(c(v)):.2f}" for v in (0.3, 0.5, 0.7, 0.9))
          + " |")
    held = cross_fitted(scores, present, names, a.min_present)
    ece, rows = reliability(held, present)
    sure = held >= 0.1
    ece_sure, _ = reliability(held[sure], present[sure])
    print(f"\ncross-fitted (each half of val scored by the other half's maps): ECE {ece:.4f} over all "
          f"(photo, class) pairs, {ece_sure:.4f} over the {int(sure.sum())} pairs from p 0.1 up")
    print("| calibrated p | (photo, class) pairs | mean p | rate named |\n| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} |")
    print("\n| floor | classes listed per photo | precision | recall |\n| --- | --- | --- | --- |")
    for f, per, prec, rec in floor_rows(held, present):
        print(f"| {f:.1f} | {per:.2f} | {prec:.3f} | {rec:.3f} |")
    if a.out:
        chosen = floor_rows(held, present)[FLOORS.index(a.floor)] if a.floor in FLOORS else None
        person = class_figures(scores[:, names.index("person")], present[:, names.index("person")], 0.5)
        val = {"photos": len(items), "present": f"at least {a.min_refs} of 5 captions name the class",
               "person_ap": round(person["ap"], 3), "cross_fitted_ece_from_p_0.1": round(ece_sure, 4)}
        if chosen:
            val.update({"floor": a.floor, "floor_precision": round(chosen[2], 3), "floor_recall": round(chosen[3], 3)})
        write_bundle(a.out, a.detectors / CONFIGS[a.config][0], a.config, names, cal, val)
        print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
