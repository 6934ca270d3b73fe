"""A new user's first batches: embedding twice, a hand-edited .txt beside CapDesk's XMP, a folder
that cannot be written, a long file name, and what a killed run left behind. Real files, the real
model, the real command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from capdesk.safe_files import NAME_MAX, temp_name, write_temp
from capdesk.sidecars.xmp import read_alt_text

needs_exiftool = pytest.mark.skipif(shutil.which("exiftool") is None,
                                    reason="needs exiftool (Debian: libimage-exiftool-perl)")


def _folder(tmp_path: Path, *names: str) -> Path:
    d = tmp_path / "pictures"
    d.mkdir()
    for n in names:
        shutil.copy(SAMPLES / n, d / n)
    return d


# -- 2. batch --embed, run twice ----------------------------------------------------------------
@needs_exiftool
def test_embed_twice_skips_the_embedded_picture(tmp_path):
    d = _folder(tmp_path, "chelsea.png")
    first = run_cli("batch", str(d), "-q", "--embed", "--beam", "1")
    assert first.returncode == 0, first.stderr
    backup = d / "chelsea.png_original"
    assert backup.read_bytes() == (SAMPLES / "chelsea.png").read_bytes()
    embedded = (d / "chelsea.png").read_bytes()
    second = run_cli("batch", str(d), "-q", "--embed", "--beam", "1", "--report", str(tmp_path / "r.csv"))
    assert second.returncode == 0, second.stderr
    assert "already exists" not in second.stderr and second.stdout == ""  # nothing described again
    assert "1 skipped" in second.stderr and "captioned" not in second.stderr
    assert (d / "chelsea.png").read_bytes() == embedded
    assert backup.read_bytes() == (SAMPLES / "chelsea.png").read_bytes()
    r = subprocess.run(["exiftool", "-s3", "-XMP-iptcCore:AltTextAccessibility", str(d / "chelsea.png")],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == (d / "chelsea.txt").read_text(encoding="utf-8").strip()


# -- 3. a hand-edited .txt beside CapDesk's XMP ----------------------------------------------------
def test_hand_edited_txt_is_kept_and_the_difference_said(tmp_path):
    d = _folder(tmp_path, "chelsea.png")
    assert run_cli("batch", str(d), "-q", "--beam", "1").returncode == 0
    (d / "chelsea.txt").write_text("Our cat Chelsea on the rug.\n", encoding="utf-8")
    shutil.copy(SAMPLES / "coffee.png", d / "chelsea.png")  # the picture changes
    report = tmp_path / "r.json"
    r = run_cli("batch", str(d), "-q", "--beam", "1", "--report", str(report))
    assert r.returncode == 0, r.stderr
    assert (d / "chelsea.txt").read_text(encoding="utf-8") == "Our cat Chelsea on the rug.\n"
    xmp_alt = read_alt_text(d / "chelsea.png.xmp")
    assert xmp_alt and xmp_alt != "Our cat Chelsea on the rug."
    said = [line for line in r.stderr.splitlines() if "chelsea.txt" in line]
    assert len(said) == 1 and "kept" in said[0] and "differ" in said[0] and "chelsea.png.xmp" in said[0], r.stderr
    import json

    row = json.loads(report.read_text(encoding="utf-8"))["rows"][0]
    assert "chelsea.txt" in row["note"] and row["status"] == "captioned"


def test_txt_that_agrees_is_not_reported(tmp_path):
    """A kept .txt that says what the new XMP says is no disagreement: nothing to say."""
    d = _folder(tmp_path, "chelsea.png")
    assert run_cli("batch", str(d), "-q", "--beam", "1").returncode == 0
    text = (d / "chelsea.txt").read_text(encoding="utf-8")
    (d / "chelsea.txt").write_text("  " + text, encoding="utf-8")  # edited, same words
    os.utime(d / "chelsea.png", ns=(1, 1))  # the picture counts as changed
    r = run_cli("batch", str(d), "-q", "--beam", "1")
    assert r.returncode == 0 and "differ" not in r.stderr, r.stderr


# -- 4. a folder that cannot be written ------------------------------------------------------------
def _without_write_permission() -> list[str]:
    """A command prefix under which the folder's permission bits hold (root ignores them otherwise)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to hold")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def test_read_only_folder_is_said_once_and_nothing_is_described(tmp_path):
    ro = _folder(tmp_path, "chelsea.png", "coffee.png", "rocket.jpg")
    writable = tmp_path / "other"
    writable.mkdir()
    shutil.copy(SAMPLES / "astronaut.png", writable / "astronaut.png")
    os.chmod(ro, 0o555)
    try:
        r = subprocess.run([*_without_write_permission(), sys.executable, "-m", "capdesk", "batch", str(ro),
                            str(writable), "-q", "--beam", "1"], capture_output=True, text=True, timeout=300)
    finally:
        os.chmod(ro, 0o755)
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stderr.splitlines() if str(ro) in line]
    assert len(lines) == 1, r.stderr  # one line for the folder, not one per picture
    assert "Permission denied" in lines[0] and "--out DIR" in lines[0] and lines[0].startswith("capdesk: error:")
    assert "Traceback" not in r.stderr and ".tmp" not in r.stderr and "PermissionError" not in r.stderr
    assert "3 failed" in r.stderr and "1 captioned" in r.stderr  # the rest of the batch went on
    assert r.stdout.startswith(str(writable / "astronaut.png") + "\t") and str(ro) not in r.stdout
    assert sorted(p.name for p in ro.iterdir()) == ["chelsea.png", "coffee.png", "rocket.jpg"]
    assert (writable / "astronaut.txt").exists()


def test_read_only_mount_is_said_once(tmp_path):
    """A read-only file system (a bind mount), which no permission bit shows: the same one line."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare for a read-only bind mount")
    d = _folder(tmp_path, "chelsea.png", "coffee.png")
    cmd = (f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && echo read-only-mount-made >&2 && "
           f"exec {sys.executable} -m capdesk batch {d} -q --beam 1")
    r = subprocess.run(["unshare", "-m", "sh", "-c", cmd], capture_output=True, text=True, timeout=300)
    if "read-only-mount-made" not in r.stderr:  # a container or chroot may allow no mount namespace
        pytest.skip(f"no read-only bind mount here: {r.stderr.strip()}")
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stderr.splitlines() if str(d) in line]
    assert lines == [f"capdesk: error: {d}: sidecars cannot be written in this folder (Read-only file system); "
                     "nothing in it is described; --out DIR writes the sidecars into another folder instead"]


def test_sidecar_write_failure_names_the_sidecar_not_the_temp_file(tmp_path):
    """A picture name that fits while its sidecar's does not (252 + '.xmp' > 255 bytes): the sidecar's
    own name and the reason, no Python exception name, no temporary name; the .txt is still written."""
    d = tmp_path / "long"
    d.mkdir()
    name = "b" * 248 + ".png"
    shutil.copy(SAMPLES / "chelsea.png", d / name)
    r = run_cli("batch", str(d), "-q", "--beam", "1")
    assert r.returncode == 1
    line = [x for x in r.stderr.splitlines() if x.startswith(f"capdesk: {d / name}:")]
    assert line == [f"capdesk: {d / name}: {name}.xmp: cannot be written (File name too long)"], r.stderr
    assert (d / ("b" * 248 + ".txt")).exists() and not [p for p in d.iterdir() if p.name.endswith(".tmp")]


# -- 5. a long file name -----------------------------------------------------------------------------
def test_longest_names_get_their_sidecars(tmp_path):
    d = tmp_path / "long"
    d.mkdir()
    name = "a" * 240 + ".png"  # 244 bytes: photo.png.xmp is 248, its old temporary name 262
    shutil.copy(SAMPLES / "chelsea.png", d / name)
    multibyte = "é" * 121 + ".png"  # 246 bytes in UTF-8
    shutil.copy(SAMPLES / "coffee.png", d / multibyte)
    r = run_cli("batch", str(d), "-q", "--beam", "1")
    assert r.returncode == 0, r.stderr
    assert "too long" not in r.stderr
    assert (d / (name + ".xmp")).exists() and (d / ("a" * 240 + ".txt")).exists()
    assert (d / (multibyte + ".xmp")).exists()
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp")]


def test_temp_name_fits_whenever_the_name_fits(tmp_path):
    for name in ("x" * 255, "é" * 127 + "x", "photo.txt"):
        assert len(os.fsencode(name)) <= NAME_MAX
        t = temp_name(name, 4194304, "0123abcd")
        assert len(os.fsencode(t)) <= NAME_MAX and t.startswith(".") and t.endswith(".4194304.0123abcd.tmp")
        if len(os.fsencode(name)) < 200:
            assert t == f".{name}.4194304.0123abcd.tmp"  # short names keep the whole name
    tmp = write_temp(tmp_path / ("y" * 255), b"data")
    assert tmp.read_bytes() == b"data"


# -- a killed run's leftovers --------------------------------------------------------------------
def _dead_pid() -> int:
    for pid in range(4_000_000, 3_000_000, -997):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            continue
    pytest.skip("no unused process id found")


def test_empty_temp_of_a_killed_run_is_removed_on_the_next_run(tmp_path):
    from killed_write import left_by_a_killed_write

    d = _folder(tmp_path, "chelsea.png")
    # A temp with content of a process that is gone (after a swap it may hold a person's file) leaves the
    # folder, which others may read, for the user's private recovered folder, its bytes intact.
    abandoned = left_by_a_killed_write(d / "chelsea.txt", b"A person's words.\n")
    dead = _dead_pid()
    leftover = d / temp_name("chelsea.txt", dead, "0a1b2c3d")
    leftover.write_bytes(b"")
    old_style = d / ".chelsea.png.xmp.4a0cf585.tmp"  # an older CapDesk's name: no process id in it
    old_style.write_bytes(b"")
    os.utime(old_style, (1_000_000_000, 1_000_000_000))
    # Never touched: one of a running process, a recent one without a process id, files not CapDesk's.
    kept = [d / temp_name("chelsea.txt", os.getpid(), "aaaaaaaa"), d / ".chelsea.txt.5b1dd696.tmp",
            d / ".editor-swap.tmp", d / "notes.tmp"]
    for p in kept:
        p.write_bytes(b"")
    r = run_cli("batch", str(d), "-q", "--beam", "1")
    assert r.returncode == 0, r.stderr
    assert not leftover.exists() and not old_style.exists() and not abandoned.exists()
    assert all(p.exists() for p in kept), [p.name for p in kept if not p.exists()]
    from capdesk.safe_files import recovery_folder

    recovered = list(recovery_folder().iterdir())
    assert [p.read_bytes() for p in recovered] == [b"A person's words.\n"]
    assert recovered[0].stat().st_mode & 0o777 == 0o600 and recovery_folder().stat().st_mode & 0o777 == 0o700


# -- the HTML report: no confidence beside an empty alt text ---------------------------------------------
def test_html_report_gives_no_confidence_for_an_empty_alt_text(tmp_path):
    from capdesk.folders.batch import BatchResult, Row, write_report
    from capdesk.status import RowStatus

    rows = [Row(str(tmp_path / "rocket.jpg"), RowStatus.CAPTIONED, "", 0.42, True, "everyday"),
            Row(str(tmp_path / "dog.jpg"), RowStatus.CAPTIONED, "A dog on the grass.", 0.81, False, "everyday")]
    write_report(BatchResult(rows), tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    rocket = page[page.index("<strong>rocket.jpg</strong>"):]
    rocket = rocket[:rocket.index("</li>")]
    assert "(no alt text)" in rocket and "confidence" not in rocket
    assert "confidence 0.81" in page
    # The real batch: the rocket, with nothing certain to say, gets an empty alt text and no confidence.
    d = _folder(tmp_path, "rocket.jpg")
    assert run_cli("batch", str(d), "-q", "--report", str(tmp_path / "real.html")).returncode == 0
    real = (tmp_path / "real.html").read_text(encoding="utf-8")
    assert "(no alt text)" in real and "confidence" not in real.split("<ul>")[1]
