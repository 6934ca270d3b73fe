"""`capdesk watch` says at once that it is waiting for a file it cannot read yet, instead of
staying silent until it gives up on it."""

from __future__ import annotations

import queue
import shutil
import signal
import subprocess
import sys
import threading

from conftest import ROOT, SAMPLES

LIMIT_S = 120  # a safety net for a broken watcher, never a measurement: every wait below ends on a line


def _lines(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line.rstrip("\n"))
    q.put(None)


def _until(q: queue.Queue, want, seen: list[str]) -> str:
    """The first line ``want`` accepts (every line read goes to ``seen``); fails when the stream ends
    or the safety net runs out first."""
    while True:
        try:
            line = q.get(timeout=LIMIT_S)
        except queue.Empty:
            raise AssertionError(f"no such line; saw: {seen}") from None
        if line is None:
            raise AssertionError(f"the stream ended; saw: {seen}")
        seen.append(line)
        if want(line):
            return line


def test_watch_says_it_waits_for_an_unreadable_new_file(tmp_path):
    folder = tmp_path / "watched"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "watch", str(folder), "--beam", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = queue.Queue(), queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    try:
        said: list[str] = []
        _until(err, lambda line: line.startswith("capdesk: watching"), said)
        photo = folder / "x.jpg"
        photo.write_bytes(b"")  # a copy that has begun: nothing in it yet
        waiting = _until(err, lambda line: str(photo) in line, said)
        assert waiting.startswith(f"capdesk: {photo}: waiting") and "empty file" in waiting
        assert "60 s" in waiting  # says how long before it gives up
        assert out.empty()  # nothing reported about it yet: it is waited for
        shutil.copyfile(SAMPLES / "rocket.jpg", photo)  # the copy completes
        row = _until(out, lambda line: line.startswith(str(photo)), [])
        assert "ERROR" not in row, row
        text = folder / "notes.png"
        text.write_text("this is not a picture", encoding="utf-8")
        waiting = _until(err, lambda line: str(text) in line, said)
        assert "waiting" in waiting and "not an image" in waiting
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=LIMIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    while not err.empty():
        said.append(err.get())
    assert len([line for line in said if line and str(photo) in line and "waiting" in line]) == 1  # said once
