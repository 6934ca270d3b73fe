"""TIFFs a new user meets: several pages (the first is described, the long description says how
many there are), and the floating-point, plane-by-plane RGB that scientific software writes
(scikit-image's ``multipage_rgb.tif``), which Pillow cannot read."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, run_cli
from PIL import Image

from capdesk.sidecars.xmp import read_ext_descr


def _caption(*paths: Path) -> dict[str, dict]:
    r = run_cli("caption", "--json", "--beam", "1", *map(str, paths))
    assert r.returncode == 0, r.stderr
    return {Path(d["path"]).name: d for d in map(json.loads, r.stdout.splitlines())}


def test_multipage_tiff_describes_its_first_page_and_says_how_many(tmp_path):
    d = tmp_path / "scans"
    d.mkdir()
    pages = [Image.open(SAMPLES / n).convert("RGB") for n in ("chelsea.png", "coffee.png", "rocket.jpg")]
    pages[0].save(d / "three.tif", save_all=True, append_images=pages[1:])
    assert Image.open(d / "three.tif").n_frames == 3
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    got = _caption(d / "three.tif", d / "chelsea.png")
    for key in ("caption", "description", "tags"):  # the first page is the picture described
        assert got["three.tif"][key] == got["chelsea.png"][key]
    r = run_cli("batch", str(d), "-q", "--beam", "1", "--ext-descr")
    assert r.returncode == 0, r.stderr
    long = read_ext_descr(d / "three.tif.xmp")
    assert "The file has 3 pages; this describes the first." in long
    assert "pages" not in read_ext_descr(d / "chelsea.png.xmp")  # a one-page picture says nothing of pages


def _planar_float_tiff(path: Path, pages: list[np.ndarray], order: str) -> None:
    """A TIFF as tifffile writes scikit-image's multipage_rgb.tif: per page three planes of 64-bit
    floating-point samples (PlanarConfiguration 2, SampleFormat 3), uncompressed."""
    short, long_ = 3, 4
    out = bytearray((b"II*\0" if order == "<" else b"MM\0*") + b"\0\0\0\0")
    ifd_offsets = []
    for page in pages:
        h, w, _ = page.shape
        planes = []
        for c in range(3):
            planes.append(len(out))
            out += np.ascontiguousarray(page[:, :, c]).astype(order + "f8").tobytes()
        extra = len(out)
        out += struct.pack(order + "3H", 64, 64, 64) + b"\0\0"  # BitsPerSample
        out += struct.pack(order + "3I", *planes)  # StripOffsets
        out += struct.pack(order + "3I", *(h * w * 8,) * 3)  # StripByteCounts
        out += struct.pack(order + "3H", 3, 3, 3) + b"\0\0"  # SampleFormat: floating point
        entries = [(256, long_, 1, struct.pack(order + "I", w)), (257, long_, 1, struct.pack(order + "I", h)),
                   (258, short, 3, struct.pack(order + "I", extra)), (259, short, 1, struct.pack(order + "HH", 1, 0)),
                   (262, short, 1, struct.pack(order + "HH", 2, 0)),
                   (273, long_, 3, struct.pack(order + "I", extra + 8)),
                   (277, short, 1, struct.pack(order + "HH", 3, 0)), (278, long_, 1, struct.pack(order + "I", h)),
                   (279, long_, 3, struct.pack(order + "I", extra + 20)),
                   (284, short, 1, struct.pack(order + "HH", 2, 0)),
                   (339, short, 3, struct.pack(order + "I", extra + 32))]
        if len(out) % 2:
            out += b"\0"
        ifd_offsets.append(len(out))
        out += struct.pack(order + "H", len(entries))
        for tag, kind, count, value in entries:
            out += struct.pack(order + "HHI", tag, kind, count) + value
        out += b"\0\0\0\0"  # the next page's IFD: filled in below
    struct.pack_into(order + "I", out, 4, ifd_offsets[0])
    for here, nxt in zip(ifd_offsets, ifd_offsets[1:]):
        struct.pack_into(order + "I", out, here + 2 + 12 * 11, nxt)
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("order", ["<", ">"])
def test_floating_point_planar_tiff_is_read(tmp_path, order):
    cat = np.asarray(Image.open(SAMPLES / "chelsea.png").convert("RGB"), np.float64) / 255
    coffee = np.asarray(Image.open(SAMPLES / "coffee.png").convert("RGB"), np.float64) / 255
    tif = tmp_path / "multipage_rgb.tif"
    _planar_float_tiff(tif, [cat, coffee], order)
    with pytest.raises(Exception):  # noqa: B017  Pillow alone cannot read it
        Image.open(tif)
    shutil.copy(SAMPLES / "chelsea.png", tmp_path / "chelsea.png")
    got = _caption(tif, tmp_path / "chelsea.png")
    assert got["multipage_rgb.tif"]["error"] is None
    for key in ("caption", "description", "tags"):  # the same pixels as the PNG, so the same words
        assert got["multipage_rgb.tif"][key] == got["chelsea.png"][key]
    from capdesk.imageio import load_image

    img = load_image(tif)
    assert img.info["pages"] == 2 and img.size == (451, 300)
    assert np.array_equal(np.asarray(img), np.asarray(Image.open(SAMPLES / "chelsea.png").convert("RGB")))


def test_damaged_floating_point_tiff_is_one_line(tmp_path):
    tif = tmp_path / "cut.tif"
    _planar_float_tiff(tif, [np.zeros((20, 30, 3))], "<")
    data = bytearray(tif.read_bytes())
    ifd = struct.unpack_from("<I", data, 4)[0]
    struct.pack_into("<I", data, ifd + 2 + 8, 9000)  # the width says 9000 pixels: far more data than is there
    tif.write_bytes(bytes(data))
    r = run_cli("caption", str(tif))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stdout == f"{tif}\tERROR: cannot decode image (truncated or corrupt image data)\n"
