"""A picture planted in a shared folder as a link to one of the user's private pictures
(``leak.png -> ~/private/bank.png``): batch and watch never describe it, so its read text never lands in
``leak.txt`` beside the link, nor (with ``--embed``) a copy of the picture. A link is followed only when it
stays inside the folders given, or when the user named it. Real links, real batch and watch runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

from capdesk.folders.reading import expand_paths, load_in_batches
from capdesk.imageio import ImageError, load_image

OUTSIDE = "outside the folders given"


@pytest.fixture
def shared(tmp_path) -> Path:
    """A shared folder: a picture of its own, a link to another inside it, and a planted link to a private one."""
    private = tmp_path / "home" / "private"
    private.mkdir(parents=True)
    private.parent.chmod(0o700)
    shutil.copy(SAMPLES / "chelsea.png", private / "bank.png")
    folder = tmp_path / "shared"
    folder.mkdir()
    shutil.copy(SAMPLES / "coffee.png", folder / "ours.png")
    (folder / "same.png").symlink_to("ours.png")  # stays inside: followed, as it always was
    (folder / "leak.png").symlink_to(private / "bank.png")
    return folder


def _report(path: Path) -> dict[str, dict]:
    return {Path(r["path"]).name: r for r in json.loads(path.read_text())["rows"]}


def _planted_untouched(folder: Path) -> None:
    names = sorted(p.name for p in folder.iterdir())
    assert not [n for n in names if n.startswith("leak.") and n != "leak.png"], names
    assert (folder / "leak.png").is_symlink()


@pytest.mark.skipif(shutil.which("exiftool") is None, reason="--embed needs exiftool")
@pytest.mark.slow  # 3.4 s measured on two busy cores
def test_batch_never_describes_a_link_leaving_the_folder(shared, tmp_path):
    report = tmp_path / "home" / "report.json"
    r = run_cli("batch", str(shared), "--sidecar", "txt,xmp", "--embed", "--report", str(report))
    assert "Traceback" not in r.stderr
    rows = _report(report)
    assert rows["leak.png"]["status"] == "failed" and OUTSIDE in rows["leak.png"]["error"]
    assert rows["ours.png"]["status"] == "captioned" and rows["same.png"]["status"] == "captioned"
    _planted_untouched(shared)
    assert (shared / "same.txt").exists()


@pytest.mark.slow  # 2.3 s measured on two busy cores
def test_a_link_the_user_names_is_followed(shared, tmp_path):
    report = tmp_path / "home" / "report.json"
    r = run_cli("batch", str(shared / "leak.png"), "--sidecar", "txt", "--report", str(report))
    assert r.returncode == 0, r.stderr
    assert _report(report)["leak.png"]["status"] == "captioned" and (shared / "leak.txt").exists()


def test_a_link_into_another_folder_given_is_followed(shared, tmp_path):
    rows = dict(expand_paths([shared, tmp_path / "home" / "private"]))
    assert rows[str(shared / "leak.png")] is None


def test_listing_names_the_link_it_does_not_follow(shared):
    rows = dict(expand_paths([shared]))
    assert OUTSIDE in rows[str(shared / "leak.png")]
    assert rows[str(shared / "ours.png")] is None and rows[str(shared / "same.png")] is None


def test_a_file_swapped_for_a_link_after_the_listing_is_not_read(shared):
    """The check is made on the descriptor the picture is decoded from, not on the path beforehand."""
    (shared / "leak.png").unlink()
    shutil.copy(SAMPLES / "rocket.jpg", shared / "late.jpg")
    listed = [p for p, err in expand_paths([shared]) if err is None]
    assert str(shared / "late.jpg") in listed
    (shared / "late.jpg").unlink()
    (shared / "late.jpg").symlink_to(shared.parent / "home" / "private" / "bank.png")
    got = {p: err for chunk in load_in_batches(listed, load_image, 8) for p, _, err in chunk}
    assert got[str(shared / "late.jpg")] is not None and OUTSIDE in got[str(shared / "late.jpg")]
    assert got[str(shared / "ours.png")] is None
    with pytest.raises(ImageError, match=OUTSIDE):
        load_image(next(p for p in listed if p.endswith("late.jpg")))


def test_a_fifo_named_as_a_picture_is_refused_at_once(tmp_path):
    fifo = tmp_path / "stuck.png"
    os.mkfifo(fifo)
    with pytest.raises(ImageError, match="not a regular file"):
        load_image(fifo)  # opened without waiting for a writer that never comes


def _wait(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow  # 4.6 s measured on two busy cores
def test_watch_never_describes_a_link_leaving_the_folder(shared):
    for name in ("leak.png", "same.png", "ours.png"):
        (shared / name).unlink()
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "watch", str(shared), "--sidecar", "txt", "--json",
                             "--beam", "1"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows: list[dict] = []
    started = threading.Event()

    def read_err() -> None:
        for line in proc.stderr:
            if "watching" in line:
                started.set()

    def read_out() -> None:
        for line in proc.stdout:
            if line.startswith("{"):
                rows.append(json.loads(line))

    threading.Thread(target=read_err, daemon=True).start()
    threading.Thread(target=read_out, daemon=True).start()
    try:
        _wait(started.is_set, 120, "the watcher to start")
        (shared / "leak.png").symlink_to(shared.parent / "home" / "private" / "bank.png")
        time.sleep(1.5)  # the link is seen and settles first ...
        shutil.copy(SAMPLES / "coffee.png", shared / "later.png")  # ... then a picture of the folder's own
        _wait(lambda: any(Path(r["path"]).name == "later.png" for r in rows), 180, "the later picture's row")
        _wait(lambda: any(Path(r["path"]).name == "leak.png" for r in rows), 60, "the link's row")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    by_name = {Path(r["path"]).name: r for r in rows}
    assert by_name["leak.png"]["status"] == "failed" and OUTSIDE in by_name["leak.png"]["error"]
    assert (shared / "later.txt").exists()
    _planted_untouched(shared)
