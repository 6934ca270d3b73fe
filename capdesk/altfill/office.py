"""The pictures of Word (``.docx``), PowerPoint (``.pptx``) and OpenDocument (``.odt``, ``.odp``)
files, and where their alt text goes.

Word keeps a picture's alt text in ``wp:docPr/@descr``, PowerPoint in ``p:cNvPr/@descr`` of a
``p:pic``; the picture itself is the ``a:blip`` whose ``r:embed`` the part's relationships resolve.
OpenDocument keeps it in the ``svg:desc`` (and ``svg:title``) of the ``draw:frame`` around a
``draw:image``. A text that is only a file name is no alt text (PowerPoint writes one); a picture
marked decorative (Office's ``adec:decorative val="1"``, LibreOffice's ``loext:decorative``) is
left as it is.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

from capdesk.altfill.context import odf_caption, odf_caption_styles, part_context, word_caption, word_caption_styles
from capdesk.altfill.picture_ids import frame_id, make_unique, shape_id
from capdesk.altfill.spots import Spot, is_file_name, resolve_in_package
from capdesk.altfill.xmlscan import Element, Part, PartError, escape, parse_part
from capdesk.altfill.zipsafe import ZipDoc, ZipRefused

WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
SVGC = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
XLINK = "http://www.w3.org/1999/xlink"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
ODF_OBJECT_PREVIEW = ("an embedded object (a formula, chart or spreadsheet): its picture is only a preview of the "
                      "object, skipped; give the object its alt text in LibreOffice")
VML = "urn:schemas-microsoft-com:vml"
O = "urn:schemas-microsoft-com:office:office"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
WORD_PARTS = re.compile(r"^word/(document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml$")
GRAPHIC_NAMES = {"chart": "a chart", "diagram": "a SmartArt diagram"}
GRAPHIC_SKIP = ("{kind}, drawn from its data rather than a picture: CapDesk does not describe it; write its alt "
                "text in the review file (--review-out) or in the program that made it")
OBJECT_PREVIEW = ("an embedded object (OLE): its picture is only a preview of the object, skipped; "
                  "give the object its alt text in Word")


def find_office(z: ZipDoc, kind: str) -> tuple[dict[str, Part], list[Spot]]:
    """The parts read and every picture in them, for ``kind`` docx, pptx, xlsx, odt, odp or ods."""
    if kind == "docx":
        names = sorted((n for n in z.names() if WORD_PARTS.match(n)), key=lambda n: (n != "word/document.xml", n))
        return _ooxml(z, [(n, "") for n in names], "docPr", WP, word_caption_styles(z), kind)
    if kind == "pptx":
        return _ooxml(z, [(n, f"slide {i}") for i, n in enumerate(_slides(z), 1)] + _masters(z), "cNvPr", P, None,
                      kind)
    if kind == "xlsx":
        return _ooxml(z, _sheet_drawings(z), "cNvPr", XDR, None, kind)
    return _odf(z, kind)


def _sheet_drawings(z: ZipDoc) -> list[tuple[str, str]]:
    """A workbook's drawing parts (where its pictures are), each named by the sheet that shows it."""
    sheets: list[tuple[str, str]] = []
    if z.has("xl/workbook.xml"):
        rels = _rels(z, "xl/workbook.xml")
        book = parse_part("xl/workbook.xml", z.read("xl/workbook.xml"), z.budget)
        sheets = [(e.attr("name") or "", rels.get(e.attr("id", R) or "", ("", True))[0])
                  for e in book.elements if e.local == "sheet"]
    out: list[tuple[str, str]] = []
    for sheet, part in sheets:
        for target, external in _rels(z, part).values():
            if not external and re.fullmatch(r"xl/drawings/drawing\d+\.xml", target) and z.has(target):
                out.append((target, f"sheet {sheet!r}"))
    seen = {t for t, _ in out}
    out += [(n, n) for n in sorted(z.names()) if re.fullmatch(r"xl/drawings/drawing\d+\.xml", n) and n not in seen]
    return out


def _rels(z: ZipDoc, part: str) -> dict[str, tuple[str, bool]]:
    """A part's relationships: id -> (target entry, or the address when external; external?)."""
    name = posixpath.join(posixpath.dirname(part), "_rels", posixpath.basename(part) + ".rels")
    if not z.has(name):
        return {}
    out: dict[str, tuple[str, bool]] = {}
    for e in parse_part(name, z.read(name), z.budget).elements:
        if e.local == "Relationship" and e.attr("Id") and e.attr("Target") is not None:
            target = e.attr("Target") or ""
            if (e.attr("TargetMode") or "") == "External":
                out[e.attr("Id") or ""] = (target, True)
            else:
                base = "" if target.startswith("/") else posixpath.dirname(part)
                out[e.attr("Id") or ""] = (posixpath.normpath(posixpath.join(base, unquote(target.lstrip("/")))),
                                           False)
    return out


def _slides(z: ZipDoc) -> list[str]:
    """The slides in the order shown (the presentation's slide list), else by their number."""
    if z.has("ppt/presentation.xml"):
        rels = _rels(z, "ppt/presentation.xml")
        pres = parse_part("ppt/presentation.xml", z.read("ppt/presentation.xml"), z.budget)
        order = [rels.get(e.attr("id", R) or "", ("", True)) for e in pres.elements if e.ns == P and e.local == "sldId"]
        slides = [t for t, ext in order if not ext and z.has(t)]
        if slides:
            return slides
    found = [n for n in z.names() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
    return sorted(found, key=lambda n: int(re.sub(r"\D", "", posixpath.basename(n)) or 0))


def _masters(z: ZipDoc) -> list[tuple[str, str]]:
    """The slide masters and layouts, whose pictures (a logo, a background photo) every slide built on them
    shows: (part, where a person finds it)."""
    out = []
    for folder, said in (("slideMasters/slideMaster", "slide master"), ("slideLayouts/slideLayout", "slide layout")):
        numbered = [(int(m.group(1)), n) for n in z.names() if (m := re.fullmatch(rf"ppt/{folder}(\d+)\.xml", n))]
        out += [(n, f"{said} {k}") for k, n in sorted(numbered)]
    return out


def _decorative(part: Part, i: int, spot: Spot) -> str:
    """Word's decorative mark; the edit that turns it off (val="0") once the picture has alt text."""
    for j in part.descendants(i):
        d = part.elements[j]
        if d.local == "decorative" and (d.attr("val") or "").strip().lower() in ("1", "true"):
            span = part.attr_span(d, "val")
            spot.also += [(span[0], span[1], "0")] if span else []
            return 'marked decorative (decorative val="1")'
    return ""


def _ooxml(z: ZipDoc, parts: list[tuple[str, str]], holder: str, ns: str,
           captions: set[str] | None, kind: str) -> tuple[dict[str, Part], list[Spot]]:
    """The pictures of Word's or PowerPoint's parts, each with the text around it; with ``captions``
    (Word's caption styles), each with the caption paragraph beside it. Charts and SmartArt diagrams
    are listed too: their alt text is a person's to write (the review file can carry it). The parts
    are read one at a time, each let go of once its pictures are found."""
    read: dict[str, Part] = {}
    spots: list[Spot] = []
    names = set(z.names())
    for name, where in parts:
        part = parse_part(name, z.read(name), z.budget)
        rels = _rels(z, name)
        counts = {"picture": 0, "chart": 0, "diagram": 0}
        found: list[Spot] = []
        for i, el in enumerate(part.elements):
            spot = _ooxml_at(part, i, el, holder, ns, rels, names, where, counts)
            if spot is None:
                continue
            if captions is not None:
                spot.caption = word_caption(part, i, captions)
            found.append(spot)
        make_unique(found)
        part_context(kind, part, found, captions or set())
        read[name] = part.released(keep_raw=bool(found))
        spots += found
    return read, spots


def _ooxml_at(part: Part, i: int, el: Element, holder: str, ns: str, rels: dict[str, tuple[str, bool]],
              names: set[str], where: str, counts: dict[str, int]) -> Spot | None:
    """The picture (or chart, or diagram) whose element is ``i``, if it is one."""
    if el.local == "imagedata" and el.ns == VML and holder == "docPr":
        spot = _vml_spot(part, i, rels, names, counts["picture"] + 1, part.name)
        counts["picture"] += spot is not None
        return spot
    graphic = _graphic_kind(el)
    if el.ns not in (PIC, P, A, XDR) or (el.local != "pic" and not graphic):
        return None
    # Word: the docPr belongs to the wp:inline/wp:anchor around the picture; PowerPoint: the p:pic's own
    # p:nvPicPr holds the p:cNvPr (a chart's p:graphicFrame its p:nvGraphicFramePr's).
    box = part.ancestor(i, WP, ("inline", "anchor")) if holder == "docPr" else (
        part.ancestor(i, ns, ("graphicFrame",)) if graphic else i)
    below = part.descendants(box) if box is not None else []
    k = next((j for j in below if part.elements[j].local == holder and part.elements[j].ns == ns), None)
    if k is None:
        return None
    kind = graphic or "picture"
    counts[kind] += 1
    loc = where or _word_place(part.name, counts[kind], kind)
    if graphic:
        spot = _ooxml_spot(part, k, "", loc, rels, names)
        spot.src, spot.picture, spot.missing = f"{kind} {counts[kind]}", None, ""
        spot.skip = GRAPHIC_SKIP.format(kind=GRAPHIC_NAMES[kind])
        return spot
    blip = next((part.elements[j] for j in part.descendants(i)
                 if part.elements[j].local == "blip" and part.elements[j].ns == A), None)
    if blip is None:
        counts[kind] -= 1
        return None
    return _ooxml_spot(part, k, blip.attr("embed", R) or blip.attr("link", R) or "", loc, rels, names)


def _graphic_kind(el: Element) -> str:
    """"chart" or "diagram" for the a:graphicData of a chart or a SmartArt diagram, else ""."""
    if el.ns != A or el.local != "graphicData":
        return ""
    uri = el.attr("uri") or ""
    return "chart" if uri.endswith("/chart") else "diagram" if uri.endswith("/diagram") else ""


def _word_place(name: str, n: int, kind: str = "picture") -> str:
    return f"{kind} {n}" if name == "word/document.xml" else f"{name}, {kind} {n}"


def _vml_spot(part: Part, i: int, rels: dict[str, tuple[str, bool]], names: set[str], n: int,
              name: str) -> Spot | None:
    """An old-style (VML) picture: a ``v:imagedata`` in a ``v:shape`` in a ``w:pict``, its alt text the shape's
    ``alt``. The VML copy Word keeps for older readers (``mc:Fallback``) is the same picture again: left out.

    ``alt`` is where Word keeps a VML picture's alt text and where ECMA-376 puts a long description (Part 1,
    J.5.1.1; ``title`` is the caption). The ``v:imagedata``'s ``o:title`` is the picture's own title (Word
    often fills it with the inserted file's name), so it is left as it is. LibreOffice shows the alt text
    of none of them: its VML import reads ``o:title`` alone and never hands it on to the picture."""
    if part.ancestor(i, MC, ("Fallback",)) is not None:
        return None
    shape = part.elements[i].parent
    if shape is None or part.elements[shape].ns != VML:
        return None
    data = part.elements[i]
    rid = data.attr("id", R) or data.attr("relid", O) or ""
    spot = _ooxml_spot(part, shape, rid, _word_place(name, n), rels, names, "alt")
    if part.ancestor(i, W, ("object",)) is not None and not spot.alt:
        spot.skip, spot.picture, spot.missing = OBJECT_PREVIEW, None, ""
    return spot


def _ooxml_spot(part: Part, k: int, rid: str, loc: str, rels: dict[str, tuple[str, bool]],
                names: set[str], holder: str = "descr") -> Spot:
    """The picture whose alt text is ``holder`` (descr; a VML shape's alt) of element ``k``."""
    nv = part.elements[k]
    target, external = rels.get(rid, ("", False))
    tag = part.tag(nv)
    spot = Spot(part.name, nv.line, nv.column, loc, target or rid, tag, nv.start)
    spot.picture_id = shape_id(part.name, "v:shape id" if holder == "alt" else f"{nv.local} id", nv.attr("id"), k)
    if external:
        spot.skip = "a linked picture outside the document: skipped"
    elif not target:
        spot.missing = f"its picture's relationship {rid!r} is missing"
    elif target not in names:
        spot.missing = f"no such picture in the document ({target})"
    else:
        spot.picture = target
    spot.decorative = _decorative(part, k, spot)
    descr = nv.attr(holder)
    span = part.attr_span(nv, holder)
    if descr is not None and descr.strip() and not is_file_name(descr, spot.picture):
        spot.alt = descr
    elif span is not None:  # empty, or only a file name: the value is replaced
        spot.placeholder = bool(descr and descr.strip())
        spot.at, spot.cut, spot.make = span[0], span[1], escape
    else:
        at = part.attr_insert_at(nv)
        spot.at = spot.cut = at
        spot.make = lambda t: f' {holder}="{escape(t)}"'
    return spot


def _odf(z: ZipDoc, kind: str) -> tuple[dict[str, Part], list[Spot]]:
    if z.has("META-INF/manifest.xml") and b"encryption-data" in z.read("META-INF/manifest.xml"):
        raise ZipRefused("password-protected (its parts are encrypted), so it was left as it is")
    if not z.has("content.xml"):
        raise ZipRefused("no content.xml: not an OpenDocument file, or a damaged one")
    names = set(z.names())
    read: dict[str, Part] = {}
    spots: list[Spot] = []
    # content.xml holds the text; styles.xml the master pages, whose headers, footers and backgrounds
    # (a logo on every page) are pictures a reader meets too.
    for name in ("content.xml", "styles.xml"):
        if name == "styles.xml" and not z.has(name):
            continue
        try:
            part = parse_part(name, z.read(name), z.budget)
        except PartError:
            if name == "content.xml":
                raise
            continue  # the text's pictures are still filled; styles.xml is left as it is
        found = _odf_part(part, kind, names)
        part_context(kind, part, found)
        read[name] = part.released(keep_raw=bool(found))
        spots += found
    return read, spots


def _odf_part(part: Part, kind: str, names: set[str]) -> list[Spot]:
    spots: list[Spot] = []
    captions = odf_caption_styles(part)
    pages = [i for i, e in enumerate(part.elements) if e.ns == DRAW and e.local == "page"]
    n = frames = 0
    for i, frame in enumerate(part.elements):
        frames += frame.ns == DRAW and frame.local == "frame"
        if frame.ns != DRAW or frame.local != "frame" or frame.end is None:
            continue
        kids = [part.elements[j] for j in frame.children]
        images = [k for k in kids if k.ns == DRAW and k.local == "image"]
        if not images:
            continue
        # LibreOffice keeps an SVG picture with a PNG copy after it in the same frame, for readers that draw
        # no SVG: the copy is what CapDesk can describe, and the frame's text is the same either way.
        image = next((k for k in images if not (k.attr("href", XLINK) or "").lower().endswith(".svg")), images[0])
        n += 1
        loc = _odf_place(part, i, kind, pages, n)
        name = frame.attr("name", DRAW)
        loc += f" ({name})" if name else ""
        spot = _odf_spot(part, frame, image, kids, loc, names)
        spot.picture_id = frame_id(part.name, frames, name)
        if any(k.ns == DRAW and k.local in ("object", "object-ole") for k in kids) and not spot.alt:
            spot.skip, spot.picture, spot.missing = ODF_OBJECT_PREVIEW, None, ""
        spot.caption = odf_caption(part, i, captions)
        spots.append(spot)
    return spots


def _odf_place(part: Part, i: int, kind: str, pages: list[int], n: int) -> str:
    if part.name == "styles.xml":
        box = part.ancestor(i, STYLE, ("header", "footer", "header-left", "footer-left", "header-first",
                                         "footer-first"))
        master = part.ancestor(i, STYLE, ("master-page",))
        mname = part.elements[master].attr("name", STYLE) or "" if master is not None else ""
        if box is None:
            return f"master page {mname!r}, picture {n}"
        return f"{part.elements[box].local.replace('-', ' ')} of page style {mname!r}, picture {n}"
    page = part.ancestor(i, DRAW, ("page",))
    table = part.ancestor(i, TABLE, ("table",)) if kind == "ods" else None
    if table is not None:
        return f"sheet {part.elements[table].attr('name', TABLE) or ''!r}, picture {n}"
    return f"page {pages.index(page) + 1}" if kind == "odp" and page is not None else f"picture {n}"


def _odf_spot(part: Part, frame: Element, image: Element, kids: list[Element], loc: str, names: set[str]) -> Spot:
    src = image.attr("href", XLINK) or ""
    spot = Spot(part.name, frame.line, frame.column, loc, src, part.tag(frame), frame.start)
    if not src:
        spot.skip = "a picture inside the XML (office:binary-data): skipped"
    else:
        spot.picture, spot.skip, spot.missing = resolve_in_package(src.removeprefix("./"), "content.xml", names)
    mark = next((k for k, v in frame.attrs.items() if k.endswith(" decorative") and v.strip().lower() == "true"), "")
    if mark:
        spot.decorative = 'marked decorative (decorative="true")'
        prefix = part.prefix_for(frame, mark.split(" ")[0])
        span = part.attr_span(frame, f"{prefix}:decorative" if prefix else "decorative")
        spot.also += [(span[0], span[1], "false")] if span else []
    title = next((k for k in kids if k.ns == SVGC and k.local == "title"), None)
    desc = next((k for k in kids if k.ns == SVGC and k.local == "desc"), None)
    said = [k.text.strip() for k in (title, desc) if k is not None and k.text.strip()]
    good = [t for t in said if not is_file_name(t, spot.picture)]
    if good:
        spot.alt = good[0]
        return spot
    prefix = part.prefix_for(frame, SVGC)
    qname = f"{prefix}:desc" if prefix else "desc"
    decl = "" if prefix is not None else f' xmlns="{SVGC}"'
    if desc is None and title is not None and title.text.strip():
        desc = title  # a title that is only a file name is what a reader shows: it is the one replaced
    if desc is not None:
        spot.placeholder = bool(desc.text.strip())
        if desc.end is None or desc.children:
            spot.problem = "an svg:desc CapDesk cannot write into exactly"
        else:
            spot.at, spot.cut, spot.make = desc.tag_end, desc.end, escape
        return spot
    # ODF's order inside a frame: ..., svg:title, svg:desc, then a contour if any.
    contour = next((k for k in kids if k.ns == DRAW and k.local in ("contour-polygon", "contour-path")), None)
    at = part.end_tag_end(title) if title is not None else (contour.start if contour is not None else frame.end)
    assert at is not None
    spot.at = spot.cut = at
    spot.make = lambda t: f"<{qname}{decl}>{escape(t)}</{qname}>"
    return spot
