"""Objects in a picture from a COCO object detector: label, calibrated score and box in the picture's pixels.

The detector is a bundle of its own (``models/detector``: PP-PicoDet-S, 80 COCO classes), loaded
by every route beside the caption models: ``manifest.json`` lists each file's sha256 and size as a
caption bundle's does and every file is checked against it on load; ``labels.json`` names the
classes in plain words; ``calibration.json`` maps each raw score to the probability that people
describing the photo would name the class (``capdesk.describe.calibration``). Only calibrated
scores leave this module.

Pre- and post-processing follow PaddleDetection's PP-PicoDet: the picture resized to the input
square (stretched, or centred in a letterbox, as the manifest says), BGR, normalised per channel;
the head gives per level (strides 8, 16, 32, 64) sigmoid class scores and, per side, a distribution
over ``reg_max + 1`` distances (generalised focal loss): its expectation times the stride is the
distance from the cell's centre to that side. Per-class non-maximum suppression, then boxes are
mapped back to the upright picture's own pixels (its size before any reduced JPEG decoding).

A missing or broken bundle never stops describing: ``open_detector`` raises ``DetectorError``
naming the folder and the reason, and the describer says it once and goes on without objects.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from capdesk.describe import beside
from capdesk.describe.calibration import Calibration, CalibrationError
from capdesk.imageio import original_size
from capdesk.model import manifest as schema
from capdesk.model.bundle import Bundle, BundleError, read_limited, search_dirs
from capdesk.model.engine import load_graph, session_options

FOLDER_NAME = "detector"  # the detector's folder beside the caption models
ENV = "CAPDESK_DETECTOR"  # a detector folder to use instead of the installed one
KIND = "object-detector"
IOU = 0.45
CANDIDATE_SCORE = 0.05  # raw scores under this never become boxes (their calibrated score is tiny)
MAX_CANDIDATES = 1000  # before suppression, the highest-scoring (cell, class) pairs
MAX_OBJECTS = 100
# Calibrated score from which an object is listed in --json's "objects" (docs/detector.md: how chosen).
OBJECT_FLOOR = 0.3


class DetectorError(Exception):
    """A detector bundle that cannot be used; ``str()`` names the folder and the reason."""


@dataclass(frozen=True)
class Detection:
    label: str
    score: float  # calibrated: the probability that people describing the picture name the class
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in the upright picture's own pixels

    def to_json(self) -> dict:
        return {"label": self.label, "score": round(self.score, 3), "box": list(self.box)}


@dataclass(frozen=True)
class Geometry:
    """Where the picture lies in the input square: input = picture * scale + pad."""

    scale_x: float
    scale_y: float
    pad_x: float
    pad_y: float


# -- pre-processing ------------------------------------------------------------------------------
def prepare(img: Image.Image, size: int, resize: str, mean: tuple[float, ...], std: tuple[float, ...]
            ) -> tuple[np.ndarray, Geometry]:
    """The [1, 3, size, size] float32 input (BGR, normalised) for an RGB picture, and its geometry.

    ``resize`` "stretch": to the square regardless of aspect (PaddleDetection's own configs);
    "letterbox": aspect kept, centred, the rest filled with the mean colour (0 after normalising)."""
    w, h = img.size
    if resize == "stretch":
        nw, nh, px, py = size, size, 0, 0
    elif resize == "letterbox":
        s = min(size / w, size / h)
        nw, nh = max(1, round(w * s)), max(1, round(h * s))
        px, py = (size - nw) // 2, (size - nh) // 2
    else:
        raise ValueError(f"unknown resize mode {resize!r}")
    # uint8 HWC RGB -> CHW BGR as a view; one subtraction and one multiplication into the input itself
    a = np.asarray(img.convert("RGB").resize((nw, nh), Image.BICUBIC, reducing_gap=3.0)).transpose(2, 0, 1)[::-1]
    out = np.zeros((1, 3, size, size), np.float32)
    box = out[0, :, py:py + nh, px:px + nw]
    np.subtract(a, np.asarray(mean, np.float32)[:, None, None], out=box)
    box *= (1 / np.asarray(std, np.float32))[:, None, None]
    return out, Geometry(nw / w, nh / h, px, py)


# -- post-processing -----------------------------------------------------------------------------
def _softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def cell_centres(size: int, stride: int) -> np.ndarray:
    """[N, 2] x, y centres of a level's cells, row by row, as PicoDet's reference code places them."""
    n = math.ceil(size / stride)
    ys, xs = np.mgrid[0:n, 0:n]
    return np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float32) * stride + (stride - 1) / 2


@functools.lru_cache(maxsize=8)
def grid(size: int, strides: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every level's cell centres [N, 2] and strides [N] in the order the head gives its cells."""
    centres = [cell_centres(size, s) for s in strides]
    return np.concatenate(centres), np.concatenate([np.full(len(c), s, np.float32) for c, s in zip(centres, strides)])


def boxes_of(dists: np.ndarray, centres: np.ndarray, strides: np.ndarray, reg_max: int) -> np.ndarray:
    """[K, 4] x0 y0 x1 y1 in input pixels: per side, the expected bin of its distribution times the stride
    is the distance from the cell's centre."""
    d = (_softmax(dists.reshape(-1, 4, reg_max + 1)) * np.arange(reg_max + 1, dtype=np.float32)).sum(-1)
    d *= strides[:, None]
    return np.concatenate([centres - d[:, :2], centres + d[:, 2:]], 1)


def head_outputs(scores: list[np.ndarray], dists: list[np.ndarray], size: int, strides: tuple[int, ...],
                 reg_max: int) -> tuple[np.ndarray, np.ndarray]:
    """(class scores [N, C], box distributions [N, 4 * (reg_max + 1)]) of every level's cells, in order."""
    cls = np.concatenate([s.reshape(-1, s.shape[-1]) for s in scores])
    dist = np.concatenate([d.reshape(-1, 4 * (reg_max + 1)) for d in dists])
    n = len(grid(size, tuple(strides))[0])
    if len(cls) != n or len(dist) != n:
        raise ValueError(f"detector head gave {len(cls)} cells, expected {n} for {size} px at strides {strides}")
    return cls, dist


def decode_gfl(scores: list[np.ndarray], dists: list[np.ndarray], size: int, strides: tuple[int, ...],
               reg_max: int) -> tuple[np.ndarray, np.ndarray]:
    """(boxes [N, 4] x0 y0 x1 y1 in input pixels, class scores [N, C]) over every level's cells."""
    cls, dist = head_outputs(scores, dists, size, strides, reg_max)
    centres, cell_strides = grid(size, tuple(strides))
    return boxes_of(dist, centres, cell_strides, reg_max), cls


def iou_one(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    x0 = np.maximum(box[0], boxes[:, 0])
    y0 = np.maximum(box[1], boxes[:, 1])
    x1 = np.minimum(box[2], boxes[:, 2])
    y1 = np.minimum(box[3], boxes[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / np.maximum(area + areas - inter, 1e-9)


def nms(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou: float = IOU) -> np.ndarray:
    """Indices kept by greedy per-class non-maximum suppression, highest score first."""
    keep: list[int] = []
    # sorted(set(...)), not np.unique: that imports numpy.ma at its first call (15 ms of a cold start)
    for c in sorted(set(classes.tolist())):
        idx = np.flatnonzero(classes == c)
        idx = idx[np.argsort(-scores[idx], kind="stable")]
        while idx.size:
            best, idx = idx[0], idx[1:]
            keep.append(int(best))
            if idx.size:
                idx = idx[iou_one(boxes[best], boxes[idx]) <= iou]
    order = np.argsort(-scores[keep], kind="stable")
    return np.asarray(keep, np.int64)[order]


def candidate_cells(cls: np.ndarray, floor: float = CANDIDATE_SCORE, limit: int = MAX_CANDIDATES
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells, classes, scores) of every (cell, class) pair from ``floor`` up, at most ``limit``, best first."""
    cells, classes = np.nonzero(cls >= floor)
    scores = cls[cells, classes]
    if scores.size > limit:
        top = np.argpartition(-scores, limit - 1)[:limit]
        cells, classes, scores = cells[top], classes[top], scores[top]
    order = np.argsort(-scores, kind="stable")
    return cells[order], classes[order], scores[order]


def candidates(boxes: np.ndarray, cls: np.ndarray, floor: float = CANDIDATE_SCORE,
               limit: int = MAX_CANDIDATES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes, scores, classes) of every (cell, class) pair from ``floor`` up, at most ``limit``, best first."""
    cells, classes, scores = candidate_cells(cls, floor, limit)
    return boxes[cells], scores, classes


def to_picture(boxes: np.ndarray, geo: Geometry, work: tuple[int, int], full: tuple[int, int]) -> np.ndarray:
    """Boxes from input pixels to the picture's own pixels (``full``, the upright size of the file;
    ``work``, the size of the decoded picture the input was made from), clipped to the picture."""
    b = boxes.astype(np.float64).copy()
    b[:, [0, 2]] = (b[:, [0, 2]] - geo.pad_x) / geo.scale_x * (full[0] / work[0])
    b[:, [1, 3]] = (b[:, [1, 3]] - geo.pad_y) / geo.scale_y * (full[1] / work[1])
    b[:, [0, 2]] = b[:, [0, 2]].clip(0, full[0])
    b[:, [1, 3]] = b[:, [1, 3]].clip(0, full[1])
    return b


# -- the bundle ----------------------------------------------------------------------------------
def _check_manifest(where: Path, m: object) -> dict:
    """The detector manifest's fields this module reads, checked before any is used."""
    if not isinstance(m, dict) or m.get("kind") != KIND:
        raise DetectorError(f"{where}: manifest.json is not an object detector's (kind {KIND!r})")
    files = m.get("files")
    if not isinstance(files, dict) or not files:
        raise DetectorError(f"{where}: manifest.json lists no files")
    for fn, entry in files.items():
        if not schema.FILE_NAME.fullmatch(fn) or fn == "manifest.json":
            raise DetectorError(f"{where}: manifest lists a file {fn[:80]!r}: only plain file names are allowed")
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and schema.SHA256.fullmatch(entry["sha256"]) and isinstance(entry.get("size"), int)
                and not isinstance(entry["size"], bool) and 0 <= entry["size"] <= schema.file_cap(fn)):
            raise DetectorError(f"{where}: manifest 'files.{fn}' needs a sha256 and a size")
    inp = m.get("input")
    ok = isinstance(inp, dict) and isinstance(inp.get("size"), int) and 32 <= inp["size"] <= 1280
    ok = ok and inp.get("resize") in ("stretch", "letterbox") and inp.get("channels") == "BGR"
    ok = ok and all(isinstance(inp.get(k), list) and len(inp[k]) == 3
                    and all(isinstance(v, (int, float)) and math.isfinite(v) and v != 0 for v in inp[k])
                    for k in ("mean", "std"))
    head = m.get("head")
    ok = ok and isinstance(head, dict) and isinstance(head.get("strides"), list) and 0 < len(head["strides"]) <= 8
    ok = ok and all(isinstance(s, int) and 1 <= s <= 256 for s in head["strides"])
    ok = ok and isinstance(head.get("reg_max"), int) and 1 <= head["reg_max"] <= 64
    if not ok:
        raise DetectorError(f"{where}: manifest 'input' or 'head' is not what a PicoDet-style detector needs")
    for key in ("graph", "labels", "calibration"):
        if m.get(key) not in files:
            raise DetectorError(f"{where}: manifest '{key}' names a file that 'files' does not list")
    return m


class Detector:
    """A loaded detector: ``detect(picture)`` gives the objects from ``floor`` up, best first."""

    def __init__(self, session, labels: list[str], calibration: Calibration, manifest: dict,
                 path: Path | None = None) -> None:
        self.session = session
        self.labels = labels
        self.calibration = calibration
        self.manifest = manifest
        self.path = path
        inp, head = manifest["input"], manifest["head"]
        self.size = int(inp["size"])
        self.resize = str(inp["resize"])
        self.mean = tuple(float(v) for v in inp["mean"])
        self.std = tuple(float(v) for v in inp["std"])
        self.strides = tuple(int(s) for s in head["strides"])
        self.reg_max = int(head["reg_max"])
        self.input_name = session.get_inputs()[0].name
        self._raw_floors: dict[float, float] = {}

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", "detector"))

    def raw(self, img: Image.Image) -> tuple[np.ndarray, np.ndarray, Geometry]:
        """(raw class scores [N, C], box distributions [N, 4 * (reg_max + 1)]) of every cell, and the geometry."""
        x, geo = prepare(img, self.size, self.resize, self.mean, self.std)
        outs = self.session.run(None, {self.input_name: x})
        n = len(self.strides)
        if len(outs) != 2 * n:
            raise ValueError(f"detector gave {len(outs)} outputs, expected {2 * n}")
        cls, dist = head_outputs(outs[:n], outs[n:], self.size, self.strides, self.reg_max)
        if cls.shape[1] != len(self.labels):
            raise ValueError(f"detector scores {cls.shape[1]} classes, labels.json names {len(self.labels)}")
        return cls, dist, geo

    def raw_floor(self, floor: float) -> float:
        """The lowest raw score that any class's calibration lifts to ``floor``: nothing under it is listed,
        so nothing under it needs a box or a place in the suppression."""
        if floor not in self._raw_floors:
            grid_ = np.linspace(0.0, 1.0, 1001)
            firsts = [grid_[np.argmax(c(grid_) >= floor)] if float(c(1.0)) >= floor else 1.0
                      for c in [self.calibration.pooled, *self.calibration.classes.values()]]
            self._raw_floors[floor] = max(0.0, min(firsts) - 0.001)
        return self._raw_floors[floor]

    def detect(self, img: Image.Image, floor: float = OBJECT_FLOOR) -> list[Detection]:
        cls, dist, geo = self.raw(img)
        cells, classes, scores = candidate_cells(cls, max(CANDIDATE_SCORE, self.raw_floor(floor)))
        centres, strides = grid(self.size, self.strides)
        boxes = boxes_of(dist[cells], centres[cells], strides[cells], self.reg_max)
        keep = nms(boxes, scores, classes)
        boxes = to_picture(boxes[keep], geo, img.size, original_size(img))
        out = []
        for box, raw, k in zip(boxes, scores[keep], classes[keep]):
            label = self.labels[int(k)]
            p = float(self.calibration.apply(label, float(raw)))
            x0, y0, x1, y1 = (int(round(v)) for v in box)
            if p >= floor and x1 > x0 and y1 > y0:
                out.append(Detection(label, p, (x0, y0, x1, y1)))
        out.sort(key=lambda d: -d.score)
        return out[:MAX_OBJECTS]


def find_folder() -> Path:
    """The detector folder to load: ``$CAPDESK_DETECTOR``, else the first ``detector`` folder among
    the model folders (the user's, then the shipped ones); DetectorError when there is none."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    looked = []
    for folder, _ in search_dirs():
        cand = folder / FOLDER_NAME
        if (cand / "manifest.json").is_file():
            return cand
        looked.append(str(cand))
    raise DetectorError(f"no object detector found (looked in {', '.join(looked) or 'no model folder'})")


def open_detector(folder: Path | None = None, providers: list[str] | None = None, threads: int = 1) -> Detector:
    """The detector in ``folder`` (default: ``find_folder()``), every file checked against the manifest's
    sha256 before use; DetectorError naming the folder and the reason otherwise."""
    p = find_folder() if folder is None else Path(folder)
    if not p.is_dir():
        raise DetectorError(f"{p}: no such detector folder")
    try:
        m = _check_manifest(p, json.loads(read_limited(p / "manifest.json", schema.MANIFEST_MAX_BYTES).decode("utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise DetectorError(f"{p}: manifest.json is unreadable ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else 'empty'})") from None
    files = Bundle(p, m, "detector")
    try:
        labels = files.read_json(m["labels"])
        if not (isinstance(labels, list) and labels and all(isinstance(w, str) and w.isprintable() for w in labels)):
            raise DetectorError(f"{p}: {m['labels']} is not a list of class names")
        calibration = Calibration.from_json(files.read_json(m["calibration"]), labels)
        graph = files.read_graph(m["graph"])
        providers = providers or ["CPUExecutionProvider"]
        session = load_graph(graph, session_options(threads), providers, m["files"][m["graph"]]["sha256"])
        outs = session.get_outputs()
        classes = outs[0].shape[-1] if outs and outs[0].shape else None
        if len(outs) != 2 * len(m["head"]["strides"]) or (isinstance(classes, int) and classes != len(labels)):
            raise DetectorError(f"{p}: {m['graph']} gives {len(outs)} outputs of {classes} classes; the manifest "
                                f"and {m['labels']} say {2 * len(m['head']['strides'])} of {len(labels)}")
    except (BundleError, CalibrationError) as exc:
        raise DetectorError(str(exc) if str(exc).startswith(str(p)) else f"{p}: {exc}") from None
    except DetectorError:
        raise
    except Exception as exc:  # onnxruntime raises its own exception types
        raise DetectorError(f"{p}: {m['graph']} cannot be loaded ({str(exc).splitlines()[0]})") from None
    return Detector(session, labels, calibration, m, p)


def verify(folder: Path | None = None) -> list[str]:
    """Every problem with the detector bundle (empty when it is sound): each file against its sha256."""
    try:
        p = find_folder() if folder is None else Path(folder)
        det = open_detector(p)
    except DetectorError as exc:
        return [str(exc)]
    problems = []
    files = Bundle(p, det.manifest, "detector")
    for fn in det.manifest["files"]:
        try:
            files.check_file(fn)
        except BundleError as exc:
            problems.append(str(exc))
    return problems


_SAID: set[str] = set()  # problems already said in this process: each is said once


class ObjectFinder:
    """The detector a describer uses: loaded at the first picture, never again after a failure. A
    missing or broken bundle is said once (a warning naming the folder and the reason) and every
    picture then simply gets no objects; so does a picture the detector fails on."""

    def __init__(self, providers: list[str] | None = None, threads: int = 1, folder: Path | None = None) -> None:
        self.providers = providers
        self.threads = threads
        self.folder = folder
        self.problem: str | None = None
        self._detector: Detector | None = None
        self._tried = False
        self._lock = threading.Lock()

    def detector(self) -> Detector | None:
        with self._lock:
            if not self._tried:
                self._tried = True
                try:
                    self._detector = open_detector(self.folder, self.providers, self.threads)
                except DetectorError as exc:
                    self.problem = f"object detector skipped: {exc}; pictures are described without it"
                    if self.problem not in _SAID:
                        _SAID.add(self.problem)
                        logging.getLogger("capdesk").warning("capdesk: warning: %s", self.problem)
            return self._detector

    def find_later(self, images: list[Image.Image]) -> Future:
        """Start finding the objects of ``images`` beside the caption model (``capdesk.describe.beside``).
        The future gives each picture's objects, or None where no detector could be loaded."""
        return beside.start(lambda: self.find_all(images))

    def find_all(self, images: list[Image.Image]) -> list[list[Detection]] | None:
        """Each picture's objects; None when no detector is installed (nothing can be checked against it)."""
        if self.detector() is None:
            return None
        return [self.find(img) for img in images]

    def find(self, img: Image.Image) -> list[Detection]:
        det = self.detector()
        if det is None:
            return []
        try:
            return det.detect(img)
        except Exception as exc:  # one picture the detector cannot take must not stop its description
            why = f"object detector failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
            if why not in _SAID:
                _SAID.add(why)
                logging.getLogger("capdesk").warning("capdesk: warning: %s", why)
            return []
