"""RapidOCR's three sessions are made through the graph cache (``capdesk.describe.ocr``): saved the second time,
loaded from it after that, and the text read is the same as RapidOCR's own sessions read."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.describe import ocr
from capdesk.model import graphcache

pytestmark = pytest.mark.skipif(not ocr.available(), reason="needs the 'ocr' extra (rapidocr-onnxruntime)")


def _read(engine) -> list:
    page = Image.open(SAMPLES / "page.png").convert("RGB")
    small = page.crop((0, 0, page.width, 40))  # the first line, at its own pixels: enough to compare, quick
    engine.text_det.limit_side_len = small.height
    result, _ = engine(np.asarray(small)[:, :, ::-1])
    return [(text, round(float(score), 6)) for _, text, score in result or []]


def test_rapidocr_sessions_come_from_the_cache_and_read_the_same(tmp_path, monkeypatch):
    from rapidocr_onnxruntime import RapidOCR

    monkeypatch.setenv(graphcache.ENV, str(tmp_path))
    with contextlib.redirect_stdout(io.StringIO()):
        own = _read(RapidOCR())
        for _ in range(2):  # the first marks the graphs, the second saves them
            with ocr._sessions_through_the_graph_cache():
                RapidOCR()
        saved = sorted(p for p in tmp_path.glob("*.onnx"))
        assert len(saved) == 3  # finder, direction classifier, recogniser

        def unsaved(*args):
            raise AssertionError("the cached graphs should have been loaded")

        monkeypatch.setattr(graphcache, "_load_and_save", unsaved)
        with ocr._sessions_through_the_graph_cache():
            cached = RapidOCR()
    assert own and _read(cached) == own
