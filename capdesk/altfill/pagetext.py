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
# The encodings of the web (the WHATWG Encoding Standard's, as Python names them): only these count.
# Python also answers to labels such as "hex", "rot13", "base64", "zlib", "uu", "undefined", "idna"
# and "punycode", which are transformations or raise on any text, never a page's encoding.
WEB_ENCODINGS = frozenset({
    "utf-8", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874", "tis-620",
    *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
    *(f"cp{n}" for n in range(1250, 1259)),
    "gbk", "gb2312", "gb18030", "big5", "big5hkscs", "euc_jp", "iso2022_jp", "shift_jis", "cp932", "euc_kr", "cp949",
})
# Web labels Python does not know by that name.
_WEB_ALIASES = {"windows-874": "cp874", "x-mac-cyrillic": "mac-cyrillic", "x-mac-ukrainian": "mac-cyrillic",
                "iso-8859-8-i": "iso8859-8", "csiso88598i": "iso8859-8", "windows-31j": "cp932", "x-sjis": "shift_jis",
                "ks_c_5601-1987": "cp949", "x-gbk": "gbk"}


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

    def with_insertions(self, inserts: list[tuple[int, str]] | list[tuple[int, str, int]]) -> bytes:
        """The page's bytes with each ``(character offset, text)`` inserted, or with the characters
        ``[offset, end)`` of each ``(offset, text, end)`` replaced; every other byte as it was."""
        out: list[bytes] = []
        expected: list[str] = []
        chars, at_byte, copied = 0, len(self.bom), 0  # copied: raw bytes already in out (the BOM goes first)
        for at, piece, *rest in sorted(inserts, key=lambda x: x[0]):
            end = max(at, rest[0]) if rest else at
            at_byte += len(self.text[chars:at].encode(self.encoding, "surrogateescape"))
            added = self.encode_new(piece)
            out += [self.raw[copied:at_byte], added]
            expected += [self.text[chars:at], added.decode(self.encoding)]
            at_byte += len(self.text[at:end].encode(self.encoding, "surrogateescape"))
            chars, copied = end, at_byte
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
    except (UnicodeError, LookupError) as exc:  # a codec that is no text encoding, should one get through
        raise PageError(f"cannot be read in {encoding} ({exc})") from None
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
        name = codecs.lookup(_WEB_ALIASES.get(label, label)).name
    except LookupError:
        return "utf-8"  # a label no one knows: ignored, as a browser ignores it
    if name not in WEB_ENCODINGS:
        raise PageError(f'its <meta charset="{label[:40]}"> names no text encoding of the web, so it was '
                        "left as it is")
    return name
