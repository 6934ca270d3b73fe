"""Text in the image, read by RapidOCR (PP-OCR models shipped inside the PyPI package,
run by ONNX Runtime). Optional: ``pip install "capdesk[ocr]"``; without it, no text is read."""

from __future__ import annotations

import contextlib
import io
import logging
import threading

import numpy as np
from PIL import Image

MAX_CHARS = 200
_lock = threading.Lock()
_engine = None
_failed = False


def available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _get():
    global _engine, _failed
    with _lock:
        if _engine is None and not _failed:
            try:
                from rapidocr_onnxruntime import RapidOCR

                with contextlib.redirect_stdout(io.StringIO()):
                    _engine = RapidOCR()
                logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            except Exception:  # missing package or models: text reading is optional
                _failed = True
        return _engine


def read_text(img: Image.Image, max_chars: int = MAX_CHARS, min_score: float = 0.6) -> str | None:
    """The text in ``img`` in reading order (lines top to bottom, left to right), or None."""
    eng = _get()
    if eng is None:
        return None
    arr = np.asarray(img.convert("RGB"))[:, :, ::-1]  # RapidOCR expects OpenCV's BGR
    with _lock:
        result, _ = eng(arr)
    if not result:
        return None
    boxes = []
    for box, text, score in result:
        if float(score) < min_score or not text.strip():
            continue
        pts = np.asarray(box, np.float32)
        boxes.append((pts[:, 1].min(), pts[:, 1].max(), pts[:, 0].min(), text.strip()))
    if not boxes:
        return None
    boxes.sort(key=lambda b: (b[0], b[2]))
    lines: list[list[tuple]] = []
    for b in boxes:  # boxes whose vertical extents overlap by half belong to one line
        if lines:
            top, bottom = lines[-1][0][0], lines[-1][0][1]
            overlap = min(bottom, b[1]) - max(top, b[0])
            if overlap > 0.5 * min(bottom - top, b[1] - b[0]):
                lines[-1].append(b)
                continue
        lines.append([b])
    text = " ".join(" ".join(t for *_, t in sorted(line, key=lambda b: b[2])) for line in lines)
    text = " ".join(text.split())
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    return text or None
