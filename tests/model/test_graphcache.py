"""Graphs optimised once and kept in the user's cache (``capdesk.model.graphcache``): saved the second time a
graph is loaded (replacing an older ONNX Runtime's copy), loaded from the cache after that with the same outputs
bit for bit, a damaged entry made again, nothing written when the cache is off; a graph found sound once
mapped after that until it changes; and a plain caption imports neither Qt nor the text reader."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from PIL import Image

from capdesk.describe.detector import DetectorError, open_detector
from capdesk.model import graphcache
from capdesk.model.bundle import Bundle, resolve
from capdesk.model.engine import load_graph, session_options

GRAPH = "concepts.onnx"  # the bundle's smallest graph: 1.5 MB, a few ms to load


@pytest.fixture
def graph() -> tuple[bytes, str]:
    bundle = resolve("everyday")
    return bundle.read_verified(GRAPH), bundle.manifest["files"][GRAPH]["sha256"]


def _outputs(session) -> list[np.ndarray]:
    first = session.get_inputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in first.shape]
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    return session.run(None, {first.name: x})


def _load(data: bytes, key: str):
    return load_graph(data, session_options(1), ["CPUExecutionProvider"], key)


def test_saved_on_the_second_load_and_used_after_it_with_the_same_outputs(graph, tmp_path, monkeypatch):
    monkeypatch.setenv(graphcache.ENV, str(tmp_path))
    data, key = graph
    entry = graphcache.entry(data, session_options(1), ["CPUExecutionProvider"], key)
    assert entry is not None and entry.parent == tmp_path
    stale = tmp_path / f"{key[:32]}-99-0123456789abcdef.onnx"  # as an older ONNX Runtime left it
    stale.write_bytes(b"old")
    want = _outputs(_load(data, key))
    assert not entry.exists()  # loaded once: not worth writing
    again = _outputs(_load(data, key))
    assert entry.is_file() and not stale.exists()

    def unsaved(*args):
        raise AssertionError("the cached graph should have been loaded")

    monkeypatch.setattr(graphcache, "_load_and_save", unsaved)
    cached = _load(data, key)
    for got in (again, _outputs(cached)):
        assert all(np.array_equal(a, b) for a, b in zip(want, got))


def test_a_damaged_entry_is_made_again(graph, tmp_path, monkeypatch):
    monkeypatch.setenv(graphcache.ENV, str(tmp_path))
    data, key = graph
    want = _outputs(_load(data, key))
    entry = graphcache.entry(data, session_options(1), ["CPUExecutionProvider"], key)
    entry.write_bytes(b"\x0a\xff\xff not a graph")
    got = _outputs(_load(data, key))
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert entry.stat().st_size > 1000  # written again from the bundle's graph


def test_off_writes_nothing_and_other_providers_are_not_cached(graph, tmp_path, monkeypatch):
    data, key = graph
    assert graphcache.entry(data, session_options(1), ["CUDAExecutionProvider", "CPUExecutionProvider"]) is None
    monkeypatch.setenv(graphcache.ENV, "off")
    for _ in range(2):
        _load(data, key)
    assert graphcache.entry(data, session_options(1), ["CPUExecutionProvider"], key) is None
    assert not any(tmp_path.iterdir())


def test_a_plain_caption_imports_neither_qt_nor_the_text_reader():
    code = ("import runpy, sys\n"
            f"sys.argv = ['capdesk', 'caption', {str(SAMPLES / 'chelsea.png')!r}]\n"
            "try:\n    runpy.run_module('capdesk', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('PySide6', 'cv2', 'rapidocr_onnxruntime', 'pypdf', 'capdesk.gui', 'torch')"
            " if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "A cat." in r.stdout  # it did describe the picture
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_a_cache_that_cannot_be_written_only_keeps_it_from_helping(graph, tmp_path, monkeypatch):
    data, key = graph
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv(graphcache.ENV, str(blocked))
    want = _outputs(_load(data, key))
    for _ in range(2):
        got = _outputs(_load(data, key))
        assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert blocked.read_text() == ""


def _detector_copy(tmp_path) -> Path:
    folder = tmp_path / "detector"
    shutil.copytree(ROOT / "models" / "detector", folder)
    return folder


def test_a_graph_read_whole_once_is_then_mapped_and_its_changes_are_seen(tmp_path, monkeypatch):
    # A cold picture read and hashed 50 MB of graphs that ONNX Runtime then took from the cache: a graph
    # file found sound once, and unchanged since, is mapped instead; any write to it is seen.
    monkeypatch.setenv(graphcache.ENV, str(tmp_path / "cache"))
    folder = _detector_copy(tmp_path)
    fn = json.loads((folder / "manifest.json").read_text())["graph"]
    reads: list[str] = []
    whole = Bundle.read_verified

    def counted(self, filename):
        reads.append(filename)
        return whole(self, filename)

    monkeypatch.setattr(Bundle, "read_verified", counted)
    picture = Image.open(SAMPLES / "chelsea.png").convert("RGB")
    want = [(d.label, d.score) for d in open_detector(folder).detect(picture)]
    assert fn in reads
    reads.clear()
    assert [(d.label, d.score) for d in open_detector(folder).detect(picture)] == want
    assert fn not in reads  # mapped, not read and hashed
    # The same bytes written again: a new change time, so read and hashed again.
    data = (folder / fn).read_bytes()
    (folder / fn).write_bytes(data)
    open_detector(folder)
    assert fn in reads
    # A byte changed in place, size and all: refused, though the file was vouched for before.
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    (folder / fn).write_bytes(bytes(damaged))
    with pytest.raises(DetectorError, match="sha256"):
        open_detector(folder)


def test_the_external_data_check_is_done_once_for_the_same_bytes(graph, tmp_path, monkeypatch):
    monkeypatch.setenv(graphcache.ENV, str(tmp_path))
    data, key = graph
    walks = []
    monkeypatch.setattr(graphcache, "check_no_external_data", lambda d: walks.append(len(d)))
    graphcache.check_once(data, key)
    graphcache.check_once(data, key)
    assert len(walks) == 1
    monkeypatch.setenv(graphcache.ENV, "off")
    graphcache.check_once(data, key)
    assert len(walks) == 2
