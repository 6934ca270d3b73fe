"""A folder with nothing CapDesk can read (a wrong folder, documents only) is said so, and the command fails:
a script must not take 'nothing to do' for 'done'."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.mark.slow  # 1.4 s measured on two busy cores
def test_batch_and_caption_of_a_folder_without_pictures_say_so_and_exit_one(tmp_path):
    (tmp_path / "notes.txt").write_text("not a picture\n", encoding="utf-8")
    (tmp_path / "report.docx").write_bytes(b"PK\x03\x04")
    for command in ("batch", "caption"):
        r = run_cli(command, str(tmp_path))
        assert r.returncode == 1, (command, r.stderr)
        assert "no pictures found" in r.stderr or "no images found" in r.stderr
        assert "no images in" not in r.stderr, r.stderr  # said once, not twice in other words
    assert list(tmp_path.iterdir()) and not list(tmp_path.glob("*.xmp"))


def test_embed_without_exiftool_is_refused_before_anything_is_described(tmp_path):
    import os
    import shutil as sh

    from conftest import SAMPLES

    sh.copy(SAMPLES / "chelsea.png", tmp_path / "chelsea.png")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    r = run_cli("batch", "--embed", str(tmp_path), env={"PATH": f"{bin_dir}{os.pathsep}/usr/bin/nonexistent"})
    assert r.returncode == 2 and "--embed needs exiftool" in r.stderr and "nothing was described" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "chelsea.png"]
