"""Text in the image, read by RapidOCR (PP-OCR models shipped inside the PyPI package,
run by ONNX Runtime). Optional: ``pip install "capdesk[ocr]"``; without it, no text is read.

``read_if_found`` is ``--ocr auto``: the cheap test of ``capdesk.describe.text_presence`` on every
picture, and RapidOCR (loaded at the first picture that needs it) only where it found text."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import re
import tempfile
import threading
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

from capdesk.describe import text_presence

MAX_CHARS = 200
_lock = threading.Lock()
_engine = None
_failed = False
# Threads each of the reader's sessions computes on; None: RapidOCR's own (every core, ONNX Runtime's
# threads spinning between runs), the fastest for one picture full of lines (a map screenshot of 1220 x 764
# read in 3.2 s against 4.2 s on one thread). A folder reads one picture while the other chunk's caption
# work runs on the other core: there one thread each takes 80 ms of CPU for a val photo with text against
# 190 (the spinning threads), with the same words (docs/performance.md).
_threads: int | None = None


def use_threads(n: int | None) -> None:
    """How many threads the reader's sessions take, for a process that reads many pictures beside other
    work; only before the first read (the sessions are made once)."""
    global _threads
    _threads = n


def available() -> bool:
    """Whether the text reader is installed, found without importing it (its import costs a third of a
    second, for OpenCV): a broken install is found at the first read, which then reads nothing."""
    try:
        return importlib.util.find_spec("rapidocr_onnxruntime") is not None
    except (ImportError, ValueError):
        return False


def read_if_found(img: Image.Image, upscale: float | None = None, lines_out: list | None = None,
                  upright: bool = False) -> str | None:
    """``--ocr auto``: the text in ``img`` where the cheap test finds some, else None.

    The reader's finder looks at the picture with its short side at ``text_presence.READ_SIDE`` (never
    shrunk: a big photo is read at its own pixels); ``upscale`` (the user's ``--text-upscale``) overrides
    it as for ``read_text``."""
    if not text_presence.has_text(img):
        return None
    if upscale is None:
        upscale = text_presence.READ_SIDE / max(1, min(img.size))
    return read_text(img, upscale=upscale, lines_out=lines_out, upright=upright)


@contextlib.contextmanager
def _sessions_through_the_graph_cache() -> Iterator[None]:
    """While RapidOCR makes its three sessions (from its graphs' paths, with its own options), they are made
    through CapDesk's graph cache (``capdesk.model.graphcache``: optimised once, the same outputs bit for
    bit), with their external data looked for only in an empty folder, as a bundle's graphs are."""
    try:
        from rapidocr_onnxruntime.utils import infer_engine

        real = infer_engine.InferenceSession
    except (ImportError, AttributeError):  # another RapidOCR release: its sessions are made as it makes them
        yield
        return
    from capdesk.model import graphcache
    from capdesk.model.engine import EXTERNAL_DATA_FOLDER

    def cached(path, sess_options=None, providers=None):
        try:
            data = Path(path).read_bytes()
        except (OSError, TypeError):
            data = None
        if data is None or sess_options is None:
            return real(path, sess_options=sess_options, providers=providers)
        if _threads:
            sess_options.intra_op_num_threads = _threads
        names = [p if isinstance(p, str) else p[0] for p in providers or []]
        with tempfile.TemporaryDirectory(prefix="capdesk-no-external-") as empty:
            sess_options.add_session_config_entry(EXTERNAL_DATA_FOLDER, empty)
            return graphcache.session(data, sess_options, names,
                                      lambda graph, opts: real(graph, sess_options=opts, providers=providers))

    infer_engine.InferenceSession = cached
    try:
        yield
    finally:
        infer_engine.InferenceSession = real


def _get():
    global _engine, _failed
    with _lock:
        if _engine is None and not _failed:
            try:
                from rapidocr_onnxruntime import RapidOCR

                with contextlib.redirect_stdout(io.StringIO()), _sessions_through_the_graph_cache():
                    _engine = RapidOCR()
                # One line at a time: in batches of six every line is padded to the widest one's width,
                # which costs time and memory and made the recogniser read the padding ("sa le",
                # "asUIAutomationnotifications"); bench/bench_text_reading.py, docs/performance.md.
                rec = getattr(_engine, "text_rec", None)
                if rec is not None and hasattr(rec, "rec_batch_num"):
                    rec.rec_batch_num = 1
                logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            except Exception:  # missing package or models: text reading is optional
                _failed = True
        return _engine


def read_text(img: Image.Image, max_chars: int = MAX_CHARS, min_score: float = 0.6,
              upscale: float | None = None, space_words: bool = True, lines_out: list | None = None,
              upright: bool = False) -> str | None:
    """The text in ``img`` in reading order (lines top to bottom, left to right), or None.

    ``upscale``: how much the text finder may enlarge the picture, at most (1.0: it looks at the picture's
    own pixels). None keeps RapidOCR's own rule, which enlarges a picture until its short side is 736 px:
    right for phone photos of signs, six times the work for a 451x300 picture of screen text, which is
    drawn to be read at 1:1 (``bench/bench_text_reading.py`` measures both). ``space_words``: put back
    the spaces the recogniser leaves out between English words (``spaced``). ``lines_out``: given a list,
    each line read is appended to it as (text, (x0, y0, x1, y1)) in the picture's pixels, in reading order.
    ``upright``: the text is drawn upright (a screen's), so RapidOCR's angle classifier is not run: on
    lines of screen text found at 1:1 it turned every other line of a window upside down, which then read
    as "s" and was dropped (tests/screen/test_screen_whole_text.py)."""
    eng = _get()
    if eng is None:
        return None
    arr = np.asarray(img.convert("RGB"))[:, :, ::-1]  # RapidOCR expects OpenCV's BGR
    with _lock:
        det = eng.text_det
        own_side = det.limit_side_len  # RapidOCR's: a short side under it is enlarged to it
        if upscale is not None:
            det.limit_side_len = max(32, round(min(arr.shape[:2]) * upscale))
        try:
            result, _ = eng(arr, use_cls=False) if upright else eng(arr)
        finally:
            det.limit_side_len = own_side
    if not result:
        return None
    boxes = []
    for box, text, score in result:
        if float(score) < min_score or not text.strip():
            continue
        pts = np.asarray(box, np.float32)
        boxes.append((pts[:, 1].min(), pts[:, 1].max(), pts[:, 0].min(), pts[:, 0].max(), text.strip()))
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
    text = without_stray_script(" ".join(text.split()))
    if space_words:
        text = spaced(text)
    if lines_out is not None:
        for line in lines:
            said = without_stray_script(" ".join(" ".join(t for *_, t in sorted(line, key=lambda b: b[2])).split()))
            if said:
                box = (min(b[2] for b in line), min(b[0] for b in line), max(b[3] for b in line),
                       max(b[1] for b in line))
                lines_out.append((spaced(said) if space_words else said, tuple(float(v) for v in box)))
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    return text or None


# The recogniser reads Chinese as well as English, and in a screenshot of English text it reads icons as
# lone Chinese characters ("Sep 9 16:28 白 50 % 六 Balanced"). Where such characters are few among the
# letters, the words holding them are dropped; a text mostly in Chinese or Japanese is kept whole.
STRAY_SHARE = 0.2


def _foreign(ch: str) -> bool:
    return ch.isalpha() and unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL"))


def without_stray_script(text: str) -> str:
    """``text`` without its words in Chinese, Japanese or Korean script where such letters are under
    ``STRAY_SHARE`` of all letters."""
    letters = [ch for ch in text if ch.isalpha()]
    foreign = sum(_foreign(ch) for ch in letters)
    if not foreign or foreign >= STRAY_SHARE * len(letters):
        return text
    return " ".join(w for w in text.split() if not any(_foreign(ch) for ch in w))


# The recogniser (PP-OCR's Chinese-and-English model, the one RapidOCR ships) often leaves out the space
# between English words: "Gatesevendepartures delayed", "toroom". A screen reader spells such a run out or
# garbles it. A run of letters that is no English word is split where a word-frequency model (wordninja:
# English Wikipedia's unigrams) splits it into common words only; a misread word ("moming") is left as it
# is rather than cut into rare pieces ("mo ming"). bench/bench_text_reading.py measures the words it wins.
_RUN = re.compile(r"[A-Za-z]{4,}")
_STUCK_SENTENCE = re.compile(r"(?<=[a-z])([.,;:!?])(?=[A-Z][a-z])")  # "background.These"
# The most a piece may cost (wordninja's cost: the log of its frequency rank, Zipf's law) by its length:
# short pieces must be common words ("to", "on", not "mo"; "cat", not "cls"), because a misread word
# splits into short rare ones; long pieces are rarely chance ("departures", "segmentation").
_PIECE_COST = {1: 7.0, 2: 8.0, 3: 11.0, 4: 12.0, 5: 13.0, 6: 13.0}
_LONG_PIECE_COST = 14.5


@cache
def _words():
    try:
        import wordninja

        model = wordninja.DEFAULT_LANGUAGE_MODEL
    except Exception:  # not installed, or its word list missing: the text is said as read
        return None
    # The word costs are not public API; a release without them leaves the text as read.
    return model if isinstance(getattr(model, "_wordcost", None), dict) else None


def _split_run(match: re.Match) -> str:
    run = match.group(0)
    model = _words()
    costs = model._wordcost
    if run.lower() in costs:
        return run
    pieces = model.split(run)
    if len(pieces) < 2:
        return run
    for piece in pieces:
        cost = costs.get(piece.lower())
        too_rare = cost is None or cost > _PIECE_COST.get(len(piece), _LONG_PIECE_COST)
        if too_rare or (len(piece) == 1 and piece not in "aAI"):
            return run
    return " ".join(pieces)


def spaced(text: str) -> str:
    """``text`` with the spaces put back that the recogniser left out between English words."""
    text = _STUCK_SENTENCE.sub(r"\1 ", text)
    if _words() is None:
        return text
    return _RUN.sub(_split_run, text)
