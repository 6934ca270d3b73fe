"""Which COCO detector sees what people name: PP-PicoDet-S 416/320 (stretched or letterboxed) and
YOLOX-Nano, measured against the five human captions of each everyday val photo.

A class is *present* in a photo when at least ``--min-refs`` (default 2) of its five captions name a
word of that class (the word lists of ``capdesk.describe.objects``, the ones CHAIR uses: person <- man,
woman, boy, girl, child, people, player, ...; dog <- dog, puppy, terrier, ...), and *seen* when the
detector's highest score for the class anywhere in the photo reaches ``--at``. Per class: photos
present, average precision of the photo-level score (threshold-free), recall and precision of seen
at ``--at``; the mean over classes present in at least ``--min-photos`` photos; and the time per
picture (resize, normalise, network, decoding and suppression; median, one thread; wall-clock and the
thread's own CPU time, which a busy machine disturbs far less). Val only: the
detector, its resize mode and its calibration are chosen here; test is never read.

    python training/studies/detector_eval.py [--data ../shared/data/everyday] [--split val]
        [--detectors ../shared/models/detectors] [--at 0.5] [--min-refs 2] [--min-photos 10]
        [--cache /tmp/detector_scores.npz] [--limit N]

The scores of every configuration for every photo go to ``--cache`` (``detector_bundle.py`` fits
the calibration from them); a re-run with the same cache only redoes the arithmetic.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from capdesk.describe.detector import candidates, decode_gfl, nms, prepare  # noqa: E402
from capdesk.describe.objects import mentions  # noqa: E402
from capdesk.model.engine import session_options  # noqa: E402

PICODET_MEAN = (103.53, 116.28, 123.675)  # BGR
PICODET_STD = (57.375, 57.12, 58.395)
PICODET_STRIDES = (8, 16, 32, 64)
# coco80.names spells six classes as darknet does; the app says them as people do (and as COCO does).
PLAIN = {"motorbike": "motorcycle", "aeroplane": "airplane", "sofa": "couch", "pottedplant": "potted plant",
         "diningtable": "dining table", "tvmonitor": "tv"}
CONFIGS = {  # name -> (file, input size, resize)
    "picodet416-stretch": ("picodet_s_416_coco.onnx", 416, "stretch"),
    "picodet416-letterbox": ("picodet_s_416_coco.onnx", 416, "letterbox"),
    "picodet320-stretch": ("picodet_s_320_coco.onnx", 320, "stretch"),
    "picodet320-letterbox": ("picodet_s_320_coco.onnx", 320, "letterbox"),
    "yolox-nano416": ("yolox_nano_416_coco.onnx", 416, "letterbox-topleft"),
}
SHOWN = ("person", "dog", "cat", "horse", "car", "bicycle", "bird", "motorcycle", "boat", "bench",
         "sports ball", "dining table", "chair", "cup")


def coco_names(folder: Path) -> list[str]:
    names = [ln.strip() for ln in (folder / "coco80.names").read_text().splitlines() if ln.strip()]
    return [PLAIN.get(n, n) for n in names]


def without_initializer_inputs(data: bytes) -> bytes:
    """The graph with its weights no longer listed among its inputs (an old export's habit that stops
    ONNX Runtime folding constants); needs the ``onnx`` package (the ``train`` extra)."""
    import onnx

    m = onnx.load_from_string(data)
    inits = {i.name for i in m.graph.initializer}
    keep = [i for i in m.graph.input if i.name not in inits]
    if len(keep) == len(m.graph.input):
        return data
    del m.graph.input[:]
    m.graph.input.extend(keep)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def with_fused_hardswish(data: bytes) -> bytes:
    """The graph with each hard-swish spelt out as Add(x, 3), Clip(0, 6), Mul(x, .), Div(6) (the export's
    87 of them) written as Mul(x, HardSigmoid(x; 1/6, 0.5)), the same function: ONNX Runtime then fuses it
    into the convolution before it instead of running four passes and two layout changes over the map.
    The network takes 22.2 instead of 28.0 ms a val photo; the raw outputs move by at most 2e-5
    (docs/performance.md). Needs the ``onnx`` package (the ``train`` extra)."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load_from_string(data)
    g = m.graph
    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    consts.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in g.node
                   if n.op_type == "Constant" and n.attribute and n.attribute[0].type == onnx.AttributeProto.TENSOR})
    made_by = {o: n for n in g.node for o in n.output}
    used_by: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            used_by.setdefault(i, []).append(n)

    def is_const(name: str, v: float) -> bool:
        return name in consts and consts[name].size == 1 and float(consts[name].reshape(-1)[0]) == v

    outputs = {o.name for o in g.output}

    def only_user(name: str, op: str):
        users = used_by.get(name, [])
        return users[0] if len(users) == 1 and users[0].op_type == op and name not in outputs else None

    gone, instead = set(), {}
    for clip in (n for n in g.node if n.op_type == "Clip"):
        add = made_by.get(clip.input[0])
        clipped_0_6 = len(clip.input) == 3 and is_const(clip.input[1], 0.0) and is_const(clip.input[2], 6.0)
        if add is None or add.op_type != "Add" or not clipped_0_6 or only_user(add.output[0], "Clip") is None:
            continue
        xs = [i for i in add.input if not is_const(i, 3.0)]
        mul = only_user(clip.output[0], "Mul")
        if len(xs) != 1 or len(add.input) != 2 or mul is None or xs[0] not in mul.input:
            continue
        div = only_user(mul.output[0], "Div")
        if div is None or not is_const(div.input[1], 6.0):
            continue
        x, out = xs[0], div.output[0]
        instead[id(div)] = [helper.make_node("HardSigmoid", [x], [out + "_hsig"], name=div.name + "_hsig",
                                             alpha=1 / 6, beta=0.5),
                            helper.make_node("Mul", [x, out + "_hsig"], [out], name=div.name + "_hswish")]
        gone.update({id(add), id(clip), id(mul)})
    if not instead:
        return data
    nodes = [new for n in g.node if id(n) not in gone for new in instead.get(id(n), [n])]
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(without_initializer_inputs(path.read_bytes()), sess_options=session_options(1),
                                providers=["CPUExecutionProvider"])


def yolox_input(img: Image.Image, size: int = 416) -> np.ndarray:
    """YOLOX's own input: aspect kept, top-left, padded with 114, BGR 0..255 not normalised."""
    w, h = img.size
    s = min(size / w, size / h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    out = np.full((size, size, 3), 114.0, np.float32)
    out[:nh, :nw] = np.asarray(img.resize((nw, nh), Image.BILINEAR), np.float32)[..., ::-1]
    return np.ascontiguousarray(out.transpose(2, 0, 1))[None]


def yolox_scores(out: np.ndarray, size: int = 416) -> tuple[np.ndarray, np.ndarray]:
    """(boxes [N, 4] in input pixels, class scores [N, 80] = objectness x class) from YOLOX's raw head."""
    o = out.reshape(-1, out.shape[-1])
    grids, strides = [], []
    for s in (8, 16, 32):
        n = size // s
        ys, xs = np.mgrid[0:n, 0:n]
        grids.append(np.stack([xs.ravel(), ys.ravel()], 1))
        strides.append(np.full((n * n, 1), s))
    g, st = np.concatenate(grids), np.concatenate(strides)
    xy = (o[:, :2] + g) * st
    wh = np.exp(o[:, 2:4]) * st
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], 1)
    return boxes, o[:, 4:5] * o[:, 5:]


def run_config(sess, size: int, resize: str, img: Image.Image) -> np.ndarray:
    """The photo's highest score per class (what "seen" reads), after the whole pipeline has run."""
    if resize == "letterbox-topleft":
        boxes, cls = yolox_scores(sess.run(None, {"images": yolox_input(img, size)})[0], size)
    else:
        x, _ = prepare(img, size, resize, PICODET_MEAN, PICODET_STD)
        outs = sess.run(None, {"image": x})
        boxes, cls = decode_gfl(outs[:4], outs[4:], size, PICODET_STRIDES, 7)
    b, s, c = candidates(boxes, cls)
    nms(b, s, c)  # timed as the app runs it; suppression never lowers a class's highest score
    return cls.max(0)


def load_split(data: Path, split: str, limit: int) -> list[dict]:
    ds = json.loads((data / "dataset_everyday.json").read_text())
    items = [im for im in ds["images"] if im["split"] == split]
    return items[:limit] if limit else items


def ref_counts(items: list[dict], names: list[str]) -> np.ndarray:
    """[photos, classes]: how many of each photo's captions name the class."""
    col = {n: i for i, n in enumerate(names)}
    out = np.zeros((len(items), len(names)), np.int16)
    for r, im in enumerate(items):
        for s in im["sentences"]:
            for cat in mentions(s["raw"]):
                out[r, col[cat]] += 1
    return out


def measure(items: list[dict], data: Path, folder: Path, cache: Path | None) -> dict[str, np.ndarray]:
    names = [im["filename"] for im in items]
    if cache and cache.exists():
        z = np.load(cache, allow_pickle=False)
        if list(z["files"]) == names:
            return {k: z[k] for k in z.files}
    sessions = {k: session(folder / f) for k, (f, _, _) in CONFIGS.items()}
    scores = {k: np.zeros((len(items), 80), np.float32) for k in CONFIGS}
    ms = {k: np.zeros(len(items), np.float32) for k in CONFIGS}
    cpu = {k: np.zeros(len(items), np.float32) for k in CONFIGS}
    t_start = time.monotonic()
    for r, im in enumerate(items):
        with Image.open(data / "images" / im["filename"]) as f:
            img = f.convert("RGB")
        for k, (_, size, resize) in CONFIGS.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            scores[k][r] = run_config(sessions[k], size, resize, img)
            ms[k][r] = (time.perf_counter() - t0) * 1000
            cpu[k][r] = (time.thread_time() - c0) * 1000
        if (r + 1) % 200 == 0:
            print(f"detector_eval: {r + 1}/{len(items)} in {time.monotonic() - t_start:.0f} s", file=sys.stderr)
    out = {"files": np.array(names), **{f"scores:{k}": v for k, v in scores.items()},
           **{f"ms:{k}": v for k, v in ms.items()}, **{f"cpu:{k}": v for k, v in cpu.items()}}
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache, **out)
    return out


def average_precision(score: np.ndarray, truth: np.ndarray) -> float:
    """Area under the precision-recall curve of ranking photos by score (each positive's precision)."""
    if not truth.any():
        return float("nan")
    order = np.argsort(-score, kind="stable")
    t = truth[order]
    hits = np.cumsum(t)
    return float((hits[t] / (np.flatnonzero(t) + 1)).mean())


def class_figures(score: np.ndarray, truth: np.ndarray, at: float) -> dict:
    seen = score >= at
    tp = int((seen & truth).sum())
    return {"present": int(truth.sum()), "ap": average_precision(score, truth),
            "recall": tp / truth.sum() if truth.any() else float("nan"),
            "precision": tp / seen.sum() if seen.any() else float("nan"), "seen": int(seen.sum())}


def table(measured: dict[str, np.ndarray], counts: np.ndarray, names: list[str], at: float, min_refs: int,
          min_photos: int) -> dict:
    present = counts >= min_refs
    often = [i for i in range(len(names)) if present[:, i].sum() >= min_photos]
    report: dict = {"photos": len(counts), "min_refs": min_refs, "at": at,
                    "classes_in_mean": [names[i] for i in often], "configs": {}}
    for k in CONFIGS:
        s = measured[f"scores:{k}"]
        per = {names[i]: class_figures(s[:, i], present[:, i], at) for i in range(len(names))}
        mean = {m: float(np.mean([per[names[i]][m] for i in often])) if often else float("nan")
                for m in ("ap", "recall")}
        prec = [per[names[i]]["precision"] for i in often if per[names[i]]["seen"]]
        mean["precision"] = float(np.mean(prec)) if prec else float("nan")
        report["configs"][k] = {"classes": per, "mean": mean,
                                "ms_median": statistics.median(measured[f"ms:{k}"].tolist()),
                                "cpu_ms_median": statistics.median(measured[f"cpu:{k}"].tolist())}
    return report


def print_table(rep: dict) -> None:
    print(f"{rep['photos']} photos; present = at least {rep['min_refs']} of 5 captions name the class; "
          f"seen = highest score >= {rep['at']}; mean over {len(rep['classes_in_mean'])} classes present "
          "in enough photos")
    print("| class | present | " + " | ".join(f"{k} AP / R / P" for k in CONFIGS) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in CONFIGS) + " |")
    first = next(iter(rep["configs"].values()))["classes"]
    for c in SHOWN:
        cells = [rep["configs"][k]["classes"][c] for k in CONFIGS]
        print(f"| {c} | {first[c]['present']} | " + " | ".join(
            f"{f['ap']:.3f} / {f['recall']:.3f} / {f['precision']:.3f}" for f in cells) + " |")
    means = [rep["configs"][k]["mean"] for k in CONFIGS]
    print(f"| mean ({len(rep['classes_in_mean'])} classes) | | " + " | ".join(
        f"**{m['ap']:.3f}** / {m['recall']:.3f} / {m['precision']:.3f}" for m in means) + " |")
    print("| ms per picture, wall (median, 1 thread) | | " + " | ".join(
        f"{rep['configs'][k]['ms_median']:.1f}" for k in CONFIGS) + " |")
    print("| ms per picture, CPU of the thread (median) | | " + " | ".join(
        f"{rep['configs'][k]['cpu_ms_median']:.1f}" for k in CONFIGS) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--split", default="val", choices=["train", "val"])  # test is never read here
    ap.add_argument("--detectors", type=Path, default=ROOT.parent / "shared" / "models" / "detectors")
    ap.add_argument("--at", type=float, default=0.5)
    ap.add_argument("--min-refs", type=int, default=2)
    ap.add_argument("--min-photos", type=int, default=10)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    items = load_split(a.data, a.split, a.limit)
    names = coco_names(a.detectors)
    measured = measure(items, a.data, a.detectors, a.cache)
    rep = table(measured, ref_counts(items, names), names, a.at, a.min_refs, a.min_photos)
    print_table(rep)
    print(f"detector_eval: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if a.json:
        a.json.write_text(json.dumps(rep, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
