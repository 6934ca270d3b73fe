from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from screen_harness import display, label_window, session_bus  # noqa: F401 (fixtures of the screen tests and journeys)
from window_harness import open_window  # noqa: F401 (the fixture every window test opens the window with)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "resources" / "samples"
SHARED_DATA = Path(os.environ.get("CAPDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_collection_finish(session: pytest.Session) -> None:
    """The real-Orca runs of the modules collected start now, in the background (tests/orca_runs.py)."""
    if session.config.option.collectonly:
        return
    import orca_runs

    orca_runs.start(item.module.__file__ for item in session.items if getattr(item, "module", None))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/journeys/ is a journey (a whole path a person takes, end to end): marked here,
    before ``-m`` selects, so that the inner loop (README) leaves them out without each file saying so."""
    journeys = Path(__file__).parent / "journeys"
    for item in items:
        if item.path.is_relative_to(journeys):
            item.add_marker(pytest.mark.journey)


def pytest_unconfigure(config: pytest.Config) -> None:
    import orca_runs

    orca_runs.stop_all()


def needs_shared_data(sub: str = ""):
    """Marks a test ``needs_data`` and skips it, saying why, where the shared data set is absent."""
    path = SHARED_DATA / sub
    skip = pytest.mark.skipif(not path.exists(), reason=f"needs the shared data set at {path} (absent here)")

    def mark(test):
        return pytest.mark.needs_data(skip(test))

    return mark


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


needs_torch = pytest.mark.skipif(not torch_available(), reason="needs torch (pip install -e '.[train]')")

# Four sample pictures with two captions each: enough for a toy training run.
TOY_CAPTIONS = {
    "chelsea.png": ["a tabby cat lying on a rug", "a striped cat looks up"],
    "coffee.png": ["a cup of coffee on a saucer", "coffee in a white cup"],
    "rocket.jpg": ["a rocket lifts off into the sky", "a rocket launch with smoke"],
    "astronaut.png": ["a woman in an orange space suit", "an astronaut smiling with a flag"],
}


def write_caption_folder(folder: Path, captions: dict[str, list[str]] = TOY_CAPTIONS) -> Path:
    """A folder of sample pictures, each with a ``.txt`` sidecar of its captions (one per line)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, caps in captions.items():
        shutil.copy(SAMPLES / name, folder / name)
        (folder / (Path(name).stem + ".txt")).write_text("\n".join(caps) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _garbage_collected_here():
    """Once a window test has made a runner, automatic garbage collection is off and the window's timer
    collects (``capdesk.gui.qtutil``); the tests that run no event loop collect after each test instead."""
    yield
    qtutil = sys.modules.get("capdesk.gui.qtutil")
    if qtutil is not None:
        qtutil.collect_on_this_thread()


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep tests away from the real user's model folder and settings."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.delenv("CAPDESK_MODELS", raising=False)


@pytest.fixture
def settings_file(tmp_path, monkeypatch):
    """The settings file of a test: an empty folder's, named to CapDesk through CAPDESK_SETTINGS."""
    p = tmp_path / "config" / "settings.json"
    monkeypatch.setenv("CAPDESK_SETTINGS", str(p))
    return p


@pytest.fixture(scope="session")
def default_bundle() -> Path:
    p = ROOT / "models" / "everyday"
    assert (p / "manifest.json").exists(), "the shipped default model bundle is missing"
    return p


@pytest.fixture(scope="session")
def confidence_rule_models(tmp_path_factory, default_bundle) -> Path:
    """A models folder whose `everyday` is the shipped one without trust (CAPDESK_MODELS wins on a name).
    Tests that follow a caption said whole as fact also run without the detector (``without_detector``):
    with it, only a caption's confirmed subject is a fact, and no sample's subject is confirmed."""
    from capdesk.model.concepts import copy_without_concepts

    folder = tmp_path_factory.mktemp("confidence-rule-models")
    copy_without_concepts(default_bundle, folder / "everyday")
    return folder


@pytest.fixture(scope="session")
def engine(default_bundle):
    from capdesk.model.engine import Engine

    return Engine(str(default_bundle), provider="cpu", beam=3)


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    # The CLI prints file names as their bytes (as ls does), and a name need not be UTF-8.
    return subprocess.run([sys.executable, "-m", "capdesk", *args], capture_output=True, text=True,
                          errors="surrogateescape", env=e, cwd=cwd or ROOT, timeout=timeout)


def png_with_claimed_size(path: Path, width: int, height: int) -> None:
    """A small valid PNG whose header claims ``width x height`` (a decompression bomb's shape)."""
    buf = Path(path)
    Image.new("L", (8, 8), 128).save(buf)
    data = bytearray(buf.read_bytes())
    ihdr = data[12:29]  # 'IHDR' + 13 bytes
    new = bytearray(ihdr)
    new[4:8] = struct.pack(">I", width)
    new[8:12] = struct.pack(">I", height)
    data[12:29] = new
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(new)) & 0xFFFFFFFF)
    buf.write_bytes(bytes(data))


@pytest.fixture
def mixed_folder(tmp_path) -> Path:
    """Real photos mixed with broken, empty, huge, non-image and oddly named files."""
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    shutil.copy(SAMPLES / "coffee.png", d / "Café ☕ überraschung.png")
    shutil.copy(SAMPLES / "rocket.jpg", d / "rocket.jpg")
    (d / "empty.jpg").write_bytes(b"")
    (d / "notes.png").write_text("this is not an image", encoding="utf-8")
    raw = (SAMPLES / "rocket.jpg").read_bytes()
    (d / "truncated.jpg").write_bytes(raw[: len(raw) // 3])
    png_with_claimed_size(d / "huge.png", 30000, 30000)
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(d / "tiny.bmp")
    return d


@pytest.fixture
def without_detector(monkeypatch, tmp_path):
    """CapDesk as where the object detector is not installed: captions stand on their trust (or confidence)
    alone, said whole."""
    monkeypatch.setenv("CAPDESK_DETECTOR", str(tmp_path / "no-detector"))
