"""A folder of iPhone photos (HEIC) is described like any other: listed, read, captioned."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, run_cli
from PIL import Image


@pytest.mark.slow  # 2.2 s measured on two busy cores
def test_a_folder_of_heic_photos_is_described(tmp_path):
    pillow_heif = pytest.importorskip("pillow_heif", reason="needs pillow-heif (pip install -e .)")
    for name in ("chelsea", "coffee"):
        pillow_heif.from_pillow(Image.open(SAMPLES / f"{name}.png").convert("RGB")).save(
            str(tmp_path / f"IMG_{name}.HEIC"), quality=90)
    r = run_cli("caption", "--json", "--ocr", "never", str(tmp_path))
    assert r.returncode == 0, r.stderr
    records = {json.loads(line)["path"].rsplit("/", 1)[-1]: json.loads(line) for line in r.stdout.splitlines()}
    assert set(records) == {"IMG_chelsea.HEIC", "IMG_coffee.HEIC"}
    said = {k: " ".join([d["description"] or ""] + [t["label"] for t in d["tags"]]).lower() for k, d in records.items()}
    assert "cat" in said["IMG_chelsea.HEIC"], said
    assert any(w in said["IMG_coffee.HEIC"] for w in ("cup", "espresso", "coffee")), said
