"""The command line as a new user meets it: output piped into `head`, file names that are not
UTF-8, and help that helps."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

LIMIT_S = 300  # a safety net for a hung command, never a measurement


def _into_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    """``capdesk ARGS`` with its stdout a pipe whose reader is already gone (as after `| head` has
    read its lines): every write fails, whatever the timing."""
    r_fd, w_fd = os.pipe()
    os.close(r_fd)
    try:
        return subprocess.run([sys.executable, "-m", "capdesk", *args], stdout=w_fd, stderr=subprocess.PIPE,
                              text=True, errors="surrogateescape", cwd=ROOT, timeout=LIMIT_S)
    finally:
        os.close(w_fd)


def _quiet_stop(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 141, (r.returncode, r.stderr)  # 128 + SIGPIPE, as `yes | head` leaves it
    for word in ("Traceback", "BrokenPipe", "Exception ignored", "Errno 32"):
        assert word not in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["models", "list", "--json"], ["models", "list"], ["models", "verify"],
                                  ["caption", "--beam", "1", str(SAMPLES / "rocket.jpg")],
                                  ["caption", "--json", "--beam", "1", str(SAMPLES / "rocket.jpg")]])
def test_reader_gone_ends_quietly(args):
    _quiet_stop(_into_closed_pipe(*args))


def test_batch_reader_gone_ends_quietly(tmp_path):
    shutil.copy(SAMPLES / "chelsea.png", tmp_path / "chelsea.png")
    _quiet_stop(_into_closed_pipe("batch", str(tmp_path), "-q", "--beam", "1"))
    assert (tmp_path / "chelsea.txt").exists()  # what was done before the reader went is whole


def test_watch_reader_gone_stops_watching(tmp_path):
    """Nobody reads the captions any more: the watcher stops instead of captioning for no one."""
    folder = tmp_path / "w"
    folder.mkdir()
    r_fd, w_fd = os.pipe()
    os.close(r_fd)
    proc = subprocess.Popen([sys.executable, "-m", "capdesk", "watch", str(folder), "--beam", "1"], cwd=ROOT,
                            stdout=w_fd, stderr=subprocess.PIPE, text=True)
    os.close(w_fd)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    said = []
    try:
        while True:
            line = lines.get(timeout=LIMIT_S)
            assert line is not None, said
            said.append(line)
            if line.startswith("capdesk: watching"):
                break
        shutil.copy(SAMPLES / "chelsea.png", folder / "chelsea.png")
        assert proc.wait(timeout=LIMIT_S) == 141
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    while (line := lines.get(timeout=LIMIT_S)) is not None:
        said.append(line)
    text = "".join(said)
    assert "stopped watching" in text and "Traceback" not in text and "Broken pipe" not in text, text


def test_names_that_are_not_utf8_are_shown_as_their_bytes(tmp_path):
    """As ls shows them (the bytes themselves), not as Python's escape (caf\\udce9)."""
    name = os.fsdecode(b"caf\xe9.jpg")
    (tmp_path / name).write_bytes(b"")  # an empty file: its error line names it on stderr
    for args in (["caption", str(tmp_path)], ["batch", str(tmp_path), "-q"]):
        r = subprocess.run([sys.executable, "-m", "capdesk", *args], capture_output=True, cwd=ROOT, timeout=LIMIT_S)
        assert r.returncode == 1, r.stderr
        assert os.fsencode(str(tmp_path)) + b"/caf\xe9.jpg: empty file (0 bytes)" in r.stderr, r.stderr
        assert b"\\udce9" not in r.stderr and b"\\xe9" not in r.stderr


def _option_help(text: str, option: str) -> str:
    """The help of ``option`` in an argparse help text: its line and the lines continuing it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(option))
    said = [lines[start].strip()[len(option):]]
    for line in lines[start + 1:]:
        if not line.startswith(" " * 10) or line.strip().startswith("-"):
            break
        said.append(line)
    return " ".join(" ".join(said).split())


def test_help_texts_are_whole_and_current():
    caption = run_cli("caption", "--help").stdout
    ocr = _option_help(caption, "--ocr {auto,always,never}")
    assert ocr.startswith("read text") and "extra" not in ocr  # text reading is part of every install
    listing = run_cli("models", "list", "--help")
    assert listing.returncode == 0 and _option_help(listing.stdout, "--json")  # the option says what it gives


def test_stderr_keeps_other_characters_in_a_narrow_locale(tmp_path):
    """A terminal whose encoding lacks a character (LANG=C without UTF-8 mode): an escape, no crash."""
    name = "Café ☕.jpg"
    (tmp_path / name).write_bytes(b"")
    env = {**os.environ, "PYTHONUTF8": "0", "LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "ascii"}
    r = subprocess.run([sys.executable, "-m", "capdesk", "caption", str(tmp_path)], capture_output=True, cwd=ROOT,
                       timeout=LIMIT_S, env=env)
    assert r.returncode == 1 and b"Traceback" not in r.stderr, r.stderr
    assert b"empty file" in r.stderr and Path(tmp_path).name.encode() in r.stderr
