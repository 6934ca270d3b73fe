"""A web page's text, read so that every byte comes back as it was, and changed only by insertions.

A page is decoded with its own encoding (a byte-order mark; for HTML a ``<meta charset>`` in its
first bytes; else UTF-8) and ``surrogateescape``, so that bytes that are not valid in that encoding
survive as they were. The text CapDesk adds is encoded on its own (characters the page's encoding
cannot hold become numeric character references, which HTML and Markdown both read), and spliced
into the original bytes: nothing outside an insertion is ever re-encoded.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Where the HTML standard's encoding sniffing looks for a <meta> (it says 1024 bytes; a long <head>
# of comments and scripts pushes the tag further out often enough that a little more is kinder).
META_WINDOW = 4096
_META = re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
# The HTML standard reads these labels as windows-1252; Latin-1 keeps every byte (windows-1252 leaves
# five undefined), and what CapDesk adds outside ASCII is written as character references anyway.
_AS_LATIN1 = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "ascii", "us-ascii", "windows-1252", "cp1252",
              "x-cp1252", "iso_8859-1", "cp819", "ibm819"}


class PageError(Exception):
    """A page that cannot be read or changed safely; ``str()`` is one line for the user."""


@dataclass
class PageText:
    raw: bytes
    text: str  # the page after its byte-order mark
    encoding: str  # the codec used (a Python codec name)
    bom: bytes = b""

    def encode_new(self, piece: str) -> bytes:
        """Inserted text in the page's encoding; what it cannot hold as numeric character references."""
        return piece.encode(self.encoding, "xmlcharrefreplace")

    def with_insertions(self, inserts: list[tuple[int, str]]) -> bytes:
        """The page's bytes with each ``(character offset, text)`` inserted; every other byte as it was."""
        out: list[bytes] = []
        expected: list[str] = []
        chars, at_byte, copied = 0, len(self.bom), 0  # copied: raw bytes already in out (the BOM goes first)
        for at, piece in sorted(inserts, key=lambda x: x[0]):
            at_byte += len(self.text[chars:at].encode(self.encoding, "surrogateescape"))
            added = self.encode_new(piece)
            out += [self.raw[copied:at_byte], added]
            expected += [self.text[chars:at], added.decode(self.encoding)]
            chars, copied = at, at_byte
        out.append(self.raw[copied:])
        expected.append(self.text[chars:])
        data = b"".join(out)
        # A codec whose bytes depend on what came before (ISO-2022 and the like) would make the
        # splice wrong: read the result back and refuse rather than write a damaged page.
        if data[len(self.bom):].decode(self.encoding, "surrogateescape") != "".join(expected):
            raise PageError(f"cannot insert text exactly in its encoding ({self.encoding})")
        return data


def decode_page(raw: bytes, html: bool) -> PageText:
    """The page's text and encoding. Raises ``PageError`` when its bytes would not round-trip."""
    bom, encoding = b"", ""
    for mark, name in BOMS:
        if raw.startswith(mark):
            bom, encoding = mark, name
            break
    if not encoding:
        encoding = _meta_charset(raw[:META_WINDOW]) if html else "utf-8"
    body = raw[len(bom):]
    try:
        text = body.decode(encoding, "surrogateescape")
    except UnicodeDecodeError as exc:  # UTF-16 with an odd byte: surrogateescape cannot stand in for it
        raise PageError(f"not valid {encoding} ({exc.reason})") from None
    if text.encode(encoding, "surrogateescape") != body:
        raise PageError(f"its bytes do not read back the same in {encoding}")
    return PageText(raw, text, encoding, bom)


def _meta_charset(head: bytes) -> str:
    m = _META.search(head)
    if not m:
        return "utf-8"
    label = m.group(1).decode("ascii").lower()
    if label in _AS_LATIN1:
        return "latin-1"
    if label.startswith("utf-16"):  # a <meta> that could be read was not written in UTF-16: the standard says UTF-8
        return "utf-8"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return "utf-8"
