"""Safe image loading and the numpy preprocessing the encoder expects.

Everything a user can point CapDesk at passes through ``load_image``: it either
returns an RGB Pillow image or raises ``ImageError`` with a one-line reason.

A multi-page TIFF is described by its first page; ``info["pages"]`` says how many it has. TIFFs
whose samples Pillow has no mode for (floating point or 64-bit numbers, RGB stored plane by plane,
as scientific software writes them) are read here when uncompressed (``_plain_tiff``).

The file is opened once, without waiting on a FIFO, and everything is judged and decoded from that
descriptor. A picture found by listing a folder (``FoundPath``) is decoded only where the descriptor
really leads stays inside the folders the user gave: a link planted in a shared folder, or a file
swapped for one after the listing, never gets one of the user's private pictures described (and its
text written beside the link for others to read). A path the user named is opened as given.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import threading
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm", ".pbm", ".avif",
     ".heic", ".heif"}
)
# HEIF brands (the ISO box "ftyp" at byte 4) of iPhone photos and other HEVC stills: read through
# pillow-heif, loaded only when such a file comes (its library costs start-up time every other file would pay).
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1")
_heif_registered = False

# Pillow's own bomb limit is a warning at 89 Mpx; we refuse earlier and with our own message.
MAX_PIXELS = 80_000_000
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_TIFF_PAGES = 100_000  # pages counted at most (a loop of pages in a damaged file ends there too)
# TIFF SampleFormat (1 unsigned, 2 signed, 3 floating point) and bits per sample -> numpy type.
_TIFF_SAMPLES = {(1, 8): "u1", (1, 16): "u2", (1, 32): "u4", (1, 64): "u8", (2, 8): "i1", (2, 16): "i2",
                 (2, 32): "i4", (2, 64): "i8", (3, 16): "f2", (3, 32): "f4", (3, 64): "f8"}


class ImageError(Exception):
    """An image that cannot be captioned; ``str()`` is a one-line reason naming the file."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


OUTSIDE = "a link to a file outside the folders given: not followed (name the file itself to describe it)"


class FoundPath(str):
    """The path of a picture found by listing a folder the user named (not named itself), carrying the
    folders given (``roots``, resolved): ``load_image`` opens it only where it stays inside them."""

    roots: tuple[str, ...]

    def __new__(cls, path: str | os.PathLike[str], roots: Iterable[str]) -> FoundPath:
        self = super().__new__(cls, os.fspath(path))
        self.roots = tuple(roots)
        return self

    def __reduce__(self):  # (pickled whole: a Ray worker checks as this process would)
        return FoundPath, (str(self), self.roots)


def roots_of(path: object) -> tuple[str, ...] | None:
    """The folders a found picture must stay inside (``FoundPath``, or a path that says so), or None."""
    roots = getattr(path, "roots", None)
    return tuple(roots) if roots else None


def inside(real: str, roots: Iterable[str]) -> bool:
    """Whether the resolved path ``real`` is one of ``roots`` (resolved folders) or under one."""
    for root in roots:
        try:
            if os.path.commonpath([real, root]) == root:
                return True
        except ValueError:  # another drive
            continue
    return False


def _real_place(fd: int, path: str | os.PathLike[str], st: os.stat_result) -> str | None:
    """Where the open file ``fd`` really is: from the descriptor where the system tells it (Linux's
    /proc/self/fd), else the path resolved and checked to still be that very file; None if unknown."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
        if real.startswith("/"):
            return real
    except OSError:
        pass
    real = os.path.realpath(path)
    try:
        now = os.stat(real)
    except OSError:
        return None
    return real if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino) else None


@contextlib.contextmanager
def _open_picture(path: str | os.PathLike[str], roots: tuple[str, ...] | None) -> Iterator[io.BufferedReader]:
    """The picture's file, open for reading, checked on its descriptor: a regular file, non-empty, not
    over ``MAX_FILE_BYTES``, and (for a found picture) really inside ``roots``."""
    try:  # looked at first: a device is never opened
        pre = os.stat(path)
    except FileNotFoundError:
        raise ImageError(path, "file not found") from None
    except OSError as exc:
        raise ImageError(path, f"cannot read file ({exc.strerror or exc})") from None
    _check_kind(path, pre)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ImageError(path, "file not found") from None
    except PermissionError:
        raise ImageError(path, "permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise ImageError(path, "not a regular file (a socket)") from None
        raise ImageError(path, f"cannot read file ({exc.strerror or exc})") from None
    with open(fd, "rb", closefd=True) as fh:
        st = os.fstat(fd)
        _check_kind(path, st)
        if roots is not None:
            real = _real_place(fd, path, st)
            if real is None or not inside(real, roots):
                raise ImageError(path, OUTSIDE)
        if st.st_size == 0:
            raise ImageError(path, "empty file (0 bytes)")
        if st.st_size > MAX_FILE_BYTES:
            raise ImageError(path, f"file too large ({st.st_size / 2**20:.0f} MiB)")
        yield fh


def _check_kind(path: str | os.PathLike[str], st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ImageError(path, "is a folder, not an image")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise ImageError(path, f"not a regular file ({kind})")


def is_image_path(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


# A transparent picture whose visible pixels are mostly light (LIGHT_SHARE of them from LIGHT) with almost
# no dark ones (under DARK_SHARE below DARK) is composited onto black: white glyphs on a transparent
# background (equations on help pages) vanished on white and read as blank. Clip art and flowcharts with
# white fills keep white: their dark outlines and text would vanish on black.
LIGHT, LIGHT_SHARE, DARK, DARK_SHARE = 200, 0.5, 60, 0.02


def _small_rgba(img: Image.Image) -> np.ndarray:
    """The picture at most about 256 pixels across, RGBA: enough to judge its transparency by."""
    return np.asarray(img.convert("RGBA").reduce(max(1, max(img.size) // 256)), dtype=np.float64)


def backdrop(img: Image.Image, small: np.ndarray | None = None) -> tuple[int, int, int]:
    """The background a transparent picture is seen on: white, unless what it shows is light only.
    ``small``: the picture as ``_small_rgba`` gives it, when the caller has it."""
    rgba = _small_rgba(img) if small is None else small
    alpha = rgba[..., 3] / 255.0
    if alpha.sum() < 1:
        return (255, 255, 255)
    lum = rgba[..., :3].mean(axis=2)
    light = (alpha * (lum >= LIGHT)).sum() / alpha.sum()
    dark = (alpha * (lum < DARK)).sum() / alpha.sum()
    return (0, 0, 0) if light >= LIGHT_SHARE and dark < DARK_SHARE else (255, 255, 255)


def _to_rgb(img: Image.Image) -> Image.Image:
    """Flatten any mode Pillow decodes into 8-bit RGB, compositing alpha onto white (onto black when
    what the picture shows is light, so that it stays visible)."""
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
        small = _small_rgba(img)
        background = Image.new("RGB", img.size, backdrop(img, small))
        background.paste(img, mask=img.getchannel("A"))
        background.info["transparent_share"] = transparent_share(img, small)
        return background
    if img.mode != "RGB":
        img = img.convert("RGB")  # L, 1, CMYK, YCbCr, LAB, HSV, RGBX
    return img


def load_image(
    path: str | os.PathLike[str],
    *,
    max_pixels: int = MAX_PIXELS,
    draft_size: tuple[int, int] | None = None,
    within: Iterable[str | os.PathLike[str]] | None = None,
) -> Image.Image:
    """Open ``path`` as an upright RGB image or raise ``ImageError``.

    EXIF orientation is applied, the first frame of an animation is used, and
    images larger than ``max_pixels`` are refused before their pixels are decoded.
    ``draft_size`` lets JPEG decode at a reduced scale when only a small image is needed; the
    picture's real upright size is then in ``info["original_size"]`` (see ``original_size``).
    ``within``: folders the file must really be inside, links resolved (a ``FoundPath`` brings its own).
    """
    roots = roots_of(path) if within is None else tuple(os.path.realpath(r) for r in within)
    with _open_picture(path, roots) as fh:
        return _decode(path, fh, max_pixels, draft_size)


_plugins_lock = threading.Lock()
_plugins_ready = False


# The formats Pillow loads first (``preinit``), by the bytes such a file starts with (what each plugin accepts).
_COMMON_HEADS = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"),
                 (b"BM", "BMP"), *((b"P" + bytes([c]), "PPM") for c in b"123456"))


def _common_format(head: bytes) -> str | None:
    return next((fmt for start, fmt in _COMMON_HEADS if head.startswith(start)), None)


def _load_plugins(common: bool = False) -> None:
    """Pillow imports its format plugins at its first open; two threads doing that at once (the window's
    preview and the describer, at the first picture) crashed in the AVIF plugin's import with a segmentation
    fault. Done once, under a lock. A PNG, JPEG, GIF, BMP or PPM (``common``) needs only the five plugins
    Pillow loads first (``preinit``); all of them (``init``, some 45 ms of a cold start) wait, under the
    lock, for a picture of another format (and see ``_open``)."""
    global _plugins_ready
    if _plugins_ready:
        return
    with _plugins_lock:
        if _plugins_ready:
            return
        if common:
            Image.preinit()
        else:
            Image.init()
            _plugins_ready = True


def _open(fh: io.BufferedReader, common: str | None) -> Image.Image:
    """``Image.open``. Until every plugin is loaded, a common picture is opened as its own format alone and
    under the plugins' lock: a damaged one makes some Pillow versions load every plugin themselves, which
    must not happen in two threads at once."""
    if _plugins_ready or common is None:
        return Image.open(fh)
    with _plugins_lock:
        return Image.open(fh, formats=[common])


def _decode(path: str | os.PathLike[str], fh: io.BufferedReader, max_pixels: int,
            draft_size: tuple[int, int] | None) -> Image.Image:
    head = os.pread(fh.fileno(), 12, 0) if hasattr(os, "pread") else _head(fh, 12)
    common = _common_format(head)
    _load_plugins(common is not None)
    if head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        _register_heif()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = _open(fh, common)
            w, h = img.size
            if w <= 0 or h <= 0:
                raise ImageError(path, f"invalid image size {w}x{h}")
            if w * h > max_pixels:
                raise ImageError(
                    path, f"image too large ({w}x{h} = {w * h / 1e6:.0f} Mpx, limit {max_pixels / 1e6:.0f} Mpx)"
                )
            pages = int(getattr(img, "n_frames", 1) or 1) if img.format == "TIFF" else 1
            if getattr(img, "is_animated", False):
                img = next(iter(ImageSequence.Iterator(img))).copy()
            # EXIF orientations 5-8 turn the picture a quarter: its upright width is the stored height.
            upright = (h, w) if img.getexif().get(0x0112) in (5, 6, 7, 8) else (w, h)
            if draft_size is not None and img.format == "JPEG":
                img.draft("RGB", draft_size)
            img.load()
            img = _to_rgb(ImageOps.exif_transpose(img))
            img.info["original_size"] = upright
            if pages > 1:
                img.info["pages"] = pages
            return img
    except ImageError:
        raise
    except PermissionError:
        raise ImageError(path, "permission denied") from None
    except UnidentifiedImageError:
        if head[:4] in (b"II*\0", b"MM\0*"):
            return _plain_tiff(path, fh, max_pixels)
        raise ImageError(path, "not an image, or a format Pillow cannot read") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        limit = f"{max_pixels / 1e6:.0f} Mpx"
        raise ImageError(path, f"image too large (decompression bomb refused: over {limit})") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "truncated" in msg.lower():
            msg = "truncated or corrupt image data"
        raise ImageError(path, f"cannot decode image ({msg})") from None


def _head(fh: io.BufferedReader, n: int) -> bytes:
    fh.seek(0)
    head = fh.read(n)
    fh.seek(0)
    return head


def _register_heif() -> None:
    """Teach Pillow HEIF (pillow-heif); without the package such a file is 'a format Pillow cannot read'."""
    global _heif_registered
    if _heif_registered:
        return
    try:
        import pillow_heif
    except ImportError:
        return
    pillow_heif.register_heif_opener()
    _heif_registered = True


def _plain_tiff(path: str | os.PathLike[str], fh: io.BufferedReader, max_pixels: int) -> Image.Image:
    """The first page of an uncompressed TIFF whose samples Pillow has no mode for, as RGB."""
    from PIL.TiffImagePlugin import ImageFileDirectory_v2

    try:
        fh.seek(0)
        head = fh.read(8)
        first, pages, offset, seen = None, 0, ImageFileDirectory_v2(head).next, set()
        while offset and offset not in seen and pages < MAX_TIFF_PAGES:
            seen.add(offset)
            fh.seek(offset)
            ifd = ImageFileDirectory_v2(head)
            ifd.load(fh)
            first = first or dict(ifd)
            pages += 1
            offset = ifd.next
        if first is None:
            raise ImageError(path, "cannot decode image (a TIFF without pages)")
        arr = _tiff_samples(path, fh, first, "<" if head[:2] == b"II" else ">", max_pixels)
    except ImageError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, SyntaxError) as exc:
        raise ImageError(path, f"cannot decode image ({str(exc).splitlines()[0] if str(exc) else 'damaged TIFF'})") \
            from None
    img = _to_rgb(Image.fromarray(arr))
    img.info["original_size"] = img.size
    if pages > 1:
        img.info["pages"] = pages
    return img


def _tiff_samples(path: str | os.PathLike[str], fh, tags: dict, order: str, max_pixels: int) -> np.ndarray:
    """One page's pixels, 8-bit, as an (h, w) or (h, w, 3) array."""
    w, h = int(tags[256]), int(tags[257])
    if w <= 0 or h <= 0:
        raise ImageError(path, f"invalid image size {w}x{h}")
    if w * h > max_pixels:
        raise ImageError(path, f"image too large ({w}x{h} = {w * h / 1e6:.0f} Mpx, limit {max_pixels / 1e6:.0f} Mpx)")
    spp = int(tags.get(277, 1))
    bits, kinds = tags.get(258, (1,)), tags.get(339, (1,))
    bits, kinds = (bits if isinstance(bits, tuple) else (bits,)), (kinds if isinstance(kinds, tuple) else (kinds,))
    dtype = _TIFF_SAMPLES.get((int(kinds[0]), int(bits[0])))
    photometric = int(tags.get(262, 1))
    if dtype is None or len(set(bits)) > 1 or len(set(kinds)) > 1 or photometric not in (0, 1, 2) \
            or (photometric == 2 and spp < 3):
        raise ImageError(path, "not an image, or a format Pillow cannot read")
    compression = int(tags.get(259, 1))
    if compression != 1 or 322 in tags:
        raise ImageError(path, f"cannot decode image (a TIFF with {bits[0]}-bit samples that is compressed or tiled: "
                               "only uncompressed strips of such samples are read)")
    offsets, counts = tags[273], tags[279]
    offsets, counts = (offsets if isinstance(offsets, tuple) else (offsets,)), \
        (counts if isinstance(counts, tuple) else (counts,))
    item = np.dtype(dtype).newbyteorder(order)
    need = w * h * spp * item.itemsize
    data = bytearray()
    for off, n in zip(offsets, counts):
        if len(data) >= need:
            break
        fh.seek(int(off))
        data += fh.read(min(int(n), need - len(data)))
    if len(data) < need:
        raise ImageError(path, "cannot decode image (truncated or corrupt image data)")
    a = np.frombuffer(bytes(data), dtype=item).astype(np.float64)
    a = a.reshape(spp, h, w).transpose(1, 2, 0) if int(tags.get(284, 1)) == 2 else a.reshape(h, w, spp)
    a = a[:, :, :3] if photometric == 2 else a[:, :, 0]
    finite = np.isfinite(a)
    lo, hi = (float(a[finite].min()), float(a[finite].max())) if finite.any() else (0.0, 0.0)
    if item.kind == "f" and lo >= 0 and hi <= 1:
        a = a * 255  # the usual range of floating-point pictures
    elif lo < 0 or hi > 255:
        a = (a - lo) / ((hi - lo) or 1.0) * 255
    a = np.clip(np.rint(np.where(finite, a, 0)), 0, 255).astype(np.uint8)
    return 255 - a if photometric == 0 else a  # 0: WhiteIsZero


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


def transparent_share(img: Image.Image, small: np.ndarray | None = None) -> float:
    """The share of a picture that is (mostly) transparent: a cut-out shows a thing, and no scene."""
    alpha = (_small_rgba(img) if small is None else small)[..., 3]
    return round(float((alpha < 128).mean()), 4) if alpha.size else 0.0


def cut_out_share(img: Image.Image) -> float:
    """How much of the picture ``img`` was loaded from was transparent (0 for a picture without alpha)."""
    return float(img.info.get("transparent_share", 0.0))


def original_size(img: Image.Image) -> tuple[int, int]:
    """The upright size of the picture ``img`` was loaded from (it may have been decoded smaller)."""
    size = img.info.get("original_size")
    return (int(size[0]), int(size[1])) if size else img.size
