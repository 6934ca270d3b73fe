"""``capdesk batch --ray`` on a real local Ray cluster (the CPUs of this machine): the same
sidecars, report and exit status as the plain batch, nothing written on a second run, and a
killed or interrupted run resumed where it stopped."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                reason="needs Ray: pip install -e '.[ray]'")

RAY_TIMEOUT = 600  # starting Ray on two busy cores takes seconds; a hang must still end the test


def _tree(folder):
    """Every file under ``folder`` (temporary files included) by name, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(report, folder):
    rows = json.loads(report.read_text())["rows"]
    for r in rows:  # the same picture in another folder: compare everything but where it lies
        r["path"] = os.path.relpath(r["path"], folder)
        r["sidecars"] = [os.path.relpath(s, folder) for s in r["sidecars"]]
    return rows


@pytest.fixture
def two_copies(mixed_folder, tmp_path):
    """The mixed folder (good, broken, empty, huge, non-image, oddly named pictures), grown to a few
    chunks' worth with more photos and a name that is not UTF-8, in two identical copies."""
    for i in range(14):
        src = ("chelsea.png", "coffee.png", "astronaut.png", "page.png")[i % 4]
        shutil.copy(SAMPLES / src, mixed_folder / f"more {i:02d}.png")
    shutil.copy(SAMPLES / "coffee.png", os.path.join(os.fsencode(mixed_folder), b"caf\xe9.png"))
    a, b = tmp_path / "plain", tmp_path / "ray"
    shutil.copytree(mixed_folder, a)
    shutil.copytree(mixed_folder, b)
    return a, b


@pytest.mark.slow  # 37 s measured on two busy cores
def test_ray_batch_writes_exactly_what_the_plain_batch_writes(two_copies, tmp_path):
    a, b = two_copies
    plain = run_cli("batch", str(a), "--report", str(tmp_path / "plain.json"), "-q")
    ray = run_cli("batch", str(b), "--ray", "--ray-workers", "2", "--report", str(tmp_path / "ray.json"), "-q",
                  timeout=RAY_TIMEOUT)
    assert "describing on a local Ray with 2 workers" in ray.stderr, ray.stderr
    assert ray.returncode == plain.returncode == 1, ray.stderr  # the broken pictures fail, in both
    assert _tree(b) == _tree(a)  # txt and XMP sidecars byte for byte; pictures untouched; no stray files
    assert len([n for n in _tree(b) if n.endswith(".txt")]) == 19
    assert _rows(tmp_path / "ray.json", b) == _rows(tmp_path / "plain.json", a)  # the report, row for row
    for name in ("truncated.jpg", "notes.png", "huge.png", "empty.jpg"):
        assert name in ray.stderr  # each failure said, none of them fatal

    before = {p: (b / p).stat().st_mtime_ns for p in _tree(b)}
    again = run_cli("batch", str(b), "--ray", "--report", str(tmp_path / "again.json"), "-q", timeout=RAY_TIMEOUT)
    assert again.returncode == 1, again.stderr
    assert {p: (b / p).stat().st_mtime_ns for p in _tree(b)} == before  # nothing written
    counts = json.loads((tmp_path / "again.json").read_text())["counts"]
    assert counts == {"skipped": 19, "failed": 4}


# The cat is outside the model's domain, so text would be looked for in it: slow, and beside the point here.
FAST = ("--sidecar", "txt", "--ocr", "never", "-q")


def _start(folder, *extra):
    return subprocess.Popen([sys.executable, "-m", "capdesk", "batch", str(folder), "--ray", *FAST, *extra],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _cats(tmp_path, n):
    d = tmp_path / "cats"
    d.mkdir()
    for i in range(n):
        shutil.copy(SAMPLES / "chelsea.png", d / f"cat{i:03d}.png")
    return d


@pytest.mark.slow  # 19 s measured on two busy cores
def test_killed_ray_batch_resumes_where_it_stopped(tmp_path):
    n = 48
    d = _cats(tmp_path, n)
    proc = _start(d)
    try:
        assert proc.stdout.readline().strip()  # a sidecar was written: real progress, not a guessed time
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the batch and the Ray it started, all at once
        proc.communicate(timeout=60)
    written = sorted(p for p in d.iterdir() if p.suffix == ".txt")
    assert 0 < len(written) < n
    expected = written[0].read_text(encoding="utf-8")
    assert expected.strip()
    assert all(p.read_text(encoding="utf-8") == expected for p in written)  # complete files only

    rep = tmp_path / "r.json"
    r = run_cli("batch", str(d), "--ray", *FAST, "--report", str(rep), timeout=RAY_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert json.loads(rep.read_text())["counts"] == {"skipped": len(written), "captioned": n - len(written)}
    txt = [p for p in d.iterdir() if p.suffix == ".txt"]
    assert len(txt) == n and all(p.read_text(encoding="utf-8") == expected for p in txt)


@pytest.mark.slow  # 10 s measured on two busy cores
def test_ctrl_c_stops_a_ray_batch_as_it_stops_a_plain_one(tmp_path):
    # Enough chunks that the rest cannot all arrive before Python runs the handler (it runs once
    # the main thread is back from waiting on Ray).
    n = 160
    d = _cats(tmp_path, n)
    rep = tmp_path / "r.json"
    proc = _start(d, "--report", str(rep))
    try:
        assert proc.stdout.readline().strip()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=RAY_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "stopping after the current image" in err
    report = json.loads(rep.read_text())
    assert report["interrupted"] is True and 0 < len(report["rows"]) < n
    assert all(r["status"] == "captioned" for r in report["rows"])  # nothing left undone is called failed
    assert len([p for p in d.iterdir() if p.suffix == ".txt"]) == len(report["rows"])


def test_ray_is_stopped_only_after_ray_data_s_threads_end(monkeypatch):
    """Ray Data's threads can outlive the rows they fetched (seen: two 'iter_threaded' alive after the rows
    were closed); one touching Ray after ``ray.shutdown()`` ends the process with status 1. A thread of
    that name that takes a moment to end stands in for one, since the race cannot be forced."""
    import ray

    from capdesk.describe.describer import Describer
    from capdesk.folders import ray_batch

    release = threading.Event()
    late = threading.Thread(target=release.wait, args=(30,), name="iter_threaded", daemon=True)
    late.start()
    threading.Timer(0.5, release.set).start()
    alive_at_shutdown = []
    monkeypatch.setattr(ray, "shutdown", lambda: alive_at_shutdown.append(late.is_alive()))
    run = ray_batch.RayRun(Describer(), ray_batch.RayPlan())
    monkeypatch.setattr(run.private, "close", lambda: None)
    run._ours = True  # as after ``start`` started a Ray here
    run.close()
    assert alive_at_shutdown == [False]


_CONNECT = re.compile(r'connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), '
                      r'(?:sin_addr=inet_addr\("([^"]+)"\)|.*?inet_pton\(AF_INET6, "([^"]+)")')


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (Debian: apt-get install strace)")
@pytest.mark.slow  # 23 s measured on two busy cores
def test_a_local_ray_batch_talks_to_this_machine_only(tmp_path):
    """Every connection the batch, Ray's processes and the workers make goes to this machine: not the
    cloud metadata service Ray's head asks by default, not a DNS server."""
    import ray.util

    d = _cats(tmp_path, 8)
    trace = tmp_path / "trace.txt"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), sys.executable, "-m",
                        "capdesk", "batch", str(d), "--ray", *FAST], cwd=ROOT, capture_output=True, text=True,
                       timeout=RAY_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert len([p for p in d.iterdir() if p.suffix == ".txt"]) == 8
    here = {"127.0.0.1", "::1", ray.util.get_node_ip_address()}
    seen = [((m.group(2) or m.group(3)).removeprefix("::ffff:"), int(m.group(1)))  # IPv4 as IPv6 is IPv4
            for m in _CONNECT.finditer(trace.read_text())]
    assert seen, "no connection traced: the test proves nothing"
    # Ray finds this machine's address by connect()ing a UDP socket towards 8.8.8.8:53, which sends
    # nothing (UDP has no handshake); a DNS query would go to the resolver of /etc/resolv.conf instead.
    elsewhere = {(a, port) for a, port in seen if a not in here and (a, port) != ("8.8.8.8", 53)}
    assert not elsewhere, f"connections away from this machine: {sorted(elsewhere)}"


def _session_workers(sid: int) -> list[int]:
    """The Ray workers describing for the batch whose session is ``sid`` (each batch has its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        session = int(stat.rsplit(")", 1)[1].split()[3])  # state, ppid, pgrp, session
        if b"MapWorker(MapBatches(DescribeWorker))" in cmd and session == sid:
            found.append(int(entry.name))
    return found


@pytest.mark.slow  # 15 s measured on two busy cores
def test_a_worker_that_dies_is_replaced_and_stdout_stays_one_line_per_picture(tmp_path):
    n = 48
    d = _cats(tmp_path, n)
    rep = tmp_path / "r.json"
    proc = _start(d, "--ray-workers", "2", "--report", str(rep))
    try:
        lines = [proc.stdout.readline()]
        assert lines[0].strip()
        workers = _session_workers(proc.pid)
        assert workers, "no Ray worker found for this batch"
        os.kill(workers[0], signal.SIGKILL)  # as the kernel's OOM killer would
        # Read on through the same buffered stream: communicate() would skip what readline read ahead.
        out = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=RAY_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert json.loads(rep.read_text())["counts"] == {"captioned": n}
    lines += out.splitlines(keepends=True)
    assert "A worker died" in err  # Ray's own notice, on stderr
    # Ray's notice of the dead worker went to stderr; stdout holds the pictures' lines only.
    assert len(lines) == n and all(ln.startswith(f"{d}/cat") and "\t" in ln for ln in lines), lines[:3]
    assert len([p for p in d.iterdir() if p.suffix == ".txt"]) == n
