"""Issue 34, item 9: a picture renamed while the watcher's handler is captioning it leaves no sidecar
under its old name and is not captioned a second time under its new one.

The rename is made from inside the handler, at the worst moment (after the picture was described,
before its sidecars are written), and the test waits for the watcher to have seen it: conditions
polled with a deadline, never a fixed sleep."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import SAMPLES

from capdesk.folders.batch import run_batch, write_described
from capdesk.folders.reading import describe_paths
from capdesk.folders.watch import FolderWatcher
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import SidecarOptions, SidecarWriter


def wait_for(cond, timeout: float = 120.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(None, provider="cpu", beam=1, options=DescribeOptions(ocr="never"))


@pytest.fixture
def inbox(tmp_path):
    folder = tmp_path / "inbox"
    folder.mkdir()
    writer = SidecarWriter(SidecarOptions(formats=("txt", "xmp")), Ledger(tmp_path / "ledger.sqlite"))
    return folder, writer


def _saw_rename(w: FolderWatcher, old: Path) -> bool:
    with w._lock:
        return any(r.old == old for r in w._renames)


def test_renamed_after_describing_before_writing_moves_the_sidecars_and_captions_once(inbox, describer):
    folder, writer = inbox
    old, new = folder / "IMG_0001.png", folder / "cat on the sofa.png"
    handed: Counter = Counter()
    described: list = []
    box: dict = {}

    def handle(paths):
        handed.update(paths)
        if old in paths:
            (d,) = describe_paths(describer, paths, beam=1)  # the picture is read and described ...
            described.append(d)
            old.rename(new)  # ... a person renames it ...
            wait_for(lambda: _saw_rename(box["w"], old), what="the watcher to see the rename")
            write_described(d, writer)  # ... and its sidecars are written under the name it was handed on by
        else:
            run_batch(paths, describer, writer)

    with FolderWatcher([folder], handle, writer=writer, settle=0.2) as w:
        box["w"] = w
        shutil.copy(SAMPLES / "chelsea.png", old)
        wait_for(lambda: old in handed and w.pending() == 0, what="the batch to return")
        # Something else arrives after: the watcher still runs, and the renamed picture is not handed on again.
        shutil.copy(SAMPLES / "coffee.png", folder / "later.png")
        wait_for(lambda: (folder / "later.txt").exists() and w.pending() == 0, what="a later picture")
    sidecars = sorted(p.name for p in folder.iterdir() if p.suffix in (".txt", ".xmp"))
    assert sidecars == ["cat on the sofa.png.xmp", "cat on the sofa.txt", "later.png.xmp", "later.txt"]
    assert (folder / "cat on the sofa.txt").read_text(encoding="utf-8").strip() == described[0].description
    assert handed[old] == 1 and handed[new] == 0  # described once
    assert writer.is_current(new)  # recorded for the picture under its new name: no later run redoes it


def test_renamed_before_it_could_be_read_is_captioned_under_its_new_name(inbox, describer):
    folder, writer = inbox
    old, new = folder / "a.png", folder / "b.png"
    handed: Counter = Counter()
    box: dict = {}

    def handle(paths):
        handed.update(paths)
        if old in paths:
            old.rename(new)
            wait_for(lambda: _saw_rename(box["w"], old), what="the watcher to see the rename")
        run_batch(paths, describer, writer)  # a.png is gone: it fails, and writes nothing

    with FolderWatcher([folder], handle, writer=writer, settle=0.2) as w:
        box["w"] = w
        shutil.copy(SAMPLES / "chelsea.png", old)
        wait_for(lambda: handed[new] == 1 and w.pending() == 0, what="the new name to be captioned")
    assert sorted(p.name for p in folder.iterdir()) == ["b.png", "b.png.xmp", "b.txt"]


def test_sidecars_written_later_by_a_handler_that_hands_work_on_follow_the_rename(inbox, describer):
    """The window's way: the handler returns at once and the picture is captioned afterwards."""
    folder, writer = inbox
    old, new = folder / "x.png", folder / "y.png"
    queue: list[list[Path]] = []
    got = threading.Event()

    def handle(paths):
        queue.append(list(paths))
        got.set()

    with FolderWatcher([folder], handle, writer=writer, settle=0.2) as w:
        shutil.copy(SAMPLES / "chelsea.png", old)
        wait_for(got.is_set, what="the hand-over")
        (d,) = describe_paths(describer, queue[0], beam=1)
        old.rename(new)
        wait_for(lambda: _saw_rename(w, old), what="the watcher to see the rename")
        write_described(d, writer)  # late, under the old name
        wait_for(lambda: not (folder / "x.txt").exists() and not (folder / "x.png.xmp").exists(),
                 what="the late sidecars to follow the picture")
    assert sorted(p.name for p in folder.iterdir()) == ["y.png", "y.png.xmp", "y.txt"]


def test_a_persons_file_under_the_new_name_is_never_touched(inbox, describer):
    folder, writer = inbox
    old, new = folder / "p.png", folder / "q.png"
    box: dict = {}

    def handle(paths):
        if old in paths:
            (d,) = describe_paths(describer, paths, beam=1)
            (folder / "q.txt").write_text("My own words.\n", encoding="utf-8")
            old.rename(new)
            wait_for(lambda: _saw_rename(box["w"], old), what="the watcher to see the rename")
            write_described(d, writer)

    with FolderWatcher([folder], handle, writer=writer, settle=0.2) as w:
        box["w"] = w
        shutil.copy(SAMPLES / "chelsea.png", old)
        wait_for(lambda: (folder / "q.png.xmp").exists() and w.pending() == 0, what="the batch to return")
    assert (folder / "q.txt").read_text(encoding="utf-8") == "My own words.\n"  # never replaced
    assert sorted(p.name for p in folder.iterdir()) == ["q.png", "q.png.xmp", "q.txt"]  # no orphan p.txt
