"""Where a batch's pictures come from (PATHs, --files-from) and where their sidecars go (beside
them, or --out's mirror tree); the Ray options' usage errors. Real files, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES, run_cli


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _rows(report):
    return {os.path.basename(r["path"]): r for r in json.loads(report.read_text())["rows"]}


@pytest.mark.slow  # 3 s measured on two busy cores
def test_files_from_lists_pictures_by_line_or_nul(tmp_path):
    d = tmp_path / "store"
    (d / "deep").mkdir(parents=True)
    shutil.copy(SAMPLES / "chelsea.png", d / "deep" / "cat.png")
    shutil.copy(SAMPLES / "coffee.png", d / "cup.png")
    shutil.copy(SAMPLES / "chelsea.png", d / "not listed.png")
    odd = "line\nbreak.png"  # only a NUL-separated list can name this one
    shutil.copy(SAMPLES / "coffee.png", d / odd)
    # Relative paths are taken from the current folder; blank lines and CRLF ends are fine.
    listing = tmp_path / "list.txt"
    listing.write_bytes(b"store/deep/cat.png\r\n\n" + os.fsencode(d / "cup.png") + b"\nstore/gone.png\n")
    rep = tmp_path / "r.json"
    r = run_cli("batch", "--files-from", str(listing), "--sidecar", "txt", "-q", "--report", str(rep), cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # the missing picture is a failure, named; the others are written
    rows = _rows(rep)
    assert set(rows) == {"cat.png", "cup.png", "gone.png"}
    assert rows["gone.png"]["status"] == "failed" and "gone.png" in r.stderr
    assert (d / "deep" / "cat.txt").exists() and (d / "cup.txt").exists()
    assert not (d / "not listed.txt").exists()

    nul = tmp_path / "list0"
    nul.write_bytes(os.fsencode(d / odd) + b"\0")
    r = subprocess.run([sys.executable, "-m", "capdesk", "batch", "--files-from", "-", "--sidecar", "txt", "-q"],
                       input=nul.read_bytes(), capture_output=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (d / "line\nbreak.txt").read_text(encoding="utf-8").strip()


@pytest.mark.slow  # 2 s measured on two busy cores
def test_out_mirrors_sidecars_and_leaves_the_store_alone(tmp_path):
    store = tmp_path / "archive"
    for year, pic in (("2019", "chelsea.png"), ("2020/june", "coffee.png")):
        (store / year).mkdir(parents=True)
        shutil.copy(SAMPLES / pic, store / year / pic)
    before = {p: (store / p).read_bytes() for p in _files(store)}
    os.chmod(store / "2019", 0o555)  # a store that cannot be written (root ignores this; the rule is checked below)
    out = tmp_path / "alt"
    try:
        r = run_cli("batch", str(store / "2019"), str(store / "2020"), "-r", "--out", str(out), "-q")
    finally:
        os.chmod(store / "2019", 0o755)
    assert r.returncode == 0, r.stderr
    assert {p: (store / p).read_bytes() for p in _files(store)} == before  # nothing new, nothing changed
    # ROOT is archive/ (the deepest folder holding both inputs): its tree is mirrored under alt/.
    assert _files(out) == ["2019/chelsea.png.xmp", "2019/chelsea.txt", "2020/june/coffee.png.xmp",
                           "2020/june/coffee.txt"]
    assert "cat" in (out / "2019" / "chelsea.txt").read_text(encoding="utf-8").lower()

    # A second run writes nothing; a person's edit in the mirror is theirs and is kept.
    (out / "2019" / "chelsea.txt").write_text("Our office cat, Chelsea.\n", encoding="utf-8")
    snap = {p: (out / p).stat().st_mtime_ns for p in _files(out)}
    rep = tmp_path / "r.json"
    r = run_cli("batch", str(store / "2019"), str(store / "2020"), "-r", "--out", str(out), "-q",
                "--report", str(rep))
    assert r.returncode == 0, r.stderr
    assert {p: (out / p).stat().st_mtime_ns for p in _files(out)} == snap
    rows = _rows(rep)
    assert {n: row["status"] for n, row in rows.items()} == {"chelsea.png": "skipped", "coffee.png": "skipped"}
    assert rows["chelsea.png"]["alt_text"] == "Our office cat, Chelsea."


@pytest.mark.slow  # 2 s measured on two busy cores
def test_one_folder_mirrors_its_contents(tmp_path):
    store = tmp_path / "pics"
    store.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", store / "cat.png")
    r = run_cli("batch", str(store), "--out", str(tmp_path / "alt"), "--sidecar", "txt", "-q")
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "alt") == ["cat.txt"] and _files(store) == ["cat.png"]


@pytest.mark.parametrize("args, says", [
    ((), "name the pictures"),
    (("x", "--ray-workers", "2"), "add --ray"),
    (("x", "--ray-gpus", "1"), "add --ray"),
    (("x", "--embed", "--out", "o"), "choose one"),
    (("--files-from", "/nonexistent/list.txt"), "/nonexistent/list.txt: cannot be read"),
    (("x", "--ray-workers", "0"), "from 1 up"),
    (("x", "--ray-gpus", "-1"), "number of GPUs"),
])
def test_usage_errors_say_what_to_do(args, says):
    r = run_cli("batch", *args)
    assert r.returncode == 2
    assert says in r.stderr and "Traceback" not in r.stderr


def test_ray_option_gives_back_a_folder_it_swallowed(tmp_path):
    """'batch --ray FOLDER': argparse hands FOLDER to --ray; an address is 'auto' or has a port."""
    from capdesk.cli.folders import batch_inputs
    from capdesk.cli.main import build_parser

    ns = build_parser().parse_args(["batch", "--ray", str(tmp_path)])
    assert batch_inputs(ns) == [str(tmp_path)] and ns.ray == "local"
    for address in ("auto", "10.0.0.5:6379", "ray://head:10001"):
        ns = build_parser().parse_args(["batch", str(tmp_path), "--ray", address])
        assert batch_inputs(ns) == [str(tmp_path)] and ns.ray == address


def test_without_ray_installed_the_batch_says_how_to_get_it(tmp_path):
    shutil.copy(SAMPLES / "chelsea.png", tmp_path / "cat.png")
    code = ("import sys; sys.modules['ray'] = None\n"  # what an install without the extra looks like
            "from capdesk.cli.main import main\n"
            f"sys.exit(main(['batch', {str(tmp_path)!r}, '--ray', '-q']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2
    assert "pip install 'capdesk[ray]'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "cat.txt").exists()


def test_mirror_root_is_the_deepest_common_folder(tmp_path):
    from capdesk.folders.pathlist import mirror_root

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "c").mkdir()
    assert mirror_root([tmp_path / "a" / "b", tmp_path / "a" / "c"]) == tmp_path / "a"
    assert mirror_root([tmp_path / "a" / "b"]) == tmp_path / "a" / "b"
    assert mirror_root([tmp_path / "a" / "b" / "x.jpg"]) == tmp_path / "a" / "b"  # a file: its folder
    with pytest.raises(ValueError):
        mirror_root([])


def test_a_sidecar_outside_the_mirror_root_is_an_error_not_a_stray_file(tmp_path):
    from capdesk.sidecars.ledger import Ledger
    from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter
    from capdesk.status import WriteStatus

    root, out = tmp_path / "root", tmp_path / "out"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere.png"
    shutil.copy(SAMPLES / "chelsea.png", elsewhere)
    w = SidecarWriter(SidecarOptions(("txt",), out_dir=out, out_root=root), Ledger(tmp_path / "l.sqlite"))
    [outcome] = w.write(elsewhere, AltText("A cat.", "machine", "everyday", 0.9))
    assert outcome.action == WriteStatus.FAILED and "not under" in outcome.reason
    assert not out.exists() and not (tmp_path / "elsewhere.txt").exists()
