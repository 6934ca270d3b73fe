"""Whether a picture holds text at all: the cheap test that runs on every picture under ``--ocr auto``.

It runs only the text finder of RapidOCR (PP-OCRv4's detector, the graph shipped inside the PyPI
package) with the picture's short side at ``SIDE`` pixels, and reads its probability map: text is
present where enough pixels are sure of it. Nothing of RapidOCR is imported here (its import pulls in
OpenCV, a third of a second cold); the recogniser (``capdesk.describe.ocr``) is loaded only when a
picture holds text. ``bench/bench_text_presence.py`` measures the choices below on val photos of
signs and of scenes without text.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

# The short side the finder looks at. Everyday photos are small (the val photos' short side is about 224 px).
# Measured on 16 val photos of signs and 44 without text (bench/bench_user_speed.py): at the photos' own size
# the finder missed 5 signs ("FREE HUGS", "EASTPAK"); at 256 px it finds 13 of 16 and fires on 2 of the 44;
# at 320 px 14 of 16 (the 14th then reads as nothing) for 1.6 times the work; RapidOCR's own 736 px fires on
# nearly every photo without text and costs eight times as much.
SIDE = 256
# Where text was found, the reader looks at the picture with its short side at READ_SIDE (never shrunk: a big
# photo is read at its own pixels): at 320 px it read 12 of those 13 signs, at 256 px 9.
READ_SIDE = 320
PIXEL_SURE = 0.3  # the finder's own threshold for a text pixel (RapidOCR's DBPostProcess ``thresh``)
# Fewer sure pixels than this is a speck, not a word: two small signs ("pepco Energy Services", "Amnesty
# International" on a stage banner) had 12 and 14 at SIDE; photos without text have none, or thousands
# (tiles, foliage), where the reader then reads nothing.
MIN_PIXELS = 10

_GRAPH = "models/ch_PP-OCRv4_det_infer.onnx"
_lock = threading.Lock()
_session: Any = None
_failed = False


def _graph_path() -> Path | None:
    """The detector graph inside the installed rapidocr_onnxruntime package, found without importing it."""
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _GRAPH
    return path if path.is_file() else None


def _get() -> Any:
    global _session, _failed
    with _lock:
        if _session is None and not _failed:
            path = _graph_path()
            try:
                from capdesk.model.engine import load_graph, session_options

                # One thread: a folder describes two chunks at once on two cores (capdesk.folders.batch), each test on
                # a core of its own; two threads each fought the other chunk's work (measured: 13-16
                # pictures/s against 13-15 on two busy cores). Through load_graph: optimised once, cached.
                _session = load_graph(path.read_bytes(), session_options(1), ["CPUExecutionProvider"])
            except Exception:  # missing package or graph: the caller says text reading is unavailable
                _failed = True
        return _session


def available() -> bool:
    """Whether the text finder can run (the ``ocr`` extra is installed)."""
    return _graph_path() is not None


def finder_input(img: Image.Image, side: int = SIDE) -> np.ndarray:
    """``img`` as the finder takes it: short side scaled to ``side``, each side a multiple of 32,
    BGR scaled to -1..1, [1, 3, H, W] (RapidOCR's ``DetPreProcess``)."""
    w, h = img.size
    ratio = side / min(w, h)
    size = (max(32, round(w * ratio / 32) * 32), max(32, round(h * ratio / 32) * 32))
    arr = np.asarray(img.convert("RGB").resize(size, Image.BILINEAR), np.float32)[:, :, ::-1]
    arr = arr * (2 / 255.0) - 1.0
    return np.ascontiguousarray(arr.transpose(2, 0, 1)[None])


def text_pixels(img: Image.Image, side: int = SIDE) -> int | None:
    """How many pixels of the finder's map (at ``side``) are sure they are text; None without the finder."""
    sess = _get()
    if sess is None:
        return None
    x = finder_input(img, side)
    prob = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    return int((prob > PIXEL_SURE).sum())


def has_text(img: Image.Image) -> bool | None:
    """Whether ``img`` holds text worth reading; None when the finder is not installed."""
    n = text_pixels(img)
    return None if n is None else n >= MIN_PIXELS
