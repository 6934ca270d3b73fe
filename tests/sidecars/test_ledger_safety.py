"""A person's words and the ledger: the attacks of issue 13 (items 8-15) on real files, a real
ledger and real processes (kill -9 included), each of which lost or mislabelled words before."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

from capdesk import safe_files
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter

ALT = AltText("A rocket on a launch pad.", "machine", "everyday", 0.9)


@pytest.fixture
def folder(tmp_path) -> Path:
    d = tmp_path / "pics"
    d.mkdir()
    shutil.copy(SAMPLES / "rocket.jpg", d / "photo.jpg")
    return d


def _writer(tmp_path: Path, **opts) -> SidecarWriter:
    return SidecarWriter(SidecarOptions(formats=("txt",), **opts), Ledger(tmp_path / "ledger.sqlite"))


# -- 8. an edit saved while CapDesk writes -----------------------------------------------------------
def _person_saves(p: Path, text: str, in_place: bool) -> None:
    if in_place:
        p.write_text(text)
    else:  # most editors: a new file renamed over the old one
        tmp = p.with_name(p.name + ".editor~")
        tmp.write_text(text)
        os.replace(tmp, p)


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "fallback"])
def test_edit_during_a_slow_fsync_is_kept(tmp_path, folder, monkeypatch, in_place, exchange):
    w = _writer(tmp_path)
    img = folder / "photo.jpg"
    assert [o.action for o in w.write(img, ALT)] == ["written"]  # ours, so it may be refreshed...
    side = folder / "photo.txt"
    real_fsync = os.fsync

    def slow_fsync(fd):  # ...but while the new text is being flushed, a person saves theirs
        _person_saves(side, "My own words.\n", in_place)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    if not exchange:
        monkeypatch.setattr(safe_files, "_renameat2", None)
    out = w.write(img, AltText("Something else entirely.", "machine", "everyday", 0.5))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert side.read_text() == "My own words.\n"
    assert out[0].action == "kept" and "changed while CapDesk was writing" in out[0].reason
    assert w.ownership(side) == "foreign" and w.ledger.intent(side) is None
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temp file left


def test_edit_in_the_last_instant_before_the_rename_is_put_back(tmp_path, folder, monkeypatch):
    """The narrowest window: after every check, at the rename itself. The exchange shows what was
    displaced; it is not what was checked, so it goes back."""
    if safe_files._renameat2 is None:
        pytest.skip("renameat2 is not available on this system")
    w = _writer(tmp_path)
    img = folder / "photo.jpg"
    w.write(img, ALT)
    side = folder / "photo.txt"
    real = safe_files._renameat2
    calls = []

    def racing(*args):
        if not calls:
            _person_saves(side, "Typed at the last moment.\n", in_place=False)
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(safe_files, "_renameat2", racing)
    out = w.write(img, AltText("Something else.", "machine", "everyday", 0.5))
    assert len(calls) == 2  # swapped in, then swapped back
    assert side.read_text() == "Typed at the last moment.\n" and out[0].action == "kept"


@pytest.mark.slow  # 10 s measured on two busy cores
def test_concurrent_writers_take_turns_and_keep_every_edit(tmp_path, folder):
    """Two CapDesk processes refreshing the same sidecars while a person edits some of them."""
    for i in range(30):
        shutil.copy(SAMPLES / "rocket.jpg", folder / f"img{i:02d}.jpg")
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from capdesk.sidecars.ledger import Ledger
        from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter
        w = SidecarWriter(SidecarOptions(formats=("txt",)), Ledger({str(tmp_path / 'ledger.sqlite')!r}))
        for rnd in range(15):
            for i in range(30):
                w.write(Path({str(folder)!r}) / f"img{{i:02d}}.jpg", AltText(f"run {{sys.argv[1]}} {{rnd}}"))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(k)], cwd=ROOT) for k in range(2)]
    edited = {}
    while any(p.poll() is None for p in procs):
        for i in range(0, 30, 3):
            side = folder / f"img{i:02d}.txt"
            if side.exists() and i not in edited:
                text = f"person's text {i}\n"
                _person_saves(side, text, in_place=False)
                edited[i] = text
    for p in procs:
        assert p.wait(timeout=300) == 0
    assert edited, "the writers finished before any edit could be made"
    for i, text in edited.items():
        assert (folder / f"img{i:02d}.txt").read_text() == text, f"edit {i} was lost"


# -- 9. kill -9 between the rename and the ledger -----------------------------------------------------
def test_kill_between_rename_and_ledger_commit_is_recovered(tmp_path, folder):
    ledger = tmp_path / "ledger.sqlite"
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from capdesk.sidecars.ledger import Ledger
        from capdesk.sidecars.writer import AltText, SidecarOptions, SidecarWriter
        Ledger.confirm = lambda self, path: os.kill(os.getpid(), signal.SIGKILL)  # dies right after the rename
        w = SidecarWriter(SidecarOptions(formats=("txt",)), Ledger({str(ledger)!r}))
        w.write(Path({str(folder / 'photo.jpg')!r}), AltText("Written, then killed.", "machine", "everyday", 0.9))
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == -9
    side = folder / "photo.txt"
    assert side.read_text() == "Written, then killed.\n"
    w = _writer(tmp_path)
    assert w.ownership(side) == "ours"  # not "edited": the intent recorded before the rename says so
    assert w.status(folder / "photo.jpg") == "generated" and w.is_current(folder / "photo.jpg")
    assert w.ledger.get(side)["alt_text"] == "Written, then killed." and w.ledger.intent(side) is None
    # ...and so it is refreshed like any sidecar of ours
    assert w.write(folder / "photo.jpg", ALT)[0].action == "written"


# -- 10. damaged ledgers ---------------------------------------------------------------------------------
def _state(tmp_path: Path) -> tuple[dict, Path]:
    state = tmp_path / "state"
    return {"XDG_STATE_HOME": str(state)}, state / "capdesk" / "sidecars.sqlite"


def _damage(ledger: Path, kind: str) -> None:
    ledger.parent.mkdir(parents=True, exist_ok=True)
    if kind == "garbage":
        ledger.write_bytes(os.urandom(5000))
    elif kind == "truncated":
        lg = Ledger(ledger)
        for i in range(300):
            lg.put(Path(f"/x/{i}.txt"), "0" * 64, "1:2", Path(f"/x/{i}.jpg"), ALT)
        lg._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        lg.close()
        data = ledger.read_bytes()
        ledger.write_bytes(data[: len(data) // 2])
    elif kind == "directory":
        ledger.mkdir()
        (ledger / "x").write_text("x")
    elif kind == "text":
        ledger.write_text("SQLite format 3\0 but not really")


@pytest.mark.parametrize("kind", ["garbage", "truncated", "directory", "text"])
@pytest.mark.slow  # 6 s measured on two busy cores
def test_damaged_ledger_is_set_aside_and_rebuilt(tmp_path, folder, kind):
    env, ledger = _state(tmp_path)
    _damage(ledger, kind)
    r = run_cli("batch", "-q", "--beam", "1", "--sidecar", "txt", str(folder), env=env)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert (folder / "photo.txt").exists()
    aside = list(ledger.parent.glob("sidecars.sqlite.damaged-*"))
    assert aside, "the damaged ledger was not kept"
    assert Ledger(ledger).get(folder / "photo.txt") is not None  # the rebuilt ledger works


def test_read_only_ledger_is_set_aside(tmp_path, folder):
    env, ledger = _state(tmp_path)
    Ledger(ledger).close()
    if subprocess.run(["chattr", "+i", str(ledger)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not possible here (needs root and a file system that has it)")
    try:
        if os.access(ledger, os.W_OK) and os.geteuid() != 0:
            pytest.skip("the immutable flag did not take")
        r = run_cli("batch", "-q", "--beam", "1", "--sidecar", "txt", str(folder), env=env)
        assert "Traceback" not in r.stderr
        # An immutable file cannot even be renamed: the batch refuses, in one line, and writes nothing.
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "sidecar ledger" in r.stderr
        assert not (folder / "photo.txt").exists()
    finally:
        subprocess.run(["chattr", "-i", str(ledger)])


def test_unusable_ledger_folder_refuses_in_one_line(tmp_path, folder):
    state = tmp_path / "state"
    state.write_text("a file where the state folder should be")
    r = run_cli("batch", "-q", "--beam", "1", str(folder), env={"XDG_STATE_HOME": str(state)})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "sidecar ledger" in r.stderr
    assert not (folder / "photo.txt").exists()


# -- 11. disk full on the ledger in the middle of a batch ---------------------------------------------------
@pytest.mark.slow  # 68 s measured on two busy cores
def test_ledger_full_mid_batch_fails_those_images_and_goes_on(tmp_path, default_bundle):
    from capdesk.describe.describer import Describer
    from capdesk.folders.batch import run_batch

    d = tmp_path / "many"
    d.mkdir()
    for i in range(40):
        shutil.copy(SAMPLES / "rocket.jpg", d / f"img{i:02d}.jpg")
    w = _writer(tmp_path)
    pages = w.ledger._conn.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own 'database or disk is full' (SQLITE_FULL), once the pages it has are used up.
    w.ledger._conn.execute(f"PRAGMA max_page_count = {pages}")
    res = run_batch([d], Describer(str(default_bundle), provider="cpu", beam=1), w)
    assert len(res.rows) == 40  # the batch went on to the end
    failed = [r for r in res.rows if r.status == "failed"]
    assert failed and all("full" in r.error for r in failed)
    assert len(failed) < 40, "nothing could be written at all: the test did not reach 'mid-batch'"
    for r in res.rows:  # nothing on disk that the ledger does not know
        side = Path(r.path).with_suffix(".txt")
        assert side.exists() == (r.status == "captioned")
        if side.exists():
            assert w.ownership(side) == "ours"


# -- 12. a folder where the sidecar goes ---------------------------------------------------------------------
@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.slow  # 6 s measured on two busy cores
def test_directory_at_sidecar_path_is_an_error(tmp_path, folder, overwrite):
    (folder / "photo.txt").mkdir()
    args = ["batch", "-q", "--beam", "1", "--sidecar", "txt", str(folder)] + (["--overwrite"] if overwrite else [])
    r = run_cli(*args, env=_state(tmp_path)[0])
    assert r.returncode == 1, r.stderr
    assert "photo.txt" in r.stderr and "folder" in r.stderr and "1 failed" in r.stderr
    assert (folder / "photo.txt").is_dir()


# -- 13. photo.jpg and photo.png -----------------------------------------------------------------------------
@pytest.mark.slow  # 23 s measured on two busy cores
def test_stem_collision_falls_back_to_extension_names(tmp_path, folder):
    env = _state(tmp_path)[0]
    r = run_cli("batch", "-q", "--beam", "1", "--sidecar", "txt", str(folder), env=env)  # photo.jpg alone
    assert r.returncode == 0 and (folder / "photo.txt").exists()
    shutil.copy(SAMPLES / "chelsea.png", folder / "photo.png")
    (folder / "other.txt").write_text("unrelated\n")
    r = run_cli("batch", "-q", "--beam", "1", "--sidecar", "txt", "--report", str(tmp_path / "r.json"),
                str(folder), env=env)
    assert r.returncode == 0, r.stderr
    assert "photo.txt would also be the sidecar of" in r.stderr and "photo.jpg.txt" in r.stderr
    assert not (folder / "photo.txt").exists()  # CapDesk's own, for photo.jpg alone: no longer true
    a, b = (folder / "photo.jpg.txt").read_text(), (folder / "photo.png.txt").read_text()
    rows = {Path(x["path"]).name: x for x in json.loads((tmp_path / "r.json").read_text())["rows"]}
    assert rows["photo.png"]["note"] and rows["photo.jpg"]["note"]
    r = run_cli("batch", "-q", "--beam", "1", "--sidecar", "txt", str(folder), env=env)
    assert "2 skipped" in r.stderr  # stable: nothing flips on the next run
    assert (folder / "photo.jpg.txt").read_text() == a and (folder / "photo.png.txt").read_text() == b


def test_stem_collision_keeps_a_persons_stem_sidecar(tmp_path, folder):
    shutil.copy(SAMPLES / "chelsea.png", folder / "photo.png")
    (folder / "photo.txt").write_text("Written by a person.\n")
    w = _writer(tmp_path)
    out = w.write(folder / "photo.jpg", ALT)
    assert out[0].path.name == "photo.jpg.txt" and "instead" in out[0].note
    assert (folder / "photo.txt").read_text() == "Written by a person.\n"


# -- 14. file names that are not UTF-8 ------------------------------------------------------------------------
@pytest.mark.slow  # 9 s measured on two busy cores
def test_non_utf8_names_everywhere(tmp_path):
    d = tmp_path / "latin1"
    d.mkdir()
    raw = os.fsencode(d) + b"/caf\xe9 \xff.jpg"
    shutil.copy(SAMPLES / "rocket.jpg", raw)
    env = dict(os.environ, **_state(tmp_path)[0], PYTHONIOENCODING="utf-8:strict")  # refuses bad bytes
    for fmt in ("csv", "json", "html"):
        r = subprocess.run([sys.executable, "-m", "capdesk", "batch", "-q", "--beam", "1", "--report",
                            str(tmp_path / f"r.{fmt}"), str(d)], cwd=ROOT, env=env, capture_output=True,
                           timeout=300)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode == 0 and "Traceback" not in err, err
    assert "1 skipped" in err  # the first run's sidecars were recorded, so they are current
    names = sorted(os.listdir(os.fsencode(d)))
    assert names == [b"caf\xe9 \xff.jpg", b"caf\xe9 \xff.jpg.xmp", b"caf\xe9 \xff.txt"]
    rows = json.loads((tmp_path / "r.json").read_bytes().decode("utf-8"))["rows"]
    assert os.fsencode(rows[0]["path"]) == raw
    assert raw in (tmp_path / "r.csv").read_bytes()
    page = (tmp_path / "r.html").read_bytes().decode("utf-8")
    assert "caf%E9%20%FF.jpg" in page


# -- 15. file modes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_sidecars_follow_the_umask(tmp_path, folder, umask, mode):
    old = os.umask(umask)
    try:
        w = SidecarWriter(SidecarOptions(), Ledger(tmp_path / "ledger.sqlite"))
        for o in w.write(folder / "photo.jpg", ALT):
            assert o.action == "written" and (os.stat(o.path).st_mode & 0o777) == mode
    finally:
        os.umask(old)


def test_an_existing_sidecars_mode_is_kept(tmp_path, folder):
    w = _writer(tmp_path)
    w.write(folder / "photo.jpg", ALT)
    os.chmod(folder / "photo.txt", 0o640)
    w.write(folder / "photo.jpg", AltText("New words.", "machine", "everyday", 0.9))
    assert os.stat(folder / "photo.txt").st_mode & 0o777 == 0o640


def test_ledger_keys_survive_a_reopen(tmp_path):
    lg = Ledger(tmp_path / "l.sqlite")
    name = Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xe9.txt"))
    lg.put(name, "a" * 64, "1:1", name.with_suffix(".jpg"), ALT)
    lg.close()
    rec = Ledger(tmp_path / "l.sqlite").get(name)
    assert rec["sha256"] == "a" * 64 and rec["image_path"] == str(name.with_suffix(".jpg"))
    with sqlite3.connect(tmp_path / "l.sqlite") as c:
        assert c.execute("SELECT typeof(path) FROM sidecars").fetchone()[0] == "blob"
