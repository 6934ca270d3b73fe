"""Each picture's identity: what a review row names its picture by, so that a reviewed text is written
onto that picture and no other, whatever order the rows are in.

An identity is read from the format's own structure, never from a row's place in the review: a
PowerPoint or Excel shape's ``p:cNvPr/@id`` (``xdr:cNvPr``) and a Word picture's ``wp:docPr/@id`` (an
old-style VML shape's ``id``), each with the part it is in; an OpenDocument frame's index among the
part's ``draw:frame`` elements with its ``draw:name``; an EPUB chapter's picture by its index among
the chapter's pictures (``<img>`` and SVG ``<image>``) in document order; a web page's by its index
among the page's pictures; a tagged PDF's Figure by its structure element's object number. A review
also holds the picture's address (``picture``) and, for a picture the document holds, the digest of
its bytes (``picture_sha256``): a row is written only where all of them still match.

The identity is as stable as the bytes it was read from: a review applies only to the document's
bytes it was made on (its ``document_sha256``), so an index is the same index when it is applied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Protocol

from capdesk.altfill.zipsafe import ZipRefused


class _HasId(Protocol):
    picture_id: str


def shape_id(part: str, kind: str, value: str | None, element: int) -> str:
    """A shape's identity in ``part``: its id attribute (``kind`` says which), or, when it has none, the
    index of its element in the part."""
    value = (value or "").strip()
    return f"{part}: {kind} {value}" if value else f"{part}: element {element} (no {kind})"


def frame_id(part: str, index: int, name: str | None) -> str:
    """An OpenDocument frame's identity: its index among the part's frames, and its name."""
    return f"{part}: frame {index}" + (f" ({name})" if name else "")


def part_picture_id(part: str, index: int) -> str:
    """A picture of an XHTML chapter: its index among the chapter's pictures, in document order."""
    return f"{part}: picture {index}"


def page_picture_id(index: int) -> str:
    """A web page's picture: its index among the page's pictures, in document order."""
    return f"picture {index}"


def pdf_figure_id(ref: object, number: int) -> str:
    """A tagged PDF's Figure: its structure element's object number (and generation)."""
    ref = getattr(ref, "indirect_reference", None) or ref  # the element read, or its reference itself
    idnum = getattr(ref, "idnum", None)
    if isinstance(idnum, int):
        return f"structure element {idnum} {getattr(ref, 'generation', 0)} R"
    return f"figure {number} (not an object of its own)"


def make_unique(items: Iterable[_HasId]) -> None:
    """A part that gives two shapes one id (a hand-edited file, a converter's): the second and later are
    told apart by their order among those, so that no identity names two pictures."""
    seen: dict[str, int] = {}
    for it in items:
        if not it.picture_id:
            continue
        n = seen[it.picture_id] = seen.get(it.picture_id, 0) + 1
        if n > 1:
            it.picture_id = f"{it.picture_id} #{n}"


def entry_digest(read: Callable[[str], bytes], entry: str | None, cache: dict[str, str]) -> str:
    """The sha256 of a picture the document holds (its zip entry's bytes); "" when there is none or it
    cannot be read (the row is then held to its document's digest alone)."""
    if not entry:
        return ""
    if entry not in cache:
        try:
            cache[entry] = hashlib.sha256(read(entry)).hexdigest()
        except (ZipRefused, OSError, MemoryError):
            cache[entry] = ""
    return cache[entry]
