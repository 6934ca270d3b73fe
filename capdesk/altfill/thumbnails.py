"""A picture small enough to sit in the HTML report beside its text, as a ``data:`` URL: for a picture a
browser may not show from its file (HEIC, HEIF, AVIF, TIFF, PPM) and for a document's own pictures, which
have no file to link to. Read as the describer reads it (``capdesk.imageio.load_image``: its bounds, HEIF
through pillow-heif, a found picture only inside its folders)."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Iterable
from pathlib import Path

from capdesk.imageio import load_image

THUMB_SIDE = 320  # pixels, the longer side: the report's cards are about this wide
# What every browser shows from a file, linked as it is; any other picture is shown by a thumbnail.
BROWSER_SHOWS = frozenset({".png", ".jpg", ".jpeg", ".jfif", ".gif", ".webp", ".svg", ".bmp", ".ico", ".apng"})


def browser_shows(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in BROWSER_SHOWS


def thumbnail_url(path: str | os.PathLike[str], within: Iterable[str | os.PathLike[str]] | None = None,
                  side: int = THUMB_SIDE) -> str:
    """A small JPEG of the picture as a data: URL; "" when it cannot be read (the report then shows the
    text alone). ``within``: folders the file must really be inside (links resolved)."""
    try:
        img = load_image(path, draft_size=(side, side), within=within)
        img.thumbnail((side, side))
        out = io.BytesIO()
        img.save(out, "JPEG", quality=80)
    except Exception:  # noqa: BLE001 (any picture, read or not: the report goes on without it)
        return ""
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")
