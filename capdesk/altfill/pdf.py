"""Alt text for the figures of a tagged PDF: each ``/Figure`` structure element without ``/Alt`` gets
the description of the picture it stands for, written as an incremental update.

A PDF is read with pypdf. Only a tagged PDF (``/MarkInfo /Marked true`` and a structure tree) has a
place for alt text; an untagged one is named in one line and left as it is. Role-mapped types count
by what they map to. The picture of a Figure is found by its marked content (the MCIDs of its
``/K`` on its page, the images drawn inside them); a Figure with no marked content of its own (as
LibreOffice writes a picture drawn as an artifact) is matched to the image drawn at its ``/BBox``
attribute's place on its page. Content marked ``/Artifact`` that no Figure stands for is decoration
and is left alone.

A Figure's caption goes with its picture as the caption of a document's figure does: a ``Caption``
element (or one named as a caption paragraph style, as LibreOffice names its ``Caption`` and
``Illustration`` paragraphs) inside the Figure, right after it (or after the paragraph it is alone
in), or right before it when that caption is not the one of the figure before; or the caption
paragraph the Figure is alone in (LibreOffice's captioned frame). Its text is the element's
``/ActualText`` or ``/Alt``, else the text drawn in its marked content, read by MCID; a marked-content
piece whose text cannot be told apart from another's is left out, and a caption left with no text
is none.

The update is appended after the file's last byte: the changed structure elements (each with
``/Alt``), then a cross-reference section of the kind the file already uses and a trailer whose
``/Prev`` points at the original one, so the original bytes stay a prefix of the result and a
signature over them stays valid. The file is replaced in one step, only if it still holds the
bytes that were read, its original kept in the backup folder first.
"""

from __future__ import annotations

import hashlib
import io
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill.backups import write_change
from capdesk.altfill.context import said_around
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow, foreign, language_note
from capdesk.altfill.spots import is_file_name
from capdesk.altfill.zipsafe import MAX_DOCUMENT_BYTES
from capdesk.imageio import MAX_PIXELS

NOT_TAGGED = "not tagged: it has no structure for alt text to belong to"
MAX_ELEMENTS = 200_000  # structure elements walked; a real book has a few thousand
MAX_FORM_DEPTH = 4  # forms drawn inside forms, followed this deep for the pictures they draw


class PdfRefused(Exception):
    """A PDF that cannot be filled as a whole (encrypted, unreadable, not tagged)."""


@dataclass
class Draw:
    """One image drawn on a page: the marked-content ids it is inside, where it lands, its stream."""

    mcids: tuple[int, ...]
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the page's default space
    image: object  # the pypdf image XObject
    name: str


@dataclass
class Figure:
    ref: object  # the structure element's indirect reference (what the update rewrites)
    page: int  # 1-based
    number: int  # 1-based, in reading order
    alt: str | None
    draw: Draw | None = None
    found_by: str = ""  # how its picture was found: "marked content" | "bounding box"
    problem: str = ""
    text: str = ""  # the alt text to write
    lang: str = ""  # the language its alt text is marked with (/Lang), in a PDF in another language
    has_lang: bool = False  # it says its own language already
    caption: str = ""  # the text of its caption element, when it has one
    context: str = ""  # the text of the paragraphs before and after it, for the person reviewing

    @property
    def location(self) -> str:
        return f"page {self.page}, figure {self.number}"

    @property
    def src(self) -> str:
        """The picture as the report names it: its page and the image's resource name there."""
        return f"page {self.page}, {self.draw.name.lstrip('/')}" if self.draw is not None else f"page {self.page}"


@dataclass
class PdfDoc:
    path: Path
    row: PageRow
    raw: bytes = b""
    digest: str = ""
    reader: object = None
    figures: list[Figure] = field(default_factory=list)
    rows: list[ImageRow] = field(default_factory=list)
    edits: list[tuple[Figure, ImageRow]] = field(default_factory=list)


def is_pdf(path: Path) -> bool:
    return path.suffix.lower() == ".pdf"


def scan_pdf(path: Path) -> PdfDoc:
    """Read a PDF and find its Figures; one that cannot be read, or is not tagged, has its row's error."""
    doc = PdfDoc(path, PageRow(str(path), "unchanged", kind="pdf"))
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise PdfRefused("not a regular file")
        if st.st_size > MAX_DOCUMENT_BYTES:
            raise PdfRefused(f"too large ({st.st_size:,} bytes)")
        doc.raw = path.read_bytes()
        doc.digest = doc.row.sha256 = hashlib.sha256(doc.raw).hexdigest()
        doc.reader, doc.figures = _read(doc.raw)
        doc.row.lang = _lang(doc.reader)
    except PdfRefused as exc:
        doc.row.status, doc.row.error = "failed", str(exc)
    except OSError as exc:
        doc.row.status, doc.row.error = "failed", exc.strerror or str(exc)
    doc.row.images = len(doc.figures)
    return doc


def _lang(reader) -> str:
    """The document's language: the catalog's /Lang."""
    try:
        return str(reader.trailer["/Root"].get_object().get("/Lang") or "").strip()
    except Exception:  # noqa: BLE001 (a language that cannot be read is none: the figures are filled all the same)
        return ""


def _read(raw: bytes) -> tuple[object, list[Figure]]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted:
            raise PdfRefused("encrypted: it cannot be changed without its password, so it was left as it is")
        root = reader.trailer["/Root"].get_object()
        marked = root.get("/MarkInfo", {}).get_object().get("/Marked", False) if "/MarkInfo" in root else False
        tree = root.get("/StructTreeRoot")
        if not marked or tree is None:
            raise PdfRefused(NOT_TAGGED)
        figures = _figures(reader, tree.get_object())
    except PdfRefused:
        raise
    except (PyPdfError, Exception) as exc:  # a reader's own fault on a hostile file: this file's, never the run's
        raise PdfRefused(f"cannot be read as a PDF ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")\
            from exc
    return reader, figures


def _role_map(tree) -> dict[str, str]:
    rm = tree.get("/RoleMap")
    rm = rm.get_object() if rm is not None else {}
    return {str(k): str(v) for k, v in rm.items()}


def _standard(kind: str, roles: dict[str, str]) -> str:
    seen = set()
    while kind in roles and kind not in seen and roles[kind] != kind:
        seen.add(kind)
        kind = roles[kind]
    return kind


def _elements(tree) -> Iterator[tuple[object, object, object, object]]:
    """(reference, element, its page, its parent) for every structure element, in reading order; each once."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    stack: list[tuple[object, object, object]] = [(tree.get("/K"), None, tree)]
    seen: set[tuple[int, int]] = set()
    count = 0
    while stack:
        kid, pg, parent = stack.pop()
        if kid is None:
            continue
        ref = kid if isinstance(kid, IndirectObject) else None
        obj = kid.get_object()
        if isinstance(obj, ArrayObject):
            stack.extend((k, pg, parent) for k in reversed(obj))
            continue
        if not isinstance(obj, DictionaryObject) or "/S" not in obj:
            continue  # an MCID, a marked-content or object reference: content, not an element
        if ref is not None:
            key = (ref.idnum, ref.generation)
            if key in seen:
                continue
            seen.add(key)
        count += 1
        if count > MAX_ELEMENTS:
            raise PdfRefused(f"more than {MAX_ELEMENTS:,} structure elements: not read")
        page = obj.get("/Pg", pg)
        yield ref, obj, page, parent
        stack.append((obj.get("/K"), page, obj))


def _figures(reader, tree) -> list[Figure]:
    roles = _role_map(tree)
    pages = {p.indirect_reference.idnum: i for i, p in enumerate(reader.pages) if p.indirect_reference}
    draws: dict[int, list[Draw]] = {}
    out: list[Figure] = []
    captions = _Captions(reader, roles, pages)
    for ref, el, pg, parent in _elements(tree):
        if _standard(str(el.get("/S")), roles) != "/Figure":
            continue
        n = pages.get(pg.idnum) if pg is not None and hasattr(pg, "idnum") else None
        alt = el.get("/Alt")
        if alt is None and str(el.get("/ActualText") or "").strip():
            alt = el.get("/ActualText")  # a text replacement serves as its alternative (PDF/UA-1 7.3)
        fig = Figure(ref, (n or 0) + 1, len(out) + 1, None if alt is None else str(alt))
        fig.has_lang = "/Lang" in el
        out.append(fig)
        if fig.alt is None or not fig.alt.strip() or is_file_name(fig.alt):  # only a figure to fill needs it
            fig.caption = captions.of(el, parent, pg)
            fig.context = captions.around(el, parent, pg)
        if ref is None:
            fig.problem = "the element is not an object of its own, so nothing can be added to it"
        elif n is None:
            fig.problem = "it names no page, so its picture cannot be found"
        else:
            if n not in draws:
                draws[n] = list(_draws(reader, reader.pages[n]))
            _match(fig, el, draws[n], pg)
    return out


# Caption paragraph styles that LibreOffice names its structure elements after (role-mapped to /P), as
# the OpenDocument caption styles of ``context``; a standard /Caption counts whatever its name.
_CAPTION_NAMES = {"caption", "illustration", "drawing"}
_LIFTED = {"/P", "/Div"}  # a Figure alone in one of these is captioned beside it
CAPTION_CHARS = 2000  # more than any caption: a longer "caption" is a mistagged page


def _kids(el) -> list:
    """The structure elements among an element's kids, in order."""
    from pypdf.generic import ArrayObject, DictionaryObject

    k = el.get("/K") if hasattr(el, "get") else None
    kids = k.get_object() if k is not None else []
    kids = list(kids) if isinstance(kids, ArrayObject) else [kids]
    objs = (kid.get_object() if hasattr(kid, "get_object") else kid for kid in kids)
    return [o for o in objs if isinstance(o, DictionaryObject) and "/S" in o]


def _below(el, depth: int = 0) -> Iterator[object]:
    """The element and every element below it (to a depth: a caption is a paragraph, not a book)."""
    yield el
    if depth < 8:
        for kid in _kids(el):
            yield from _below(kid, depth + 1)


def _join(pieces: list[str]) -> str:
    """Text drawn in pieces (a caption's label, its number and its words are often marked apart), joined as
    read: a space between two pieces unless one already has it or the next starts with punctuation."""
    out = ""
    for p in pieces:
        if out and p and not out[-1].isspace() and not p[0].isspace() and p[0] not in ".,;:!?)]}»”’":
            out += " "
        out += p
    return " ".join(out.split())


class _Captions:
    """The caption of each Figure of one PDF, its pages' text read by MCID once each."""

    def __init__(self, reader, roles: dict[str, str], pages: dict[int, int]) -> None:
        self.reader, self.roles, self.pages = reader, roles, pages
        self.texts: dict[int, dict[int, str]] = {}

    def is_caption(self, el) -> bool:
        kind = str(el.get("/S"))
        return _standard(kind, self.roles) == "/Caption" or kind.lstrip("/").lower() in _CAPTION_NAMES

    def _has_figure(self, el) -> bool:
        return any(_standard(str(e.get("/S")), self.roles) == "/Figure" for e in _below(el))

    def of(self, fig, parent, pg) -> str:
        """The caption of the Figure ``fig`` (a kid of ``parent``), "" when it has none or its text cannot be
        had; never an error (a caption is a help, the figure is filled without one)."""
        try:
            found = self._find(fig, parent)
            return self._text(*found, pg) if found is not None else ""
        except Exception:  # noqa: BLE001 (a structure or content a reader cannot follow: no caption)
            return ""

    def _find(self, fig, parent) -> tuple[object, object | None] | None:
        """(the caption element, the Figure to leave out of its text when the caption holds it)."""
        own = next((k for k in _kids(fig) if self.is_caption(k)), None)
        if own is not None:
            return own, None
        figures = sum(1 for e in _below(parent) if _standard(str(e.get("/S")), self.roles) == "/Figure") \
            if parent is not None and "/S" in parent else 0
        if figures == 1 and self.is_caption(parent):  # the caption paragraph the picture is drawn in
            return parent, fig
        unit, up = fig, parent
        if figures == 1 and _standard(str(parent.get("/S")), self.roles) in _LIFTED:
            unit, up = parent, self._parent_of(parent)
        kids = _kids(up) if up is not None else []
        at = next((i for i, k in enumerate(kids) if k is unit), None)
        if at is None:
            return None
        if at + 1 < len(kids) and self.is_caption(kids[at + 1]):
            return kids[at + 1], None
        # A caption above the figure, unless it is the caption below the figure before it.
        if at >= 1 and self.is_caption(kids[at - 1]) and not (at >= 2 and self._has_figure(kids[at - 2])):
            return kids[at - 1], None
        return None

    def around(self, fig, parent, pg) -> str:
        """The text of the nearest element before and after the Figure among its neighbours (captions and
        other figures passed over), "" when it cannot be had. Evidence for the person reviewing: it changes
        no alt text (the caption alone is context the wording takes)."""
        try:
            unit, up = fig, parent
            if parent is not None and "/S" in parent and (self.is_caption(parent) or _standard(
                    str(parent.get("/S")), self.roles) in _LIFTED) and not any(
                    k is not fig and self._has_figure(k) for k in _kids(parent)):
                unit, up = parent, self._parent_of(parent)
            kids = _kids(up) if up is not None else []
            at = next((i for i, k in enumerate(kids) if k is unit), None)
            if at is None:
                return ""
            return said_around(self._nearest(reversed(kids[max(0, at - 6):at]), pg),
                               self._nearest(kids[at + 1:at + 7], pg))
        except Exception:  # noqa: BLE001 (a structure or content a reader cannot follow: no text around)
            return ""

    def _nearest(self, kids, pg) -> str:
        for k in kids:
            if not self.is_caption(k) and not self._has_figure(k):
                text = self._text(k, None, pg)
                if text:
                    return text
        return ""

    def _parent_of(self, el):
        p = el.get("/P")
        return p.get_object() if p is not None else None

    def _text(self, cap, leave_out, pg) -> str:
        for key in ("/ActualText", "/Alt"):
            said = " ".join(str(cap.get(key) or "").split())
            if said:
                return said[:CAPTION_CHARS]
        skip = {id(e) for e in _below(leave_out)} if leave_out is not None else set()
        pieces: list[str] = []
        own_page = cap.get("/Pg", pg)  # what the elements below it that name no page are on
        for el in _below(cap):
            if id(el) in skip:
                continue
            page = el.get("/Pg", own_page)
            n = self.pages.get(page.idnum) if page is not None and hasattr(page, "idnum") else None
            if n is not None:
                by_mcid = self._page_text(n)
                pieces += [by_mcid[m] for m in _mcids(el, page) if m in by_mcid]
        return _join(pieces)[:CAPTION_CHARS]

    def _page_text(self, n: int) -> dict[int, str]:
        if n not in self.texts:
            self.texts[n] = text_by_mcid(self.reader.pages[n])
        return self.texts[n]


def text_by_mcid(page) -> dict[int, str]:
    """The text drawn in each marked-content sequence of a page, by MCID, as pypdf reads the page's text.
    pypdf hands text on in runs; a run that holds the text of more than one MCID cannot be shared out, so
    those MCIDs are left out. A page with forms that carry MCIDs of their own (which may repeat the
    page's) is not read: {}."""
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject", {}).get_object() if resources is not None else {}
    for x in xobjects.values():
        x = x.get_object()
        if x.get("/Subtype") == "/Form" and b"/MCID" in x.get_data():
            return {}
    marks: list[int | None] = []
    pending: set[int | None] = set()
    pieces: dict[int, list[str]] = {}
    mixed: set[int | None] = set()

    def before(op: bytes, operands, _cm, _tm) -> None:
        if _follow_marks(op, operands, resources, marks):
            return
        if op in (b"Tj", b"TJ", b"'", b'"'):
            pending.add(next((m for m in reversed(marks) if m is not None), None))

    def text(t: str, *_rest) -> None:
        if not t:
            return
        if len(pending) == 1:
            mcid = next(iter(pending))
            if mcid is not None:
                pieces.setdefault(mcid, []).append(t)
        else:
            mixed.update(pending)
        pending.clear()

    page.extract_text(visitor_operand_before=before, visitor_text=text)
    return {m: _join(p) for m, p in pieces.items() if m not in mixed}


def _mcids(el, pg) -> list[int]:
    from pypdf.generic import ArrayObject, DictionaryObject

    k = el.get("/K")
    kids = k.get_object() if k is not None else []
    kids = list(kids) if isinstance(kids, ArrayObject) else [kids]
    out = []
    for kid in kids:
        obj = kid.get_object() if hasattr(kid, "get_object") else kid
        if isinstance(obj, int):
            out.append(int(obj))
        elif isinstance(obj, DictionaryObject) and obj.get("/Type") == "/MCR" and "/MCID" in obj:
            same = obj.get("/Pg") is None or getattr(obj.get("/Pg"), "idnum", None) == getattr(pg, "idnum", None)
            if same:
                out.append(int(obj["/MCID"]))
    return out


def _bbox(el) -> tuple[float, float, float, float] | None:
    attrs = el.get("/A")
    attrs = attrs.get_object() if attrs is not None else []
    for a in (attrs if isinstance(attrs, list) else [attrs]):
        a = a.get_object() if hasattr(a, "get_object") else a
        if isinstance(a, dict) and "/BBox" in a:
            x0, y0, x1, y1 = (float(v) for v in a["/BBox"])
            return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
    return None


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _match(fig: Figure, el, draws: list[Draw], pg) -> None:
    ids = set(_mcids(el, pg))
    inside = [d for d in draws if ids & set(d.mcids)]
    if inside:
        fig.draw, fig.found_by = inside[0], "marked content"
        return
    box = _bbox(el)
    if box is not None:
        best = max(draws, key=lambda d: _overlap(box, d.box), default=None)
        if best is not None and _overlap(box, best.box) >= 0.8:
            fig.draw, fig.found_by = best, "bounding box"
            return
    fig.problem = "no picture drawn for it was found on its page (by marked content or by its bounding box)"


def _mul(m: list[float], n: list[float]) -> list[float]:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return [a * a2 + b * c2, a * b2 + b * d2, c * a2 + d * c2, c * b2 + d * d2, e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2]


def _box(m: list[float]) -> tuple[float, float, float, float]:
    pts = [(m[4] + x * m[0] + y * m[2], m[5] + x * m[1] + y * m[3]) for x, y in ((0, 0), (1, 0), (0, 1), (1, 1))]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _draws(reader, page) -> Iterator[Draw]:
    yield from _draws_in(reader, page.get_contents(), page.get("/Resources"), [1.0, 0, 0, 1.0, 0, 0], (), 0)


def _mcid_of(operands, resources) -> int | None:
    props = operands[1] if len(operands) > 1 else None
    if props is not None and not hasattr(props, "get"):
        named = resources.get("/Properties", {}).get_object() if resources is not None else {}
        props = named.get(str(props)) if hasattr(named, "get") else None
    props = props.get_object() if props is not None else None
    mcid = props.get("/MCID") if hasattr(props, "get") else None
    return None if mcid is None else int(mcid)


def _follow_marks(op: bytes, operands, resources, marks: list[int | None]) -> bool:
    """Keep ``marks`` (the open marked-content sequences' MCIDs, None for one without) up to date with a
    content stream's operator; whether the operator was one of them."""
    if op == b"BDC":
        marks.append(_mcid_of(operands, resources))
    elif op == b"BMC":
        marks.append(None)
    elif op == b"EMC":
        if marks:
            marks.pop()
    else:
        return False
    return True


def _draws_in(reader, contents, resources, ctm: list[float], outer: tuple[int, ...], depth: int) -> Iterator[Draw]:
    """The images drawn by a content stream (and the forms it draws, to a depth), with their place."""
    from pypdf.generic import ContentStream

    if contents is None:
        return
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject", {}).get_object() if resources is not None else {}
    stack: list[list[float]] = []
    marks: list[int | None] = []
    for operands, op in ContentStream(contents, reader).operations:
        if op == b"q":
            stack.append(ctm)
        elif op == b"Q" and stack:
            ctm = stack.pop()
        elif op == b"cm" and len(operands) == 6:
            ctm = _mul([float(v) for v in operands], ctm)
        elif _follow_marks(op, operands, resources, marks):
            continue
        elif op == b"Do" and operands:
            name = str(operands[0])
            x = xobjects.get(name) if hasattr(xobjects, "get") else None
            x = x.get_object() if x is not None else None
            ids = outer + tuple(m for m in marks if m is not None)
            if x is not None and x.get("/Subtype") == "/Image":
                yield Draw(ids, _box(ctm), x, name)
            elif x is not None and x.get("/Subtype") == "/Form" and depth < MAX_FORM_DEPTH:
                m = [float(v) for v in x.get("/Matrix", [1, 0, 0, 1, 0, 0])]
                yield from _draws_in(reader, x, x.get("/Resources", resources), _mul(m, ctm), ids, depth + 1)


def picture_bytes(fig: Figure) -> bytes:
    """The Figure's picture as a PNG, to be described like any file; PdfRefused when it cannot be."""
    assert fig.draw is not None
    x = fig.draw.image
    w, h = int(x.get("/Width", 0)), int(x.get("/Height", 0))
    if w <= 0 or h <= 0 or w * h > MAX_PIXELS:
        raise PdfRefused(f"its picture is {w} x {h} pixels: not read")
    try:
        image = x.decode_as_image()
        out = io.BytesIO()
        image.save(out, "PNG")
    except Exception as exc:  # noqa: BLE001 (a filter pypdf or Pillow cannot decode: this picture only)
        raise PdfRefused(f"its picture cannot be decoded ({type(exc).__name__})") from exc
    return out.getvalue()


def plan_figure(doc: PdfDoc, fig: Figure, include_empty: bool = False) -> tuple[ImageRow, bool]:
    """The row for one Figure, and whether its picture is to be described (``include_empty`` changes
    nothing: a PDF has no empty-alt convention for decoration)."""
    row = ImageRow(str(doc.path), fig.page, fig.number, fig.src, FillStatus.KEPT, alt_text=fig.alt or "",
                   syntax="pdf", location=fig.location, caption=fig.caption, context=fig.context)
    doc.rows.append(row)
    placeholder = fig.alt is not None and is_file_name(fig.alt)
    if fig.alt and fig.alt.strip() and not placeholder:
        return row, False
    # An empty /Alt marks nothing decorative in a PDF (decoration is an /Artifact, never a Figure): it is
    # filled like a missing one.
    notes = ["its /Alt was only a file name, which says nothing about the picture (WCAG F30)"] if placeholder else []
    if fig.alt is not None and not fig.alt.strip():
        notes.append("its /Alt was empty")
    if fig.problem or fig.draw is None:
        row.status, row.note, row.needs_review = FillStatus.SKIPPED, fig.problem or "no picture", True
        return row, False
    if fig.found_by == "bounding box":
        notes.append("its picture was found by its bounding box (it has no marked content of its own)")
    row.note = "; ".join(notes) or None
    return row, True


def place_alt(doc: PdfDoc, fig: Figure, row: ImageRow, text: str) -> None:
    """The Figure given ``text`` as its /Alt; CapDesk's English text in a PDF in another language is marked
    English (/Lang (en) on the Figure, which a structure element may carry), a caption's words are not."""
    fig.text = text
    row.status, row.alt_text, row.after = FillStatus.FILLED, text, f"/Alt ({text})"
    english = row.said_as != "caption" and bool(row.said_as or row.wording)
    if foreign(doc.row.lang) and english and not fig.has_lang:
        fig.lang = row.lang = "en"
        row.after += " /Lang (en)"
        doc.row.note = language_note(doc.row.lang, "/Lang (en)")
    doc.edits.append((fig, row))


def _serialize(obj) -> bytes:
    out = io.BytesIO()
    obj.write_to_stream(out)
    return out.getvalue()


_STARTXREF = re.compile(rb"startxref\s+(\d+)\s+%%EOF\s*$")


def incremental_update(doc: PdfDoc) -> bytes:
    """The file's bytes followed by one update: each edited Figure with its ``/Alt``, a cross-reference
    section of the file's own kind, and a trailer pointing back at the last one."""
    from pypdf.generic import NameObject, TextStringObject

    reader = doc.reader
    raw = doc.raw
    m = _STARTXREF.search(raw[-1024:])
    if m is None:
        raise PdfRefused("its end (startxref, %%EOF) is not where a PDF keeps it, so no update can follow it")
    prev = int(m.group(1))
    out = bytearray(raw if raw.endswith((b"\n", b"\r")) else raw + b"\n")
    offsets: dict[int, tuple[int, int]] = {}
    for fig, _row in sorted(doc.edits, key=lambda e: e[0].ref.idnum):
        el = fig.ref.get_object()
        el[NameObject("/Alt")] = TextStringObject(fig.text)
        if fig.lang:
            el[NameObject("/Lang")] = TextStringObject(fig.lang)
        offsets[fig.ref.idnum] = (len(out), fig.ref.generation)
        out += f"{fig.ref.idnum} {fig.ref.generation} obj\n".encode() + _serialize(el) + b"\nendobj\n"
    trailer = reader.trailer
    size = int(trailer.get("/Size", 0))
    keep = b"".join(k.encode() + b" " + _serialize(trailer.raw_get(k)) + b"\n"
                    for k in ("/Root", "/Info", "/ID") if k in trailer)
    if raw[prev:prev + 4] == b"xref":
        out += _xref_table(offsets, len(out), size, keep, prev)
    else:
        out += _xref_stream(offsets, len(out), size, keep, prev)
    return bytes(out)


def _runs(nums: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for n in nums:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _xref_table(offsets: dict[int, tuple[int, int]], at: int, size: int, keep: bytes, prev: int) -> bytes:
    lines = [b"xref\n"]
    for run in _runs(sorted(offsets)):
        lines.append(f"{run[0]} {len(run)}\n".encode())
        lines += [f"{offsets[n][0]:010d} {offsets[n][1]:05d} n\r\n".encode() for n in run]
    lines.append(b"trailer\n<<\n/Size " + str(size).encode() + b"\n" + keep + b"/Prev " + str(prev).encode()
                 + b"\n>>\nstartxref\n" + str(at).encode() + b"\n%%EOF\n")
    return b"".join(lines)


def _xref_stream(offsets: dict[int, tuple[int, int]], at: int, size: int, keep: bytes, prev: int) -> bytes:
    own = size  # the stream is an object too, listed in itself
    entries = {**offsets, own: (at, 0)}
    nums = sorted(entries)
    data = b"".join(b"\x01" + entries[n][0].to_bytes(4, "big") + entries[n][1].to_bytes(2, "big") for n in nums)
    index = b" ".join(f"{run[0]} {len(run)}".encode() for run in _runs(nums))
    packed = zlib.compress(data)
    return (f"{own} 0 obj\n<<\n/Type /XRef\n/Size {own + 1}\n".encode() + keep + b"/Index [" + index
            + b"]\n/W [1 4 2]\n/Filter /FlateDecode\n/Prev " + str(prev).encode() + b"\n/Length "
            + str(len(packed)).encode() + b"\n>>\nstream\n" + packed + b"\nendstream\nendobj\nstartxref\n"
            + str(at).encode() + b"\n%%EOF\n")


def write_pdf(doc: PdfDoc, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
              before_write: Callable[[Path], None] | None) -> None:
    if doc.row.status == "failed" or not doc.edits:
        return
    rows = [r for _, r in doc.edits]
    try:
        data = incremental_update(doc)
        _read(data)  # the result must read back as a tagged PDF
    except PdfRefused as exc:
        _failed(doc, rows, f"the change would not read back ({exc})")
        return
    result.diffs[str(doc.path)] = "".join(
        f"--- {doc.path}\n+++ {doc.path}\n@@ {fig.location} @@\n+/Alt ({fig.text})\n" for fig, _ in doc.edits
    ).encode("utf-8", "surrogateescape")
    why = write_change(doc.row, rows, doc.path, doc.raw, doc.digest, data, dry_run, backup_dir, before_write)
    if why:
        _failed(doc, rows, why)


def _failed(doc: PdfDoc, rows: list[ImageRow], why: str) -> None:
    doc.row.status, doc.row.error = "failed", why
    for r in rows:
        r.status, r.error, r.after = FillStatus.FAILED, f"the document was not changed: {why}", ""
