"""The pictures of an EPUB 2 or 3: the ``<img>`` of its XHTML content documents (by the same rules
as a web page's) and the SVG ``<image>`` they hold (named by a ``<title>``), found through the
package: ``META-INF/container.xml`` names the package document, whose manifest lists the content
documents and the pictures; an address is read relative to its content document and must name a
picture of the package.

An EPUB under DRM (``META-INF/rights.xml``, or ``encryption.xml`` encrypting more than fonts) is
refused whole: its chapters cannot be read, and a changed one would no longer open.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from urllib.parse import unquote

from capdesk.altfill.context import html_caption, page_lang, part_context
from capdesk.altfill.html_images import image_from_tag
from capdesk.altfill.picture_ids import part_picture_id
from capdesk.altfill.rows import foreign
from capdesk.altfill.spots import Spot, resolve_in_package
from capdesk.altfill.xmlscan import Element, Part, escape, parse_part
from capdesk.altfill.zipsafe import ZipDoc, ZipRefused

XHTML = "http://www.w3.org/1999/xhtml"
SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
OPF = "http://www.idpf.org/2007/opf"
CONTAINER_NS = "urn:oasis:names:tc:opendocument:xmlns:container"
ENC_NS = "http://www.w3.org/2001/04/xmlenc#"
# Font obfuscation (IDPF's and Adobe's) is listed in encryption.xml too, and is no DRM.
FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
FEATURE = "schema:accessibilityFeature"
ALTERNATIVE_TEXT = "alternativeText"


@dataclass
class Epub:
    opf: Part
    version: str
    spots: list[Spot] = field(default_factory=list)
    parts: dict[str, Part] = field(default_factory=dict)
    has_feature: bool = False  # the package already says its pictures have alt text
    lang: str = ""  # the book's language (its package's dc:language)
    fragments: list[str] = field(default_factory=list)  # manifest links written with a #fragment


def find_epub(z: ZipDoc) -> Epub:
    """Every picture of the EPUB's content documents; ``ZipRefused``/``PartError`` for a book that cannot be read."""
    if z.has("META-INF/rights.xml"):
        raise ZipRefused("protected by DRM (META-INF/rights.xml), so it was left as it is")
    hidden = _encrypted(z)
    container = parse_part("META-INF/container.xml", _need(z, "META-INF/container.xml"), z.budget)
    roots = [e.attr("full-path") for e in container.elements if e.local == "rootfile" and e.attr("full-path")]
    if not roots:
        raise ZipRefused("META-INF/container.xml names no package document")
    opf_name = posixpath.normpath(unquote(roots[0] or ""))
    opf = parse_part(opf_name, _need(z, opf_name), z.budget)
    package = opf.elements[0] if opf.elements else None
    if package is None or package.local != "package" or package.ns != OPF:
        raise ZipRefused(f"{opf_name} is no EPUB package document")
    book = Epub(opf, package.attr("version") or "")
    book.lang = next((e.text.strip() for e in opf.elements if e.local == "language" and e.text.strip()), "")
    names = set(z.names())
    items: dict[str, tuple[str, str]] = {}  # id -> (entry, media type)
    for e in opf.elements:
        # A manifest link names a file: a #fragment some tools write after it (chapter.xhtml#start)
        # points into the file, and the file is what is read.
        href = (e.attr("href") or "").split("#", 1)[0]
        if e.ns == OPF and e.local == "item" and "#" in (e.attr("href") or ""):
            book.fragments.append(e.attr("href") or "")
        if e.ns == OPF and e.local == "item" and href:
            entry = posixpath.normpath(posixpath.join(posixpath.dirname(opf_name), unquote(href)))
            items[e.attr("id") or entry] = (entry, (e.attr("media-type") or "").strip().lower())
        elif e.ns == OPF and e.local == "meta" and _says_alt_text(e):
            book.has_feature = True
    spine = [e.attr("idref") for e in opf.elements if e.ns == OPF and e.local == "itemref"]
    order = [i for i in spine if i in items] + [i for i in items if i not in spine]
    listed = {entry for entry, _ in items.values()}
    pictures = {entry for entry, media in items.values() if media.startswith("image/")}
    for item in order:
        entry, media = items[item]
        if media != "application/xhtml+xml" and not (media == "image/svg+xml" and item in spine):
            continue
        if entry in hidden:
            continue
        if entry not in names:
            raise ZipRefused(f"its content document {entry} is missing from the zip")
        part = parse_part(entry, z.read(entry), z.budget)
        lang = page_lang(part) or book.lang
        found: list[Spot] = []
        for i, el in enumerate(part.elements):
            if el.ns == XHTML and el.local == "img":
                found.append(_img(part, el, names & listed, pictures, foreign(lang)))
            elif el.ns == SVG and el.local == "image":
                found.append(_svg_image(part, i, el, names & listed, pictures, foreign(lang)))
            else:
                continue
            found[-1].caption = html_caption(part, i)
            found[-1].picture_id = part_picture_id(entry, len(found))
        # The chapter's text around each picture read now, and its elements let go: a book's memory
        # does not grow with its chapters.
        part_context("epub", part, found)
        book.parts[entry] = part.released(keep_raw=bool(found))
        book.spots += found
    return book


def _need(z: ZipDoc, name: str) -> bytes:
    if not z.has(name):
        raise ZipRefused(f"no {name}: not an EPUB, or a damaged one")
    return z.read(name)


def _encrypted(z: ZipDoc) -> set[str]:
    """The entries encryption.xml lists; ``ZipRefused`` when any is encrypted for more than font obfuscation."""
    if not z.has("META-INF/encryption.xml"):
        return set()
    enc = parse_part("META-INF/encryption.xml", z.read("META-INF/encryption.xml"), z.budget)
    listed: set[str] = set()
    for i, e in enumerate(enc.elements):
        if e.ns != ENC_NS or e.local != "EncryptedData":
            continue
        below = [enc.elements[j] for j in enc.descendants(i)]
        algorithms = {d.attr("Algorithm") for d in below if d.local == "EncryptionMethod"}
        if not algorithms or not algorithms <= FONT_OBFUSCATION:
            raise ZipRefused("encrypted (DRM: META-INF/encryption.xml), so it was left as it is")
        listed |= {unquote(d.attr("URI") or "") for d in below if d.local == "CipherReference"}
    return listed


def _says_alt_text(meta: Element) -> bool:
    if (meta.attr("property") or "").strip() == FEATURE:
        return meta.text.strip() == ALTERNATIVE_TEXT
    return (meta.attr("name") or "").strip() == FEATURE and (meta.attr("content") or "").strip() == ALTERNATIVE_TEXT


def _place(spot: Spot, src: str, names: set[str], pictures: set[str]) -> None:
    entry, spot.skip, spot.missing = resolve_in_package(src, spot.part, names)
    if entry is not None and entry not in pictures:
        spot.skip = f"{entry} is not listed as a picture in the package's manifest: skipped"
        entry = None
    spot.picture = entry


def _img(part: Part, el: Element, names: set[str], pictures: set[str], foreign_page: bool) -> Spot:
    tag = part.tag(el)
    f = image_from_tag(tag, 0, el.line, el.column)
    spot = Spot(part.name, el.line, el.column, f"{part.name}, line {el.line}", f.src or "", tag, el.start,
                alt=None if f.placeholder else f.alt, decorative=f.decorative, labelled=f.labelled,
                placeholder=f.placeholder)
    if f.fill is not None and f.at >= 0:
        at = el.start + len(tag[:f.at].encode("utf-8"))
        spot.at, spot.make = at, f.fill
        spot.cut = el.start + len(tag[:f.end].encode("utf-8"))
        spot.also = [(el.start + len(tag[:a].encode("utf-8")), el.start + len(tag[:b].encode("utf-8")), "")
                     for a, b in f.drops]
        if foreign_page and not f.has_lang:  # English in a chapter in another language says so
            spot.make_en = lambda t: f.insertion(t, "en", xml=True)
    else:
        spot.problem = "no place to write alt text in this tag (it has no src)"
    _place(spot, f.src or "", names, pictures)
    return spot


def _svg_image(part: Part, i: int, el: Element, names: set[str], pictures: set[str], foreign_page: bool) -> Spot:
    src = el.attr("href", XLINK) or el.attr("href") or ""
    tag = part.tag(el)
    spot = Spot(part.name, el.line, el.column, f"{part.name}, line {el.line}", src, tag, el.start)
    role = (el.attr("role") or "").strip().lower()
    hidden = (el.attr("aria-hidden") or "").strip() == "true"
    if role in ("presentation", "none"):
        spot.decorative = f'role="{role}"'
    elif hidden:
        spot.decorative = 'aria-hidden="true"'
    for name, on in (("role", role in ("presentation", "none")), ("aria-hidden", hidden)):
        span = part.attr_whole_span(el, name) if on else None
        spot.also += [(span[0], span[1], "")] if span else []
    spot.labelled = next((n for n in ("aria-label", "aria-labelledby") if (el.attr(n) or "").strip()), "")
    titles = [part.elements[j] for j in el.children if part.elements[j].ns == SVG and part.elements[j].local == "title"]
    qname = f"{el.prefix}:" if el.prefix else ""
    if titles and titles[0].text.strip():
        spot.alt = titles[0].text.strip()
    elif titles and titles[0].end is not None and not titles[0].children and titles[0].end == titles[0].tag_end:
        spot.at = spot.cut = titles[0].tag_end  # <title></title>: the text goes between
        spot.make = escape
    elif titles:
        spot.problem = "an empty <title> CapDesk cannot write into exactly"
    else:
        # <image .../> becomes <image ...><title>...</title></image>; English in a chapter in another
        # language says so on the title it gets (xml:lang, which every SVG element may carry).
        head, tail = (">", f"</{qname}image>") if el.self_closing else ("", "")
        spot.at, spot.cut = (el.tag_end - 2, el.tag_end) if el.self_closing else (el.tag_end, el.tag_end)
        spot.make = lambda t: f"{head}<{qname}title>{escape(t)}</{qname}title>{tail}"
        if foreign_page:
            spot.make_en = lambda t: f'{head}<{qname}title xml:lang="en">{escape(t)}</{qname}title>{tail}'
    _place(spot, src, names, pictures)
    return spot


def metadata_edit(book: Epub) -> tuple[int, str] | None:
    """Where and what to insert so the package says its pictures have alt text (and nothing else)."""
    if book.has_feature:
        return None
    opf = book.opf
    meta = next((e for e in opf.elements if e.ns == OPF and e.local == "metadata" and e.end is not None), None)
    if meta is None:
        return None
    name = f"{meta.prefix}:meta" if meta.prefix else "meta"
    if book.version.startswith("2"):
        piece = f'<{name} name="{FEATURE}" content="{ALTERNATIVE_TEXT}"/>'
    else:
        piece = f'<{name} property="{FEATURE}">{ALTERNATIVE_TEXT}</{name}>'
    assert meta.end is not None
    head = opf.raw[:meta.end]
    nl = head.rfind(b"\n")
    if nl < 0 or head[nl + 1:].strip():  # the end tag follows text on its line: insert right before it
        return meta.end, piece
    # After the last child's line break, indented as that child is: the file reads as if written so.
    last = opf.elements[meta.children[-1]] if meta.children else None
    indent = b""
    if last is not None:
        ls = opf.raw.rfind(b"\n", 0, last.start) + 1
        indent = opf.raw[ls:last.start] if not opf.raw[ls:last.start].strip() else b""
    return nl, "\n" + indent.decode("utf-8") + piece
