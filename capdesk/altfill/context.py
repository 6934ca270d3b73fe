"""What a document says around a picture: its figure caption, the text before and after it, and the
language it is written in.

A caption is the author's own words for what a figure shows: an HTML or EPUB ``<figcaption>`` of the
``<figure>`` the picture alone is in, a Word paragraph in the Caption style (or holding a ``SEQ``
field, which is what Insert Caption makes) next to the picture's paragraph, an OpenDocument
paragraph in a caption style (Caption, Illustration, Figure, Drawing, or one holding a
``text:sequence``) that holds the picture or follows it. The language is the document's own tag
(``<html lang>``, Word's default run language, OpenDocument's default paragraph language).
The text around a picture (``TextAround``) is the nearest text on either side in reading order: its
own paragraph's words, else the nearest block's that holds any; evidence for the person reviewing,
never words for the alt text.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable

from capdesk.altfill.spots import Spot
from capdesk.altfill.textaround import (  # noqa: F401 (said_around, CONTEXT_MAX, PICTURE_MARK: read from here too)
    CONTEXT_MAX,
    HTML_BLOCKS,
    HTML_LEFT_OUT,
    PICTURE_MARK,
    TextAround,
    said_around,
)
from capdesk.altfill.xmlscan import Part
from capdesk.altfill.zipsafe import ZipDoc, ZipRefused

XHTML = "http://www.w3.org/1999/xhtml"
SVG = "http://www.w3.org/2000/svg"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
DC = "http://purl.org/dc/elements/1.1/"
ODF_CAPTION_STYLES = {"caption", "illustration", "figure", "drawing"}
# Tags that end a word: the rest (em, span, a, text:span ...) join the text on either side.
_SPACED = re.compile(rb"<(?:/?(?:[\w.-]+:)?(?:br|p|div|li|tab|s|line-break|h\d)\b[^>]*)>")
_TAG = re.compile(rb"<[^>]*>")


def markup_text(raw: bytes, cuts: list[tuple[int, int]] | None = None) -> str:
    """The text of a piece of markup, tags taken away, ``cuts`` (offsets into ``raw``) left out, one line."""
    for a, b in sorted(cuts or [], reverse=True):
        raw = raw[:a] + b" " + raw[b:]
    raw = _TAG.sub(b"", _SPACED.sub(b" ", raw))
    return " ".join(html.unescape(raw.decode("utf-8", "replace")).split())


def _inner(part: Part, i: int, cuts: list[int] = ()) -> str:  # type: ignore[assignment]
    el = part.elements[i]
    if el.end is None:
        return ""
    spans = [(part.elements[j].start - el.tag_end, part.end_tag_end(part.elements[j]) - el.tag_end) for j in cuts]
    return markup_text(part.raw[el.tag_end:el.end], spans)


def html_caption(part: Part, i: int) -> str:
    """The figcaption of the XHTML ``<figure>`` that holds the picture ``i`` and no other picture."""
    fig = part.ancestor(i, XHTML, ("figure",))
    if fig is None:
        return ""
    below = part.descendants(fig)
    pictures = [j for j in below if (part.elements[j].ns, part.elements[j].local) in ((XHTML, "img"), (SVG, "image"))]
    if len(pictures) != 1:
        return ""
    cap = next((j for j in part.elements[fig].children
                if part.elements[j].ns == XHTML and part.elements[j].local == "figcaption"), None)
    return _inner(part, cap) if cap is not None else ""


def page_lang(part: Part) -> str:
    """An XHTML document's language: its root's ``xml:lang`` or ``lang``."""
    root = part.elements[0] if part.elements else None
    if root is None:
        return ""
    return (root.attr("lang", "http://www.w3.org/XML/1998/namespace") or root.attr("lang") or "").strip()


# Word


def word_caption_styles(z: ZipDoc) -> set[str]:
    """The style ids of Word's Caption style (its id is translated in some languages, its name is not)."""
    from capdesk.altfill.xmlscan import PartError, parse_part

    ids = {"Caption"}
    if not z.has("word/styles.xml"):
        return ids
    try:
        styles = parse_part("word/styles.xml", z.read("word/styles.xml"), z.budget)
    except (PartError, ZipRefused):
        return ids
    for e in styles.elements:
        if e.ns == W and e.local == "style":
            name = next((styles.elements[j] for j in e.children if styles.elements[j].local == "name"), None)
            if name is not None and (name.attr("val", W) or "").strip().lower() == "caption":
                ids.add(e.attr("styleId", W) or "Caption")
    return ids


def _word_is_caption(part: Part, p: int, styles: set[str]) -> bool:
    for j in part.descendants(p):
        d = part.elements[j]
        if d.ns == W and d.local == "pStyle" and (d.attr("val", W) or "") in styles:
            return True
        if d.ns == W and ((d.local == "instrText" and re.match(r"\s*SEQ\b", d.text))
                          or (d.local == "fldSimple" and re.match(r"\s*SEQ\b", d.attr("instr", W) or ""))):
            return True
    return False


def _word_text(part: Part, p: int) -> str:
    bits = [part.elements[j].text if part.elements[j].local == "t" else " "
            for j in part.descendants(p) if part.elements[j].ns == W and part.elements[j].local in ("t", "tab", "br")]
    return " ".join("".join(bits).split())


def word_caption(part: Part, i: int, styles: set[str]) -> str:
    """The caption paragraph of the Word picture at element ``i``: its own paragraph when that is a
    caption, else the paragraph right after it, else the one right before."""
    p = part.ancestor(i, W, ("p",))
    if p is None or _word_pictures(part, p) > 1:
        return ""  # beside another picture: a caption there names the group, or the other one
    if _word_is_caption(part, p, styles):
        return _word_text(part, p)
    parent = part.elements[p].parent
    if parent is None:
        return ""
    kids = [k for k in part.elements[parent].children if part.elements[k].ns == W and part.elements[k].local == "p"]
    at = kids.index(p)
    if at + 1 < len(kids) and _word_is_caption(part, kids[at + 1], styles) and not _has_picture(part, kids[at + 1]):
        return _word_text(part, kids[at + 1])
    # A caption above the picture, unless it is the caption below the picture before it.
    if at >= 1 and _word_is_caption(part, kids[at - 1], styles) and not _has_picture(part, kids[at - 1]) \
            and not (at >= 2 and _has_picture(part, kids[at - 2])):
        return _word_text(part, kids[at - 1])
    return ""


def _has_picture(part: Part, p: int) -> bool:
    return any(part.elements[j].local in ("drawing", "pict", "object") and part.elements[j].ns == W
               for j in part.descendants(p))


def _word_pictures(part: Part, p: int) -> int:
    """How many pictures paragraph ``p`` holds (a picture's copy for older readers, ``mc:Fallback``, is not one)."""
    return sum(1 for j in part.descendants(p) if part.elements[j].ns == W and part.elements[j].local
               in ("drawing", "pict", "object") and part.ancestor(j, MC, ("Fallback",)) is None
               and part.ancestor(j, W, ("drawing", "pict", "object")) is None)


def word_lang(part: Part | None) -> str:
    """Word's default language: ``w:docDefaults``' run language in styles.xml."""
    if part is None:
        return ""
    for i, e in enumerate(part.elements):
        if e.ns == W and e.local == "docDefaults":
            for j in part.descendants(i):
                d = part.elements[j]
                if d.ns == W and d.local == "lang" and d.attr("val", W):
                    return (d.attr("val", W) or "").strip()
    return ""


# OpenDocument


def odf_caption_styles(part: Part) -> set[str]:
    """The paragraph styles of ``part`` that are captions: the caption styles by name, and the automatic
    styles made from them (LibreOffice writes "P3" whose parent is "Illustration")."""
    out = {s for s in ODF_CAPTION_STYLES}
    for e in part.elements:
        if e.ns == STYLE and e.local == "style":
            name = (e.attr("name", STYLE) or "")
            parent = (e.attr("parent-style-name", STYLE) or "").lower()
            if name.lower() in ODF_CAPTION_STYLES or parent in ODF_CAPTION_STYLES:
                out.add(name.lower())
    return out


def _odf_is_caption(part: Part, p: int, styles: set[str]) -> bool:
    if (part.elements[p].attr("style-name", TEXT) or "").lower() in styles:
        return True
    return any(part.elements[j].ns == TEXT and part.elements[j].local == "sequence" for j in part.descendants(p))


def _odf_pictures(part: Part, i: int) -> list[int]:
    """The picture frames (a ``draw:frame`` around a ``draw:image``) inside element ``i``."""
    return [j for j in part.descendants(i) if part.elements[j].ns == DRAW and part.elements[j].local == "frame"
            and any(part.elements[k].ns == DRAW and part.elements[k].local == "image"
                    for k in part.elements[j].children)]


def odf_caption(part: Part, frame: int, styles: set[str]) -> str:
    """The caption of the OpenDocument picture frame ``frame``, by the document's structure: the caption
    paragraph that holds it and no other picture (LibreOffice's captioned frame: the picture, then
    "Illustration 1: ..."), without the picture's own frame; else the caption paragraph right after the
    frame's paragraph when that paragraph holds this picture alone and the caption none of its own. A
    caption paragraph that holds a picture is that picture's, never its neighbour's."""
    p = part.ancestor(frame, TEXT, ("p", "h"))
    if p is None:
        return ""
    if _odf_pictures(part, p) != [frame]:
        return ""  # beside another picture: a caption there names the group, or the other one
    if _odf_is_caption(part, p, styles):
        return _inner(part, p, [frame])
    parent = part.elements[p].parent
    if parent is None:
        return ""
    kids = [k for k in part.elements[parent].children if part.elements[k].ns == TEXT and part.elements[k].local == "p"]
    at = kids.index(p)
    nxt = kids[at + 1] if at + 1 < len(kids) else None
    if nxt is None or not _odf_is_caption(part, nxt, styles) or _odf_pictures(part, nxt):
        return ""
    return _inner(part, nxt)


def odf_lang(styles: Part | None, meta: Part | None) -> str:
    """OpenDocument's language: the default paragraph style's, else the metadata's ``dc:language``."""
    for e in styles.elements if styles is not None else []:
        if e.ns == STYLE and e.local == "default-style" and e.attr("family", STYLE) == "paragraph":
            assert styles is not None
            for j in e.children:
                t = styles.elements[j]
                lang, country = t.attr("language", FO) or "", t.attr("country", FO) or ""
                if t.local == "text-properties" and lang and lang.lower() not in ("zxx", "none"):
                    return lang + (f"-{country}" if country and country.lower() != "none" else "")
    for e in meta.elements if meta is not None else []:
        if e.ns == DC and e.local == "language" and e.text.strip():
            return e.text.strip()
    return ""


def _optional(z: ZipDoc, name: str) -> Part | None:
    from capdesk.altfill.xmlscan import PartError, parse_part

    if not z.has(name):
        return None
    try:
        return parse_part(name, z.read(name), z.budget)
    except (PartError, ZipRefused):
        return None


def document_lang(z: ZipDoc, kind: str, parts: dict[str, Part]) -> str:
    """The language a Word, PowerPoint or OpenDocument file says it is written in, "" when it says none."""
    if kind == "docx":
        return word_lang(_optional(z, "word/styles.xml"))
    if kind == "pptx":
        pres = _optional(z, "ppt/presentation.xml")
        return next((e.attr("lang") or "" for e in (pres.elements if pres else []) if e.local == "defRPr"
                     and e.attr("lang")), "")
    if kind in ("odt", "odp", "ods"):
        styles = parts.get("styles.xml")  # let go of its elements once its pictures were found: read again
        return odf_lang(styles if styles is not None and styles.elements else _optional(z, "styles.xml"),
                        _optional(z, "meta.xml"))
    return ""


# The text around a picture (``textaround``): evidence for the person reviewing, never words for the alt text.


def part_text_around(part: Part, blocks: frozenset[tuple[str, str]],
                     left_out: Callable[[Part, int], bool]) -> TextAround:
    """A ``TextAround`` of an XML part: ``blocks`` the (namespace, name) of its block elements,
    ``left_out(part, i)`` whether element ``i`` (and all within it) is left out."""
    bounds: list[int] = []
    holes: list[tuple[int, int]] = []
    inside = -1  # where the hole being passed through ends
    for i, e in enumerate(part.elements):
        if e.start < inside:
            continue
        if left_out(part, i):
            inside = part.end_tag_end(e)
            holes.append((e.start, inside))
        elif (e.ns, e.local) in blocks:
            bounds += [e.start, e.end if e.end is not None else e.tag_end]
    return TextAround(part.raw, bounds, holes)


MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
SVGC = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
_BLOCKS = {
    "epub": frozenset((XHTML, n) for n in HTML_BLOCKS),
    "docx": frozenset((W, n) for n in ("p", "tbl", "tr", "tc", "body", "txbxContent", "hdr", "ftr", "comment",
                                       "footnote", "endnote")),
    "pptx": frozenset([(P, n) for n in ("sp", "pic", "graphicFrame", "grpSp", "cxnSp")] + [(A, "p")]),
    "odf": frozenset([(TEXT, n) for n in ("p", "h", "list", "list-item", "section")]
                     + [(TABLE, n) for n in ("table", "table-row", "table-cell")]
                     + [(DRAW, n) for n in ("page", "frame", "text-box", "custom-shape")]
                     + [(STYLE, n) for n in ("header", "footer", "header-left", "footer-left")]),
}
# The picture's own markup and what stands for it: the outermost of these around it, below its block.
_WRAPPERS = frozenset({(W, "drawing"), (W, "pict"), (W, "object"), (MC, "AlternateContent"), (P, "pic"),
                       (P, "graphicFrame"), (SVG, "svg"), (XHTML, "picture"), (DRAW, "frame")})
_XHTML_OUT = frozenset([(XHTML, n) for n in HTML_LEFT_OUT | {"head"}] + [(SVG, "title"), (SVG, "desc")])
# Pictures and the text boxes in them, field codes, deleted text and the copy kept for older readers.
_WORD_OUT = frozenset([(W, n) for n in ("drawing", "pict", "object", "instrText", "delText", "delInstrText",
                                        "moveFrom")] + [(MC, "Fallback")])
# Other pictures' alt text, notes, comments, tracked deletions and a slide's speaker notes.
_ODF_OUT = frozenset([(SVGC, "title"), (SVGC, "desc"), (TEXT, "note"), (TEXT, "tracked-changes"),
                      (OFFICE, "annotation"), (PRESENTATION, "notes")])


def _left_out(kind: str, word_styles: set[str]) -> Callable[[Part, int], bool]:
    if kind == "epub":
        return lambda part, i: (part.elements[i].ns, part.elements[i].local) in _XHTML_OUT
    if kind == "docx":
        def word(part: Part, i: int) -> bool:
            e = part.elements[i]
            return (e.ns, e.local) in _WORD_OUT or (e.ns == W and e.local == "p"
                                                     and _word_is_caption(part, i, word_styles))
        return word
    if kind == "pptx":
        return lambda part, i: (part.elements[i].ns, part.elements[i].local) == (MC, "Fallback")
    cache: dict[str, set[str]] = {}

    def odf(part: Part, i: int) -> bool:
        e = part.elements[i]
        if (e.ns, e.local) in _ODF_OUT:
            return True
        if e.ns == TEXT and e.local in ("p", "h"):
            styles = cache.get(part.name)
            if styles is None:
                styles = cache[part.name] = odf_caption_styles(part)
            return _odf_is_caption(part, i, styles)
        return False
    return odf


def _picture_span(part: Part, i: int) -> tuple[int, int]:
    """Where the picture whose element is ``i`` lies: the outermost element standing for it below its
    block (Word's drawing, a slide's picture shape, an OpenDocument frame, an XHTML <svg>)."""
    top: int | None = i if (part.elements[i].ns, part.elements[i].local) in _WRAPPERS else None
    j = part.elements[i].parent
    while j is not None:
        e = part.elements[j]
        if (e.ns, e.local) in _WRAPPERS:
            top = j
        if (e.ns == XHTML and e.local in HTML_BLOCKS) or (e.ns, e.local) in (
                (W, "p"), (A, "p"), (TEXT, "p"), (TEXT, "h"), (P, "spTree"), (DRAW, "page")):
            break
        j = e.parent
    el = part.elements[top if top is not None else i]
    return el.start, part.end_tag_end(el)


def part_context(kind: str, part: Part, spots: list[Spot], word_styles: set[str] | frozenset[str] = frozenset()
                 ) -> None:
    """Each of ``spots``' ``context`` (pictures of ``part``): the text before and after it in the part
    (EPUB chapters, Word, PowerPoint, OpenDocument text and presentations; spreadsheets' drawings hold
    none). ``word_styles``: Word's caption styles, whose paragraphs are said apart."""
    family = "odf" if kind in ("odt", "odp") else kind
    if family not in _BLOCKS or not spots:
        return
    around = part_text_around(part, _BLOCKS[family], _left_out(family, set(word_styles)))
    starts = [e.start for e in part.elements]
    for spot in spots:
        i = bisect.bisect_left(starts, spot.tag_start)
        if i < len(part.elements) and part.elements[i].start == spot.tag_start:
            spot.context = around.around(*_picture_span(part, i), spot.caption)
