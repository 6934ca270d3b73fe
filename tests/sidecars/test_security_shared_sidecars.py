"""Sidecars in a folder other people can write (a team share, a group folder, /tmp): a sidecar planted as a
link to one of the user's private files is never followed, so its target is never read, copied beside the
picture or set aside there; a sidecar of gigabytes is never read whole; what CapDesk writes in place of
someone else's file is private to the user. Real files, real links, a real sparse file, real batch runs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

from capdesk.safe_files import RefusedFile, read_limited, snapshot
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import SIDECAR_MAX_BYTES, AltText, SidecarOptions, SidecarWriter, render_xmp
from capdesk.status import Ownership, WriteStatus

SECRET = "the PIN of my bank card is 4711\n"
OTHER_UID = 4321  # a user of the machine who is not the one running CapDesk


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path]:
    """(a shared folder holding pic.png, the user's private secret.txt: 0644 inside a 0700 home)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    secret = home / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o644)
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", shared / "pic.png")
    return shared, secret


def planted_report(shared: Path) -> Path:
    """The report's place: the user's own folder beside the shared one."""
    return shared.parent / "home" / "report.json"


def _leaked(folder: Path) -> list[str]:
    """The plain files in ``folder`` holding the secret (a link is never read here: its target is not there)."""
    out = []
    for p in folder.iterdir():
        if not p.is_symlink() and p.is_file() and SECRET.strip() in p.read_bytes().decode("utf-8", "replace"):
            out.append(p.name)
    return out


def _rows(report: Path) -> list[dict]:
    return json.loads(report.read_text())["rows"]


@pytest.mark.parametrize("links", [("pic.png.xmp",), ("pic.png.xmp", "pic.txt")])
@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.slow  # 1.7 s measured on two busy cores
def test_batch_never_follows_a_sidecar_planted_as_a_link_to_a_private_file(planted, overwrite, links):
    shared, secret = planted
    for name in links:
        (shared / name).symlink_to(secret)
    report = planted_report(shared)
    r = run_cli("batch", str(shared), "--sidecar", "txt,xmp", "--report", str(report),
                *(["--overwrite"] if overwrite else []))
    assert "Traceback" not in r.stderr
    assert _leaked(shared) == []
    assert not [p.name for p in shared.iterdir() if ".damaged-" in p.name]
    # The links are where they were, pointing where they pointed; the private file is as it was.
    for name in links:
        assert (shared / name).is_symlink() and os.readlink(shared / name) == str(secret)
    assert secret.read_text() == SECRET and stat.S_IMODE(secret.stat().st_mode) == 0o644
    (row,) = _rows(report)
    assert row["status"] == "failed" and "a link" in row["error"] and "pic.png.xmp" in row["error"]
    if "pic.txt" not in links:  # the picture is described all the same: its other sidecar is written
        assert (shared / "pic.txt").read_text().strip() and not (shared / "pic.txt").is_symlink()


def test_the_writer_reports_a_link_where_a_sidecar_goes_and_reads_nothing_through_it(planted, tmp_path):
    """The step batch, watch and ``screen --save`` share."""
    shared, secret = planted
    image = shared / "pic.png"
    xmp = shared / "pic.png.xmp"
    xmp.symlink_to(secret)
    writer = SidecarWriter(SidecarOptions(formats=("xmp",), overwrite=True), Ledger(tmp_path / "ledger.sqlite"))
    assert writer.ownership(xmp) is Ownership.BLOCKED
    assert snapshot(xmp) == "not-a-file:link"
    (out,) = writer.write(image, AltText("a cat on a rug"))
    assert out.action is WriteStatus.FAILED and "a link" in out.reason
    assert xmp.is_symlink() and secret.read_text() == SECRET and _leaked(shared) == []


def test_a_damaged_sidecar_swapped_for_a_link_after_the_check_is_not_read(planted, tmp_path, monkeypatch):
    """The file is read from the descriptor opened without following links, not from its path again."""
    shared, secret = planted
    image, xmp = shared / "pic.png", shared / "pic.png.xmp"
    xmp.write_bytes(b"\xff damaged")
    writer = SidecarWriter(SidecarOptions(formats=("xmp",)), Ledger(tmp_path / "ledger.sqlite"))
    import capdesk.sidecars.writer as w

    real = w.snapshot

    def swapped(path, *a, **kw):  # the planter swaps the file for a link right after CapDesk looked at it
        snap = real(path, *a, **kw)
        if Path(path) == xmp and not xmp.is_symlink():
            xmp.unlink()
            xmp.symlink_to(secret)
        return snap

    monkeypatch.setattr(w, "snapshot", swapped)
    (out,) = writer.write(image, AltText("a cat on a rug"))
    assert out.action is not WriteStatus.WRITTEN
    assert xmp.is_symlink() and secret.read_text() == SECRET and _leaked(shared) == []


def test_read_limited_refuses_links_fifos_and_oversized_files(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("x")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    with open(tmp_path / "big", "wb") as fh:
        fh.truncate(SIDECAR_MAX_BYTES + 1)
    with pytest.raises(RefusedFile, match="link"):
        read_limited(tmp_path / "link", 100)
    with pytest.raises(RefusedFile, match="FIFO"):
        read_limited(tmp_path / "fifo", 100)  # refused at once: a FIFO's open never waits for a writer
    with pytest.raises(RefusedFile, match="larger than"):
        read_limited(tmp_path / "big", SIDECAR_MAX_BYTES)
    assert read_limited(tmp_path / "link", 100, follow=True)[0] == b"x"  # a link the user named is followed


# -- an 8 GB sparse sidecar --------------------------------------------------------------------
_LIMITED = """\
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_DATA, ({limit}, {limit}))
sys.argv = ["capdesk", *sys.argv[1:]]
runpy.run_module("capdesk", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow  # 1.8 s measured on two busy cores
def test_an_8_gb_sparse_xmp_sidecar_is_not_read_and_the_batch_goes_on(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    for name in ("a.png", "b.png"):
        shutil.copy(SAMPLES / "chelsea.png", folder / name)
    huge = folder / "a.png.xmp"
    with open(huge, "wb") as fh:
        fh.truncate(8 << 30)  # sparse: 8 GB to whoever reads it, nothing on the disk
    # 2 GB of data for the whole process (a batch needs under 1 GB): reading the sidecar whole cannot fit.
    limit = 2 << 30
    script = _LIMITED.format(limit=limit)
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-c", script, "batch", str(folder), "--sidecar", "txt,xmp",
                        "--report", str(report)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert "MemoryError" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    rows = {Path(row["path"]).name: row for row in _rows(report)}
    assert rows["b.png"]["status"] == "captioned" and (folder / "b.png.xmp").exists()
    # a.png is described too: its text sidecar written, the huge file kept as it is and said to be so.
    assert (folder / "a.txt").exists()
    assert rows["a.png"]["status"] == "failed" and "too large" in rows["a.png"]["error"]
    assert huge.stat().st_size == 8 << 30


def test_a_huge_sidecar_is_kept_even_with_overwrite(tmp_path):
    image = tmp_path / "a.png"
    shutil.copy(SAMPLES / "chelsea.png", image)
    txt = tmp_path / "a.txt"
    with open(txt, "wb") as fh:
        fh.truncate(SIDECAR_MAX_BYTES + 1)
    writer = SidecarWriter(SidecarOptions(formats=("txt",), overwrite=True), Ledger(tmp_path / "ledger.sqlite"))
    assert writer.ownership(txt) is Ownership.BLOCKED
    (out,) = writer.write(image, AltText("a cat"))
    assert out.action is WriteStatus.FAILED and "too large" in out.reason
    assert txt.stat().st_size == SIDECAR_MAX_BYTES + 1


# -- someone else's file: what replaces it, or keeps its damaged bytes, is private -------------
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")


@needs_root
def test_a_damaged_sidecar_of_someone_else_is_set_aside_private(planted, tmp_path):
    shared, _ = planted
    image, xmp = shared / "pic.png", shared / "pic.png.xmp"
    xmp.write_bytes(b"\xff not an XMP packet")
    xmp.chmod(0o644)
    os.chown(xmp, OTHER_UID, OTHER_UID)
    writer = SidecarWriter(SidecarOptions(formats=("xmp",)), Ledger(tmp_path / "ledger.sqlite"))
    (out,) = writer.write(image, AltText("a cat on a rug"))
    assert out.action is WriteStatus.WRITTEN and "damaged" in out.note
    (aside,) = [p for p in shared.iterdir() if ".damaged-" in p.name]
    assert aside.read_bytes() == b"\xff not an XMP packet"  # kept, bytes intact ...
    assert stat.S_IMODE(aside.stat().st_mode) == 0o600  # ... readable by this user alone
    assert stat.S_IMODE(xmp.stat().st_mode) == 0o600


@needs_root
def test_a_sidecar_of_someone_else_replaced_with_overwrite_is_private(tmp_path):
    image = tmp_path / "a.png"
    shutil.copy(SAMPLES / "chelsea.png", image)
    txt = tmp_path / "a.txt"
    txt.write_text("their words\n")
    txt.chmod(0o644)
    os.chown(txt, OTHER_UID, OTHER_UID)
    writer = SidecarWriter(SidecarOptions(formats=("txt",), overwrite=True), Ledger(tmp_path / "ledger.sqlite"))
    (out,) = writer.write(image, AltText("a cat"))
    assert out.action is WriteStatus.WRITTEN
    assert stat.S_IMODE(txt.stat().st_mode) == 0o600 and txt.stat().st_uid == os.getuid()


def test_own_sidecars_keep_their_mode(tmp_path):
    """The user's own file keeps its mode when CapDesk writes it anew (as before)."""
    image = tmp_path / "a.png"
    shutil.copy(SAMPLES / "chelsea.png", image)
    xmp = tmp_path / "a.png.xmp"
    xmp.write_text(render_xmp(None, AltText("")))
    xmp.chmod(0o664)
    writer = SidecarWriter(SidecarOptions(formats=("xmp",)), Ledger(tmp_path / "ledger.sqlite"))
    (out,) = writer.write(image, AltText("a cat"))
    assert out.action is WriteStatus.WRITTEN
    assert stat.S_IMODE(xmp.stat().st_mode) == 0o664
