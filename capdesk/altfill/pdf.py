"""Alt text for the figures of a tagged PDF: each ``/Figure`` structure element without ``/Alt`` gets
the description of the picture it stands for, written as an incremental update.

A PDF is read with pypdf. Only a tagged PDF (``/MarkInfo /Marked true`` and a structure tree) has a
place for alt text; an untagged one is never changed: its pictures are listed for review instead
(``pdf_untagged``), and it is named in one line. Role-mapped types count
by what they map to. The picture of a Figure is found by its marked content (the MCIDs of its
``/K`` on its page, the images drawn inside them); a Figure with no marked content of its own (as
LibreOffice writes a picture drawn as an artifact) is matched to the image drawn at its ``/BBox``
attribute's place on its page. Content marked ``/Artifact`` that no Figure stands for is decoration
and is left alone.

A Figure's caption and the text around it are read as ``pdf_captions`` says; every walk of the
structure tree is bounded as ``pdf_structure`` says (each node once, one budget per document). A signed
PDF is left as it is unless ``allow_signed`` (``pdf_signatures``); an encrypted one always is.

The update is appended after the file's last byte, only ``/Alt`` changed in each edited element
(``pdf_update``); the written file is read back and its structure tree compared with the original's, node
by node, and kept only when nothing but the ``/Alt`` given changed. The file is replaced in one step, only
if it still holds the bytes that were read, its original kept in the backup folder first.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.backups import write_change
from capdesk.altfill.pdf_captions import (
    Captions,
    follow_marks,
    mcids,
    text_by_mcid,  # noqa: F401 (read from here since before the split)
)
from capdesk.altfill.pdf_signatures import SIGNED_UPDATED, refusal, signatures
from capdesk.altfill.pdf_structure import PdfRefused, Structure, elements, role_map
from capdesk.altfill.pdf_update import changed_beyond_alt, incremental_update
from capdesk.altfill.picture_ids import pdf_figure_id
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow, foreign, language_note
from capdesk.altfill.spots import is_file_name
from capdesk.imageio import MAX_PIXELS

NOT_TAGGED = "not tagged: it has no structure for alt text to belong to"
# pypdf logs each fault it recovers from in a sloppy file on the terminal (791 lines for one real manual of
# Debian's); what matters about a file CapDesk says in one line of its own.
logging.getLogger("pypdf").setLevel(logging.ERROR)
ENCRYPTED = "encrypted: it cannot be changed without its password, so it was left as it is"
MAX_FORM_DEPTH = 4  # forms drawn inside forms, followed this deep for the pictures they draw
# Content-stream operations read by one document's search for the pictures it draws (forms counted each time
# they are drawn): a real page takes a few thousand; forms that draw forms a thousand times each would take
# billions, and reach this first.
MAX_OPERATIONS = 5_000_000


class Untagged(PdfRefused):
    """A PDF read whole that has no structure for alt text: nothing is written into it."""

    def __init__(self, reader) -> None:
        super().__init__(NOT_TAGGED)
        self.reader = reader


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
    roles: dict[str, str] = field(default_factory=dict)
    signed: bool = False  # signed, and to be updated all the same (--allow-signed)
    figures: list[Figure] = field(default_factory=list)
    untagged: bool = False  # no structure for alt text: its pictures are listed (pdf_untagged), nothing written
    rows: list[ImageRow] = field(default_factory=list)
    edits: list[tuple[Figure, ImageRow]] = field(default_factory=list)


def is_pdf(path: Path) -> bool:
    return path.suffix.lower() == ".pdf"


def scan_pdf(path: Path, allow_signed: bool = False) -> PdfDoc:
    """Read a PDF and find its Figures; one that cannot be read, is not tagged or is signed (unless
    ``allow_signed``, and never one certified with no changes allowed) has its row's error."""
    doc = PdfDoc(path, PageRow(str(path), "unchanged", kind="pdf"))
    try:
        doc.raw = file_checks.read_bounded(path, file_checks.MAX_DOCUMENT_BYTES)
        doc.digest = doc.row.sha256 = hashlib.sha256(doc.raw).hexdigest()
        doc.reader, doc.figures, doc.roles, doc.signed = _read(doc.raw, allow_signed)
        doc.row.lang = _lang(doc.reader)
    except Untagged as exc:  # read, and never written: its pictures are listed for review
        doc.reader, doc.untagged = exc.reader, True
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


def _read(raw: bytes, allow_signed: bool) -> tuple[object, list[Figure], dict[str, str], bool]:
    """(the reader, the Figures, the role map, whether it is signed and to be updated all the same)."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted:
            raise PdfRefused(ENCRYPTED)
        root = reader.trailer["/Root"].get_object()
        marked = root.get("/MarkInfo", {}).get_object().get("/Marked", False) if "/MarkInfo" in root else False
        tree = root.get("/StructTreeRoot")
        if not marked or tree is None:
            raise Untagged(reader)
        found = signatures(reader)
        if refusal(found, allow_signed):
            raise PdfRefused(refusal(found, allow_signed))
        roles = role_map(tree.get_object())
        figures = _figures(reader, tree.get_object(), Structure(roles))
    except PdfRefused:
        raise
    except (DependencyError, FileNotDecryptedError) as exc:  # AES without its cipher at hand: encrypted all the same
        raise PdfRefused(ENCRYPTED) from exc
    except (PyPdfError, Exception) as exc:  # a reader's own fault on a hostile file: this file's, never the run's
        raise PdfRefused(f"cannot be read as a PDF ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")\
            from exc
    return reader, figures, roles, found.signed


def _figures(reader, tree, structure: Structure) -> list[Figure]:
    pages = {p.indirect_reference.idnum: i for i, p in enumerate(reader.pages) if p.indirect_reference}
    draws: dict[int, list[Draw]] = {}
    budget = [MAX_OPERATIONS]
    out: list[Figure] = []
    captions = Captions(reader, structure, pages)
    for ref, el, pg, parent in elements(tree, structure):
        if not structure.is_figure(el):
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
                draws[n] = list(_draws(reader, reader.pages[n], budget))
            _match(fig, el, draws[n], pg)
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
    ids = set(mcids(el, pg))
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


def _draws(reader, page, budget: list[int] | None = None) -> Iterator[Draw]:
    """The images a page draws; ``budget`` (one per document: [operations left]) is spent by each
    operation read, and PdfRefused said when it runs out."""
    budget = [MAX_OPERATIONS] if budget is None else budget
    yield from _draws_in(reader, page.get_contents(), page.get("/Resources"), [1.0, 0, 0, 1.0, 0, 0], (), 0,
                         budget)


def _draws_in(reader, contents, resources, ctm: list[float], outer: tuple[int, ...], depth: int,
              budget: list[int]) -> Iterator[Draw]:
    """The images drawn by a content stream (and the forms it draws, to a depth), with their place."""
    from pypdf.generic import ContentStream

    if contents is None:
        return
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject") if hasattr(resources, "get") else None
    xobjects = xobjects.get_object() if xobjects is not None else {}  # a page of text only has none
    stack: list[list[float]] = []
    marks: list[int | None] = []
    operations = ContentStream(contents, reader).operations
    budget[0] -= len(operations)
    if budget[0] < 0:
        raise PdfRefused(f"its pages draw more than {MAX_OPERATIONS:,} operations (forms drawn inside forms), "
                         "so its pictures were not searched")
    for operands, op in operations:
        if op == b"q":
            stack.append(ctm)
        elif op == b"Q" and stack:
            ctm = stack.pop()
        elif op == b"cm" and len(operands) == 6:
            ctm = _mul([float(v) for v in operands], ctm)
        elif follow_marks(op, operands, resources, marks):
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
                yield from _draws_in(reader, x, x.get("/Resources", resources), _mul(m, ctm), ids, depth + 1,
                                     budget)


def picture_bytes(fig: Figure) -> bytes:
    """The Figure's picture as a PNG, to be described like any file; PdfRefused when it cannot be."""
    assert fig.draw is not None
    return image_png(fig.draw.image)


def pixels(x) -> tuple[int, int]:
    """An image XObject's width and height in pixels as it says them; (0, 0) when it says none that is a number."""
    try:
        return int(x.get("/Width", 0)), int(x.get("/Height", 0))
    except (TypeError, ValueError):
        return 0, 0


def image_png(x) -> bytes:
    """An image XObject as a PNG, within the pixel bound of every picture read; PdfRefused when it cannot be."""
    w, h = pixels(x)
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
                   syntax="pdf", location=fig.location, caption=fig.caption, context=fig.context,
                   picture_id=pdf_figure_id(fig.ref, fig.number))
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


def write_pdf(doc: PdfDoc, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
              before_write: Callable[[Path], None] | None) -> None:
    if doc.row.status == "failed" or not doc.edits:
        return
    rows = [r for _, r in doc.edits]
    try:
        data = incremental_update(doc)
    except Exception as exc:  # noqa: BLE001 (PdfRefused, or a reader's fault: this file's, never the run's)
        why = _said(exc)
    else:
        why = reads_back(doc, data)
    if why:
        _failed(doc, rows, f"the change would not read back ({why})")
        return
    result.diffs[str(doc.path)] = "".join(
        f"--- {doc.path}\n+++ {doc.path}\n@@ {fig.location} @@\n+/Alt ({fig.text})\n" for fig, _ in doc.edits
    ).encode("utf-8", "surrogateescape")
    why = write_change(doc.row, rows, doc.path, doc.raw, doc.digest, data, dry_run, backup_dir, before_write)
    if why:
        _failed(doc, rows, why)
    elif doc.signed:
        doc.row.note = "; ".join(n for n in (doc.row.note, SIGNED_UPDATED) if n)


def reads_back(doc: PdfDoc, data: bytes) -> str:
    """Why the PDF as it would be written does not read back with the same structure tree, only the /Alt
    given changed; "" when it does."""
    try:
        return changed_beyond_alt(doc, data, doc.roles) or ""
    except Exception as exc:  # noqa: BLE001 (PdfRefused, or a reader's fault on the file written)
        return _said(exc)


def _said(exc: Exception) -> str:
    if isinstance(exc, PdfRefused):
        return str(exc)
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"


def _failed(doc: PdfDoc, rows: list[ImageRow], why: str) -> None:
    doc.row.status, doc.row.error = "failed", why
    for r in rows:
        r.status, r.error, r.after = FillStatus.FAILED, f"the document was not changed: {why}", ""
