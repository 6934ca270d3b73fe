"""The pictures of an untagged PDF, listed for the person who publishes it.

An untagged PDF has no structure element for alt text to belong to, so nothing is ever written into it
(tagging it here would be guessing its reading order and roles: see docs/untagged-pdf.md). Its pictures
are listed instead, each with its page, its place on the page and its size, and described like any
picture, so that the publisher has the texts to paste into the source before exporting a tagged PDF
again. Their rows are listing-only: the review file says ``write`` = no, and a review that asks to
write one is refused with the same note.

Pictures are the images the pages draw, found as a tagged PDF's Figures are (``pdf._draws``: forms
followed to a depth, one budget of operations per document). Left out, and said so: tiny images
(under ``MIN_SIDE`` pixels or ``MIN_POINTS`` points on a side: rules, bullets, spacers) and one image
(by its bytes) drawn on many pages (a logo, a page ornament). Everything is bounded: ``MAX_PAGES``
pages looked at, ``MAX_DRAWS`` images looked at, ``MAX_LISTED`` listed; each distinct image is decoded
once, within the pixel bound of every picture read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from capdesk.altfill.pdf import Draw, PdfDoc, image_png, pixels
from capdesk.altfill.pdf_structure import PdfRefused
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, take_description
from capdesk.describe.describer import Described

UNTAGGED_NOTE = "untagged: add alt text in the source and export a tagged PDF"
MIN_SIDE = 32  # pixels: under this on either side an image is a rule, a bullet or a spacer
MIN_POINTS = 6.0  # points on the page (1/12 inch): an image drawn smaller is an ornament, whatever its pixels
REPEATED_PAGES = 3  # one image on this many pages (or on every page of a shorter document) is a logo
MAX_PAGES = 5_000  # pages looked at; a long manual has a thousand
MAX_DRAWS = 20_000  # images drawn looked at, the tiny and the repeated ones included
MAX_LISTED = 2_000  # pictures listed (each one described): a review past this is not read by a person


@dataclass
class Picture:
    """One picture an untagged PDF draws: where, how large, and which image (its bytes' digest)."""

    page: int  # 1-based
    number: int  # 1-based, in the document, in the order drawn
    draw: Draw
    box: tuple[float, float, float, float]  # x, y of its top left corner from the page's top left; width, height (pt)
    width: int  # pixels
    height: int
    digest: str

    @property
    def location(self) -> str:
        x, y, w, h = self.box
        return (f"page {self.page}, picture {self.number}: {w:.0f} x {h:.0f} pt at {x:.0f}, {y:.0f} pt from the "
                f"top left ({self.width} x {self.height} px)")

    @property
    def src(self) -> str:
        return f"page {self.page}, {self.draw.name.lstrip('/')}"


@dataclass
class Listing:
    pictures: list[Picture] = field(default_factory=list)
    tiny: int = 0
    repeated: dict[str, int] = field(default_factory=dict)  # digest -> pages it is drawn on
    repeated_draws: int = 0
    cut: list[str] = field(default_factory=list)  # which bound stopped the listing, said as such


def list_pictures(doc: PdfDoc) -> Listing:
    """The pictures of an untagged PDF worth a text, in page order; PdfRefused when its pages cannot be read."""
    reader = doc.reader
    out = Listing()
    found: list[tuple[int, Draw, tuple[float, float, float, float], int, int, str]] = []
    digests: dict[int, str] = {}
    budget: list[int] = []  # one budget of operations for the whole document, as for a tagged one
    looked = 0
    total = len(reader.pages)
    for n in range(min(total, MAX_PAGES)):
        page = reader.pages[n]
        left, top = _corner(page)
        draws = _page_draws(reader, page, budget)
        for d in draws:
            looked += 1
            if looked > MAX_DRAWS:
                break
            w, h = pixels(d.image)
            x0, y0, x1, y1 = d.box
            if min(w, h) < MIN_SIDE or min(x1 - x0, y1 - y0) < MIN_POINTS:
                out.tiny += 1
                continue
            box = (x0 - left, top - y1, x1 - x0, y1 - y0)
            found.append((n + 1, d, box, w, h, _digest(d.image, digests)))
        if looked > MAX_DRAWS:
            out.cut.append(f"only the first {MAX_DRAWS:,} images drawn were looked at")
            break
    if total > MAX_PAGES:
        out.cut.append(f"only its first {MAX_PAGES:,} pages were looked at")
    pages_of: dict[str, set[int]] = {}
    for page_no, _, _, _, _, digest in found:
        pages_of.setdefault(digest, set()).add(page_no)
    many = max(2, min(REPEATED_PAGES, total))
    out.repeated = {dg: len(ps) for dg, ps in pages_of.items() if len(ps) >= many}
    for page_no, d, box, w, h, digest in found:
        if digest in out.repeated:
            out.repeated_draws += 1
        elif len(out.pictures) < MAX_LISTED:
            out.pictures.append(Picture(page_no, len(out.pictures) + 1, d, box, w, h, digest))
        else:
            out.cut.append(f"only the first {MAX_LISTED:,} pictures were listed")
            break
    return out


def _page_draws(reader, page, budget: list[int]) -> list[Draw]:
    from capdesk.altfill.pdf import MAX_OPERATIONS, _draws

    if not budget:
        budget.append(MAX_OPERATIONS)
    out = []
    for d in _draws(reader, page, budget):
        out.append(d)
        if len(out) > MAX_DRAWS:  # one page that draws one image a million times: the rest is not wanted
            break
    return out


def _corner(page) -> tuple[float, float]:
    """The left and top of what a viewer shows of the page (its crop box), in its default space."""
    box = page.cropbox
    return float(min(box.left, box.right)), float(max(box.top, box.bottom))


def _digest(image, seen: dict[int, str]) -> str:
    """An image's digest: of its stream's bytes as stored, with its size and filter, so that one logo embedded
    anew on each page is the same image; one object drawn again is hashed once."""
    ref = getattr(image, "indirect_reference", None)
    key = ref.idnum if ref is not None else None
    if key is not None and key in seen:
        return seen[key]
    data = getattr(image, "_data", None)
    if not isinstance(data, bytes):
        data = b""
    h = hashlib.sha256(repr((pixels(image), str(image.get("/Filter")), str(image.get("/ColorSpace")))).encode())
    h.update(data)
    got = h.hexdigest()
    if key is not None:
        seen[key] = got
    return got


def listed_note(listing: Listing) -> str:
    """What the report says of the whole document, in one line."""
    n = len(listing.pictures)
    said = (f"not tagged: it has no structure for alt text to belong to, so nothing was written; its "
            f"{n} picture{'s were' if n != 1 else ' was'} listed for review ({UNTAGGED_NOTE})") if n else \
        "not tagged: it has no structure for alt text to belong to, so nothing was written; it draws no picture " \
        "that needs a text"
    left = []
    if listing.tiny:
        left.append(f"{listing.tiny} tiny image{'s' if listing.tiny != 1 else ''} (under {MIN_SIDE} x {MIN_SIDE} px "
                    "or a few points: rules, bullets)")
    if listing.repeated:
        k = len(listing.repeated)
        most = max(listing.repeated.values())
        left.append(f"{k} image{'s' if k != 1 else ''} repeated on {most if k == 1 else 'up to ' + str(most)} pages "
                    f"({listing.repeated_draws} times in all: a logo or an ornament)")
    if left:
        said += "; left out: " + " and ".join(left)
    if listing.cut:
        said += "; " + "; ".join(dict.fromkeys(listing.cut))
    return said


def plan_untagged(doc: PdfDoc, store, result: AltFillResult, files: dict) -> list[tuple]:
    """An untagged PDF's pictures listed: a row each in ``result``, each distinct image once in ``files``
    to be described; the (picture, row, key) of each. The PDF is read only."""
    try:
        listing = list_pictures(doc)
    except PdfRefused as exc:
        doc.row.status, doc.row.error = "failed", f"not tagged, and its pictures cannot be listed: {exc}"
        return []
    except Exception as exc:  # noqa: BLE001 (a reader's own fault on a hostile page: this file's, never the run's)
        doc.row.status, doc.row.error = "failed", (f"not tagged, and its pictures cannot be listed "
                                                   f"({type(exc).__name__}: {str(exc)[:200]})")
        return []
    doc.row.images = len(listing.pictures)
    doc.row.note = listed_note(listing)
    if listing.pictures:
        doc.row.status = "listed for review"
    stored: dict[str, tuple[object, str]] = {}  # digest -> (the file to describe or None, why not)
    wanted: list[tuple] = []
    for pic in listing.pictures:
        row = ImageRow(str(doc.path), pic.page, pic.number, pic.src, FillStatus.REVIEW, syntax="pdf",
                       location=pic.location, note=UNTAGGED_NOTE, reason=UNTAGGED_NOTE, needs_review=True,
                       listed_only=True, box=[round(v, 1) for v in pic.box], pixels=[pic.width, pic.height])
        result.images.append(row)
        doc.rows.append(row)
        if pic.digest not in stored:
            stored[pic.digest] = _store(pic, store)
        file, why = stored[pic.digest]
        if file is None:  # listed all the same: the publisher still needs a text for it
            row.status, row.reason = FillStatus.SKIPPED, f"{UNTAGGED_NOTE}; {why}"
            continue
        files.setdefault(str(file), file)
        wanted.append((pic, row, str(file)))
    return wanted


def _store(pic: Picture, store) -> tuple[object, str]:
    """The picture copied out to be described: (its file, ""), or (None, why not)."""
    try:
        return store.add(image_png(pic.draw.image), f"page-{pic.page}-picture-{pic.number}.png"), ""
    except PdfRefused as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"cannot be copied out to be described ({exc.strerror or exc})"


def list_text(row: ImageRow, d: Described | None) -> None:
    """An untagged PDF's picture given its description as the text to paste: held for review, never written
    (there is nowhere to write it). Every kind of text is proposed, said for what it is (``said_as``)."""
    row.reason = None
    take_description(row, d, "all")
    why = row.error or (row.note if row.status == FillStatus.SKIPPED else "") or row.reason or ""
    if row.status not in (FillStatus.FAILED, FillStatus.SKIPPED, FillStatus.UNDESCRIBED):
        row.status = FillStatus.REVIEW
    row.note, row.needs_review = UNTAGGED_NOTE, True
    row.reason = "; ".join(x for x in (UNTAGGED_NOTE, why) if x)


def refuse_listed(doc: PdfDoc, chosen: list, result: AltFillResult) -> None:
    """A review's rows for an untagged PDF, refused: each named with the note, nothing written."""
    for r in chosen:
        result.images.append(ImageRow(str(doc.path), 0, 0, r.picture, FillStatus.FAILED, location=r.location,
                                      syntax="pdf", proposed=r.text, listed_only=True,
                                      error=f"not written, listed only: {UNTAGGED_NOTE}"))


def untagged_said(result: AltFillResult) -> str:
    """What the window says of untagged PDFs after a run ("" when there were none)."""
    n = sum(1 for r in result.images if r.listed_only and r.status != FillStatus.FAILED)
    docs = {r.page for r in result.images if r.listed_only}
    if not n:
        return ""
    return (f"; {n} picture{'s' if n != 1 else ''} of {len(docs)} untagged PDF{'s' if len(docs) != 1 else ''} "
            f"listed in the report with a text to paste ({UNTAGGED_NOTE})")

