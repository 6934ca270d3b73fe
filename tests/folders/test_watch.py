from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES
from PIL import Image

from capdesk.folders.batch import run_batch
from capdesk.folders.watch import FolderWatcher
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import SidecarOptions, SidecarWriter


def wait_for(cond, timeout: float = 180.0, what: str = "condition") -> None:
    """Poll a condition (never a fixed sleep); fail with a message when it never holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(None, provider="cpu", beam=1, options=DescribeOptions(ocr="never"))


@pytest.fixture
def service(tmp_path, describer):
    """A watcher wired to the batch runner, as the CLI and GUI wire it; records every hand-over."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    writer = SidecarWriter(SidecarOptions(formats=("txt",)), Ledger(tmp_path / "ledger.sqlite"))
    handed: Counter = Counter()
    rows = []
    waiting: list[tuple[Path, str]] = []

    def handle(paths):
        handed.update(paths)
        rows.extend(run_batch(paths, describer, writer).rows)

    w = FolderWatcher([folder], handle, writer=writer, settle=0.3,
                      on_waiting=lambda p, why: waiting.append((p, why)))
    w.start()
    yield folder, w, handed, rows, waiting, writer
    w.stop()


def _variants(n: int, out: Path) -> list[Path]:
    base = Image.open(SAMPLES / "chelsea.png").convert("RGB").resize((96, 64))
    made = []
    for i in range(n):
        p = out / f"cat_{i:03d}.jpg"
        base.rotate(i % 360).save(p, quality=85)
        made.append(p)
    return made


@pytest.mark.slow  # 6 s measured on two busy cores
def test_burst_of_200_gives_exactly_200_sidecars(tmp_path, service):
    folder, w, handed, rows, _, _ = service
    staging = tmp_path / "staging"
    staging.mkdir()
    files = _variants(200, staging)
    for f in files:  # "copied in at once"
        shutil.copy(f, folder / f.name)
    wait_for(lambda: len(list(folder.glob("*.txt"))) == 200, what="200 sidecars")
    wait_for(lambda: w.pending() == 0, what="an idle watcher")
    assert len(handed) == 200 and max(handed.values()) == 1  # no loss, no duplicates
    assert sum(r.status == "captioned" for r in rows) == 200
    # our own sidecar writes did not come back as work, and the watcher still runs
    shutil.copy(SAMPLES / "coffee.png", folder / "late.png")
    wait_for(lambda: (folder / "late.txt").exists(), what="a late arrival")
    assert len(handed) == 201 and w._worker.is_alive()


def test_half_written_file_waits_until_complete(service):
    folder, w, handed, rows, waiting, _ = service
    data = (SAMPLES / "rocket.jpg").read_bytes()
    target = folder / "slow.jpg"
    with open(target, "wb") as fh:
        fh.write(data[: len(data) // 2])
        fh.flush()
        wait_for(lambda: sum(p == target for p, _ in waiting) >= 2, what="the watcher to look at the half file")
        assert not (folder / "slow.txt").exists() and target not in handed
        fh.write(data[len(data) // 2:])
    wait_for(lambda: (folder / "slow.txt").exists(), what="the completed file's sidecar")
    wait_for(lambda: w.pending() == 0, what="the batch to return")  # the sidecar is written before the row
    assert handed[target] == 1 and rows[-1].status == "captioned"


def test_pending_counts_images_until_the_handler_returns(tmp_path):
    """pending() == 0 must mean the handler is done, so callers can read its results then."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    entered, release = threading.Event(), threading.Event()

    def handle(paths):
        entered.set()
        release.wait(60)

    with FolderWatcher([folder], handle, settle=0.1) as w:
        shutil.copy(SAMPLES / "chelsea.png", folder / "a.png")
        wait_for(entered.is_set, what="the handler to be called")
        assert w.pending() == 1  # out of the queue, but still being handled
        release.set()
        wait_for(lambda: w.pending() == 0, what="the handler to return")


def test_renamed_image_takes_its_sidecar_along(service):
    folder, w, handed, rows, _, writer = service
    shutil.copy(SAMPLES / "chelsea.png", folder / "before.png")
    # Renamed once its batch has returned: a picture renamed while its batch is still in the handler is not
    # handed on again under its new name (test_security_watch's in-flight renames), and the sidecar exists
    # before the handler returns.
    wait_for(lambda: (folder / "before.txt").exists() and len(rows) == 1 and w.pending() == 0,
             what="first sidecar, its batch returned")
    text = (folder / "before.txt").read_text()
    (folder / "before.png").rename(folder / "after.png")
    wait_for(lambda: (folder / "after.txt").exists() and not (folder / "before.txt").exists(), what="sidecar rename")
    wait_for(lambda: w.pending() == 0 and folder / "after.png" in handed, what="the renamed image")
    assert (folder / "after.txt").read_text() == text
    assert rows[-1].status == "skipped"  # nothing re-captioned: the sidecar was already current
    (folder / "after.png").unlink()
    wait_for(lambda: w.pending() == 0, what="deletion handled")
    assert w._worker.is_alive()


@pytest.mark.slow  # 3 s measured on two busy cores
def test_watch_command_prints_captions_and_stops_cleanly(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "watch", str(folder), "--sidecar", "txt,xmp",
                             "--beam", "1"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = threading.Event()

        def read_err():
            for line in proc.stderr:
                if "watching" in line:
                    started.set()

        threading.Thread(target=read_err, daemon=True).start()
        wait_for(started.is_set, 120, "the watcher to start")
        for n in ("chelsea.png", "rocket.jpg"):
            shutil.copy(SAMPLES / n, folder / n)
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert sorted(Path(line.split("\t")[0]).name for line in lines) == ["chelsea.png", "rocket.jpg"]
        said = {Path(line.split("\t")[0]).name: line.rstrip("\n").split("\t")[1] for line in lines}
        assert "cat" in said["chelsea.png"]  # the rocket may have nothing to say: its alt text is empty
        assert (folder / "chelsea.png.xmp").exists() and (folder / "rocket.txt").exists()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 0
