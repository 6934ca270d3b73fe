"""One picture in a document (an EPUB chapter's ``<img>``, a Word or PowerPoint picture, an
OpenDocument frame): where it is, what text alternative it has, and the one edit that would give
it alt text, as byte offsets into its XML part."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from capdesk.altfill.places import REMOTE

# A text alternative that is only a picture's file name says nothing about it (WCAG failure F30):
# PowerPoint writes one when a picture is inserted, and so do many converters.
_FILE_NAME = re.compile(r"^[^\\/:*?\"<>|\s][^\\/:*?\"<>|]*\.(?:png|jpe?g|jfif|gif|bmp|tiff?|webp|emf|wmf|svg|heic|heif"
                        r"|avif|ico|pcx|tga)$", re.I)
# Names that are not file names but say as little: a camera's or a phone's ("DSC01234", "IMG_0042",
# "PXL_20230512_143022"), an office suite's default ("Picture 3", "Image1", "Grafik 2"), a bare number or
# time stamp, a snake_case identifier, a path without an extension ("./bezier2", "images/bezier2"), a URL.
_CAMERA = re.compile(r"^(?:IMG|DSC[NF_]?|DCIM|PXL|SAM|GOPR|MVIMG|PICT|CIMG|DJI|WP|VID|PANO|BURST)[_\-]?\d[\w\-.]*$"
                     r"|^P\d{5,}$|^screen ?shot[\s_\-]*\d[\w\-. ]*$", re.I)
_GENERIC = re.compile(r"^(?:image|img|picture|pic|photo|photograph|graphic|graphics|figure|fig|drawing|object"
                      r"|grafik|bild|abbildung|immagine|imagen|imagem|afbeelding|obraz|untitled|unnamed|screenshot"
                      r"|screen shot|scan)[\s_\-]*\d*$", re.I)
_STAMP = re.compile(r"^[\d\s_\-.:]+$")
_PATH = re.compile(r"^(?:\.{1,2}/|/|~/|[A-Za-z]:[\\/])\S*$|^(?:images?|img|pics?|pictures|figures?|figs?|media"
                   r"|assets|static|graphics|gfx|icons|photos|uploads|files|resources|res|_images|wp-content)"
                   r"(?:/[^/\s]+)+$", re.I)
_URL = re.compile(r"^(?:(?:https?|ftp|file|data):|www\.)\S*$", re.I)
OUTSIDE_PACKAGE = "an address that leads out of the document: skipped, since only its own pictures are described"


@dataclass
class Spot:
    part: str  # the zip entry of the XML part it is in
    line: int
    column: int
    location: str  # where a person finds it (chapter file and line, slide, page)
    src: str  # the picture's address as the part writes it
    before: str  # the element's start tag, as written
    tag_start: int  # byte offset of that tag in the part
    picture: str | None = None  # the zip entry holding the picture, when it is one of the document's own
    alt: str | None = None  # the text alternative it has (None: none)
    decorative: str = ""  # why the author marked it decorative, else ""
    labelled: str = ""  # an attribute that already names it, else ""
    problem: str = ""  # why it cannot be filled where it is
    skip: str = ""  # why its picture is not described (remote, outside the document)
    missing: str = ""  # why its picture cannot be found in the document
    placeholder: bool = False  # its text is only a file name: counted as missing, and replaced
    at: int = -1  # the edit: bytes [at, cut) of the part become make(alt text); -1: no place to write
    cut: int = -1
    make: Callable[[str], str] | None = None
    make_en: Callable[[str], str] | None = None  # the edit for English text in a page in another language
    caption: str = ""  # the figure caption beside it (the author's words for what it shows)
    picture_id: str = ""  # its identity in the document (``picture_ids``): what a review row names it by
    context: str = ""  # the text before and after it, for the person reviewing (never words for the alt text)
    # Edits made with the alt text: [at, cut) of the part becomes the text; the marks that hid a picture
    # marked decorative from screen readers, taken away or turned off once it has alt text.
    also: list[tuple[int, int, str]] = field(default_factory=list)

    def after(self, piece: str) -> str:
        """The start tag as it reads once ``piece`` replaces [at, cut); an edit past the tag is shown after it."""
        raw = self.before.encode("utf-8")
        edits = [(self.at, self.cut, piece)] + [e for e in self.also if self.tag_start <= e[0] <= e[1]
                                                 <= self.tag_start + len(raw)]
        a, c = self.at - self.tag_start, self.cut - self.tag_start
        if not 0 <= a <= c <= len(raw):
            return f"{self.before} ... {piece}"
        out, pos = b"", 0
        for at, cut, new in sorted(edits):
            out += raw[pos:at - self.tag_start] + new.encode("utf-8")
            pos = cut - self.tag_start
        return (out + raw[pos:]).decode("utf-8")


def is_file_name(text: str, picture: str | None = None) -> bool:
    """Whether a text alternative is only a file name or path (the picture's own, or any picture's),
    pandoc's figure marker ``fig:`` included (``fig:``, ``fig:  images/cat.jpg``), or a name that says as
    little: the picture's name without its extension, a camera's or an office suite's default name
    ("DSC01234", "Picture 3"), a number, an identifier, a path or a URL. Each counts as no alt text."""
    t = text.strip()
    if t[:4].lower() == "fig:":
        t = t[4:].strip()
        if not t:
            return True
    if not t:
        return False
    if picture is not None and t in _names_of(picture):
        return True
    if _CAMERA.match(t) or _GENERIC.match(t) or _STAMP.match(t) or _PATH.match(t) or _URL.match(t):
        return True
    if "_" in t and not any(c.isspace() for c in t):  # an identifier: prose has no underscores
        return True
    head, _, name = t.replace("\\", "/").rpartition("/")
    return bool(_FILE_NAME.match(name)) and not any(c.isspace() for c in head)


def _names_of(picture: str) -> tuple[str, ...]:
    """A picture's address as alt text may repeat it: whole, its file name, each without its extension."""
    base = posixpath.basename(picture)
    return tuple(n for n in (picture, base, posixpath.splitext(picture)[0], posixpath.splitext(base)[0]) if n)


def resolve_in_package(src: str, base: str, names: set[str]) -> tuple[str | None, str, str]:
    """(the zip entry an address names, why it is skipped, why it is missing) for a picture's address
    in a part at ``base`` (a zip entry name): only one of the three is set."""
    s = src.strip()
    if not s:
        return None, "no picture address", ""
    parts = urlsplit(s)
    if parts.scheme.lower() in ("http", "https") or s.startswith("//"):
        return None, REMOTE, ""
    if parts.scheme:
        return None, f"not a picture of the document ({parts.scheme.lower()}:): skipped", ""
    path = unquote(parts.path)
    if not path:
        return None, "no file name in the address", ""
    if path.startswith("/"):
        return None, OUTSIDE_PACKAGE, ""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), path))
    if joined == ".." or joined.startswith("../"):
        return None, OUTSIDE_PACKAGE, ""
    if joined not in names:
        return None, "", f"no such picture in the document ({joined})"
    return joined, "", ""
