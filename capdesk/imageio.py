"""Safe image loading and the numpy preprocessing the encoder expects.

Everything a user can point CapDesk at passes through ``load_image``: it either
returns an RGB Pillow image or raises ``ImageError`` with a one-line reason.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm", ".pbm", ".avif"}
)

# Pillow's own bomb limit is a warning at 89 Mpx; we refuse earlier and with our own message.
MAX_PIXELS = 80_000_000
MAX_FILE_BYTES = 512 * 1024 * 1024


class ImageError(Exception):
    """An image that cannot be captioned; ``str()`` is a one-line reason naming the file."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


def is_image_path(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


def _to_rgb(img: Image.Image) -> Image.Image:
    """Flatten any mode Pillow decodes into 8-bit RGB, compositing alpha onto white."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        arr = np.asarray(img, dtype=np.float64)
        hi = arr.max() if arr.size else 0
        scale = 255.0 / hi if hi > 255 else 1.0
        img = Image.fromarray(np.clip(arr * scale, 0, 255).astype(np.uint8), "L")
    elif img.mode == "F":
        arr = np.asarray(img, dtype=np.float64)
        lo, hi = (float(arr.min()), float(arr.max())) if arr.size else (0.0, 1.0)
        span = hi - lo or 1.0
        img = Image.fromarray(((arr - lo) / span * 255).astype(np.uint8), "L")
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in ("LA", "PA"):
        img = img.convert("RGBA")
    if img.mode == "RGBA":
        background = Image.new("RGB", img.size, (255, 255, 255))
        background.paste(img, mask=img.getchannel("A"))
        return background
    if img.mode != "RGB":
        img = img.convert("RGB")  # L, 1, CMYK, YCbCr, LAB, HSV, RGBX
    return img


def load_image(
    path: str | os.PathLike[str],
    *,
    max_pixels: int = MAX_PIXELS,
    draft_size: tuple[int, int] | None = None,
) -> Image.Image:
    """Open ``path`` as an upright RGB image or raise ``ImageError``.

    EXIF orientation is applied, the first frame of an animation is used, and
    images larger than ``max_pixels`` are refused before their pixels are decoded.
    ``draft_size`` lets JPEG decode at a reduced scale when only a small image is needed; the
    picture's real upright size is then in ``info["original_size"]`` (see ``original_size``).
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise ImageError(path, "file not found") from None
    except OSError as exc:
        raise ImageError(path, f"cannot read file ({exc.strerror or exc})") from None
    if p.is_dir():
        raise ImageError(path, "is a folder, not an image")
    if st.st_size == 0:
        raise ImageError(path, "empty file (0 bytes)")
    if st.st_size > MAX_FILE_BYTES:
        raise ImageError(path, f"file too large ({st.st_size / 2**20:.0f} MiB)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(p)
            w, h = img.size
            if w <= 0 or h <= 0:
                raise ImageError(path, f"invalid image size {w}x{h}")
            if w * h > max_pixels:
                raise ImageError(
                    path, f"image too large ({w}x{h} = {w * h / 1e6:.0f} Mpx, limit {max_pixels / 1e6:.0f} Mpx)"
                )
            if getattr(img, "is_animated", False):
                img = next(iter(ImageSequence.Iterator(img))).copy()
            # EXIF orientations 5-8 turn the picture a quarter: its upright width is the stored height.
            upright = (h, w) if img.getexif().get(0x0112) in (5, 6, 7, 8) else (w, h)
            if draft_size is not None and img.format == "JPEG":
                img.draft("RGB", draft_size)
            img.load()
            img = _to_rgb(ImageOps.exif_transpose(img))
            img.info["original_size"] = upright
            return img
    except ImageError:
        raise
    except PermissionError:
        raise ImageError(path, "permission denied") from None
    except UnidentifiedImageError:
        raise ImageError(path, "not an image, or a format Pillow cannot read") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        limit = f"{max_pixels / 1e6:.0f} Mpx"
        raise ImageError(path, f"image too large (decompression bomb refused: over {limit})") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "truncated" in msg.lower():
            msg = "truncated or corrupt image data"
        raise ImageError(path, f"cannot decode image ({msg})") from None


@dataclass(frozen=True)
class Preprocess:
    """How the encoder wants its input; read from a bundle's manifest."""

    size: int = 224
    mean: tuple[float, float, float] = (127.0, 127.0, 127.0)
    std: tuple[float, float, float] = (128.0, 128.0, 128.0)

    @classmethod
    def from_manifest(cls, enc: dict) -> Preprocess:
        return cls(int(enc["input_size"]), tuple(enc["mean"]), tuple(enc["std"]))

    def resize(self, img: Image.Image) -> Image.Image:
        # Squash rather than crop: a caption must not miss what sits at the edges.
        return img.resize((self.size, self.size), Image.BICUBIC, reducing_gap=3.0)

    def to_array(self, img: Image.Image) -> np.ndarray:
        """One RGB image -> float32 CHW, normalised as the encoder was trained."""
        a = np.asarray(self.resize(img), dtype=np.float32)
        a = (a - np.asarray(self.mean, np.float32)) / np.asarray(self.std, np.float32)
        return np.ascontiguousarray(a.transpose(2, 0, 1))

    def load(self, path: str | os.PathLike[str]) -> tuple[Image.Image, np.ndarray]:
        img = load_image(path, draft_size=(self.size * 2, self.size * 2))
        return img, self.to_array(img)


def original_size(img: Image.Image) -> tuple[int, int]:
    """The upright size of the picture ``img`` was loaded from (it may have been decoded smaller)."""
    size = img.info.get("original_size")
    return (int(size[0]), int(size[1])) if size else img.size
