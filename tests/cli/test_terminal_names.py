"""File names are anyone's text: escape sequences in them (set the terminal's title, clear the screen) and
line breaks or tabs (a forged line of the tab-separated output) are printed escaped, never acted on."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES, run_cli

from capdesk.cli.common import shown

NAMES = ("title\x1b]0;owned\x07.png", "two\nlines.png", "tab\there.png")


def test_shown_escapes_controls_and_leaves_other_text_alone():
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb" and shown("x\ny\tz\r") == "x\\ny\\tz\\r"
    assert shown("Café ☕ 写真.png") == "Café ☕ 写真.png" and shown("\udc9b") == "\\x9b"


@pytest.mark.slow  # describes three pictures twice
def test_caption_and_batch_print_one_safe_line_per_picture(tmp_path):
    for n in NAMES:
        shutil.copy(SAMPLES / "chelsea.png", tmp_path / n)
    for args in (("caption", "--ocr", "never", str(tmp_path)), ("batch", "-q", "--ocr", "never", str(tmp_path))):
        r = run_cli(*args)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        # path, alt text and (batch) why it needs review: the fields a script splits on, never more
        assert len(lines) == 3 and all(line.count("\t") in (1, 2) for line in lines), lines
        assert "\x1b" not in r.stdout + r.stderr and "\x07" not in r.stdout + r.stderr
        assert any("title\\x1b]0;owned\\x07.png" in line for line in lines)
        assert any("two\\nlines.png" in line for line in lines) and any("tab\\there.png" in line for line in lines)
