from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import SAMPLES, png_with_claimed_size
from PIL import Image

from capdesk.imageio import ImageError, Preprocess, is_image_path, load_image


def _photo() -> Image.Image:
    return Image.open(SAMPLES / "chelsea.png").convert("RGB")


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P", "L", "1", "CMYK", "I;16", "I", "F"])
def test_every_mode_becomes_rgb(tmp_path, mode):
    src = _photo().resize((64, 48))
    img = src.convert("L").convert(mode) if mode in ("I;16", "I", "F") else src.convert(mode)
    ext = {"CMYK": "jpg", "F": "tif", "I": "tif", "I;16": "png"}.get(mode, "png")
    p = tmp_path / f"img_{mode.replace(';', '')}.{ext}"
    img.save(p)
    out = load_image(p)
    assert out.mode == "RGB" and out.size == (64, 48)
    # real content survives the conversion (not a blank image)
    assert np.asarray(out).std() > 5


def test_rgba_composited_on_white(tmp_path):
    img = Image.new("RGBA", (10, 10), (255, 0, 0, 0))
    p = tmp_path / "clear.png"
    img.save(p)
    assert np.asarray(load_image(p))[0, 0].tolist() == [255, 255, 255]


def test_a_cut_out_says_how_much_of_it_was_transparent(tmp_path):
    from capdesk.imageio import cut_out_share

    cat = _photo().resize((80, 60)).convert("RGBA")
    sticker = Image.new("RGBA", (160, 120), (0, 0, 0, 0))
    sticker.paste(cat, (40, 30))  # a quarter of the picture shows the cat
    sticker.save(tmp_path / "sticker.png")
    assert cut_out_share(load_image(tmp_path / "sticker.png")) == pytest.approx(0.75, abs=0.02)
    _photo().save(tmp_path / "photo.png")
    assert cut_out_share(load_image(tmp_path / "photo.png")) == 0.0


def test_sixteen_bit_keeps_range(tmp_path):
    arr = np.linspace(0, 65535, 64 * 64).reshape(64, 64).astype(np.uint16)
    p = tmp_path / "deep.png"
    Image.fromarray(arr).save(p)
    out = np.asarray(load_image(p))
    assert out.max() >= 250 and out.min() <= 5


def test_exif_orientation_applied(tmp_path):
    img = Image.new("RGB", (40, 20), "blue")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW on display
    p = tmp_path / "rotated.jpg"
    img.save(p, exif=exif)
    assert load_image(p).size == (20, 40)


def test_animated_gif_uses_first_frame(tmp_path):
    frames = [Image.new("RGB", (16, 16), c) for c in ("red", "green", "blue")]
    p = tmp_path / "anim.gif"
    frames[0].save(p, save_all=True, append_images=frames[1:], duration=50, loop=0)
    r, g, b = np.asarray(load_image(p))[8, 8]
    assert r > 200 and g < 60 and b < 60


@pytest.mark.parametrize(
    "name,make,reason",
    [
        ("empty.jpg", lambda p: p.write_bytes(b""), "empty file"),
        ("text.png", lambda p: p.write_text("hello"), "not an image"),
        ("missing.png", lambda p: None, "file not found"),
        ("huge.png", lambda p: png_with_claimed_size(p, 40000, 40000), "too large"),
    ],
)
def test_bad_files_raise_clear_errors(tmp_path, name, make, reason):
    p = tmp_path / name
    make(p)
    with pytest.raises(ImageError) as ei:
        load_image(p)
    assert reason in str(ei.value) and name in str(ei.value)
    assert "\n" not in str(ei.value)


def test_truncated_jpeg(tmp_path):
    raw = (SAMPLES / "rocket.jpg").read_bytes()
    p = tmp_path / "cut.jpg"
    p.write_bytes(raw[:2000])
    with pytest.raises(ImageError, match="cut.jpg"):
        load_image(p)


def test_folder_is_not_an_image(tmp_path):
    with pytest.raises(ImageError, match="folder"):
        load_image(tmp_path)


def test_preprocess_matches_manifest_contract():
    pre = Preprocess(224, (127.0, 127.0, 127.0), (128.0, 128.0, 128.0))
    arr = pre.to_array(Image.new("RGB", (300, 100), (255, 127, 0)))
    assert arr.shape == (3, 224, 224) and arr.dtype == np.float32
    assert np.allclose(arr[:, 100, 100], [(255 - 127) / 128, 0.0, -127 / 128], atol=1e-2)


def test_unicode_names(tmp_path):
    p = tmp_path / "фото — 写真 ☕.png"
    _photo().save(p)
    assert load_image(p).size == _photo().size


def test_load_from_bytes_roundtrip(tmp_path):
    buf = io.BytesIO()
    _photo().save(buf, "JPEG")
    p = tmp_path / "x.jpeg"
    p.write_bytes(buf.getvalue())
    assert load_image(p).mode == "RGB"


def _heic(path, img: Image.Image) -> None:
    pillow_heif = pytest.importorskip("pillow_heif", reason="needs pillow-heif (pip install -e .)")
    pillow_heif.from_pillow(img).save(str(path), quality=90)


def test_heic_photos_are_read_like_any_other(tmp_path):
    """iPhone photos: HEIC (and a HEIC named .jpg, as some exports do) read to upright RGB."""
    src = Image.open(SAMPLES / "chelsea.png").convert("RGB")
    for name in ("IMG_0001.HEIC", "exported.jpg"):
        _heic(tmp_path / name, src)
        img = load_image(tmp_path / name)
        assert img.mode == "RGB" and img.size == src.size
        # Lossy, but the same picture: the mean colour within a few levels.
        assert np.abs(np.asarray(img, np.float32).mean((0, 1)) - np.asarray(src, np.float32).mean((0, 1))).max() < 4
    assert is_image_path(tmp_path / "IMG_0001.HEIC")


def test_a_damaged_heic_is_one_clear_error(tmp_path):
    _heic(tmp_path / "whole.heic", Image.open(SAMPLES / "chelsea.png").convert("RGB"))
    raw = (tmp_path / "whole.heic").read_bytes()
    (tmp_path / "cut.heic").write_bytes(raw[: len(raw) // 3])
    with pytest.raises(ImageError, match="cut.heic"):
        load_image(tmp_path / "cut.heic")


def test_white_content_on_transparency_is_seen_on_black_and_is_not_blank(tmp_path):
    """White glyphs on a transparent background (equations on help pages) vanished on white: 'A blank
    white image.'. Dark content still goes onto white, as clip art expects."""
    from PIL import ImageDraw, ImageFont

    from capdesk.describe.pixelfacts import plain_fact

    for fill, background in (((255, 255, 255, 255), (0, 0, 0)), ((0, 0, 0, 255), (255, 255, 255))):
        im = Image.new("RGBA", (300, 80), (0, 0, 0, 0))
        ImageDraw.Draw(im).text((10, 20), "E = mc^2 + x", fill=fill, font=ImageFont.load_default(size=30))
        im.save(tmp_path / "eq.png")
        flat = load_image(tmp_path / "eq.png")
        assert flat.getpixel((0, 0)) == background
        assert "blank" not in plain_fact(flat)


def test_white_fills_with_dark_lines_on_transparency_stay_on_white(tmp_path):
    """A flowchart: white boxes, black outlines and text. On black its lines would vanish."""
    from PIL import ImageDraw

    im = Image.new("RGBA", (300, 200), (0, 0, 0, 0))
    draw = ImageDraw.Draw(im)
    draw.rectangle((20, 20, 280, 180), fill=(255, 255, 255, 255), outline=(0, 0, 0, 255), width=6)
    draw.line((150, 0, 150, 20), fill=(0, 0, 0, 255), width=4)
    im.save(tmp_path / "box.png")
    assert load_image(tmp_path / "box.png").getpixel((0, 0)) == (255, 255, 255)


_PLUGINS_PROBE = """
import sys
from pathlib import Path
from PIL import Image
from capdesk.imageio import ImageError, load_image
tmp = Path(sys.argv[1])
Image.new("RGB", (32, 24), (200, 30, 30)).save(tmp / "a.png")
Image.new("RGB", (32, 24), (30, 200, 30)).save(tmp / "b.jpg")
(tmp / "broken.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + b"\\0" * 64)
load_image(tmp / "a.png"); load_image(tmp / "b.jpg")
print("after png and jpeg", Image._initialized)
try:
    load_image(tmp / "broken.png")
except ImageError as exc:
    print("broken", exc)
print("after a broken png", Image._initialized)
Image.new("RGB", (32, 24), (30, 30, 200)).save(tmp / "c.webp")  # saving loads every plugin itself
out = load_image(tmp / "c.webp")
print("webp", out.size)
"""


def test_a_png_or_jpeg_opens_without_every_format_plugin_and_a_broken_one_still_says_why(tmp_path):
    """A cold ``capdesk caption ONE.png`` spent some 45 ms importing Pillow's thirty-odd format plugins; a PNG
    or JPEG needs the five it loads first. A damaged PNG is refused as before, without this Pillow loading
    the others by itself (any that does, does so under CapDesk's lock: two threads loading them at once
    crashed in the AVIF plugin)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _PLUGINS_PROBE, str(tmp_path)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "after png and jpeg 1"  # preinit only (init() would make it 2)
    assert lines[1].startswith("broken ") and "broken.png" in lines[1]
    assert lines[2] == "after a broken png 1"
    assert lines[3] == "webp (32, 24)"


def test_the_first_pictures_opened_in_many_threads_at_once_all_open(tmp_path):
    """The window's preview and the describer open their first pictures at the same moment: common ones
    and others (a WebP, which loads every plugin), whole and damaged, from eight threads in a fresh process."""
    import subprocess
    import sys

    probe = """
import sys, threading
from pathlib import Path
from PIL import Image
tmp = Path(sys.argv[1])
for i in range(4):
    Image.new("RGB", (40 + i, 30), (10 * i, 90, 200)).save(tmp / f"p{i}.png")
(tmp / "broken.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + b"\\0" * 64)
with open(tmp / "w.webp", "wb") as fh:  # written by hand: Pillow's own save would load every plugin first
    fh.write(bytes.fromhex("52494646") + (0).to_bytes(4, "little"))
from capdesk.imageio import ImageError, load_image
names = ["p0.png", "p1.png", "broken.png", "w.webp", "p2.png", "p3.png", "broken.png", "p0.png"]
out = [None] * len(names)
def one(i):
    try:
        out[i] = load_image(tmp / names[i]).size
    except ImageError as exc:
        out[i] = "refused" if names[i] in str(exc) else str(exc)
threads = [threading.Thread(target=one, args=(i,)) for i in range(len(names))]
for t in threads: t.start()
for t in threads: t.join()
print(out)
"""
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([(40, 30), (41, 30), "refused", "refused", (42, 30), (43, 30), "refused",
                                    (40, 30)])
