"""The review file: every picture a run found, one CSV row each, with the text CapDesk proposes and
whether it is to be written; a person edits the text and the ``write`` column, and the rows marked
``yes`` are written back into the same pages and documents with the guarantees of a fill (only alt
text changes, the original kept in the backup folder, replaced in one step).

Beside ``FILE.csv`` goes ``FILE.csv.sha256`` (``sha256sum`` format): each page's and document's
digest as the review saw it. A file whose bytes differ when the review is applied was changed since
the review; it is left as it is and named, since its pictures may no longer be those reviewed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capdesk.altfill.documents import Doc, is_document, place_spot, scan_document, write_document
from capdesk.altfill.fill import _Page, place_text, scan_page, write_page
from capdesk.altfill.html_images import ScanCancelled
from capdesk.altfill.pdf import PdfDoc, is_pdf, place_alt, scan_pdf, write_pdf
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow
from capdesk.altfill.spots import is_file_name
from capdesk.safe_files import atomic_write
from capdesk.sidecars.xmp import clean_text

# A contract: columns are only ever added at the end, and a file without the later ones still applies.
# ``context`` (the text before and after the picture) is for the person reviewing; it is never read back.
COLUMNS = ("document", "location", "picture", "text", "said_as", "reason", "trust", "write", "context")
# A cell a spreadsheet would run as a formula is written with a leading apostrophe, taken off when read.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CHANGED = "it changed since the review, so it was left as it is; review it again"


class ReviewError(ValueError):
    """A review file that cannot be used as a whole (missing, not CSV, the wrong columns)."""


def location_of(r: ImageRow) -> str:
    """Where a person finds a picture: a document's own words, a page's line. (Not its column: alt text
    written earlier on the line moves it, and a line's pictures of one address are told apart by order.)"""
    return r.location or f"line {r.line}"


def digests_path(path: Path) -> Path:
    return Path(str(path) + ".sha256")


def _safe_cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _read_cell(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].startswith(_FORMULA_START) else text


def review_row(r: ImageRow) -> dict[str, str]:
    """One picture's row: ``text`` is what is or would be written (or was there); ``write`` is ``yes``
    for what the run wrote or would write."""
    text = r.alt_text if r.status in (FillStatus.FILLED, FillStatus.KEPT) else r.proposed
    return {"document": os.path.abspath(r.page), "location": location_of(r), "picture": r.src, "text": text,
            "said_as": r.said_as or "", "reason": r.reason or r.error or r.note or _kept(r),
            "trust": "" if r.trust is None else f"{r.trust:.4f}",
            "write": "yes" if r.status == FillStatus.FILLED else "no", "context": r.context}


def _kept(r: ImageRow) -> str:
    return "it has alt text, which is left as it is" if r.status == FillStatus.KEPT and r.alt_text else ""


def write_review(result: AltFillResult, path: Path) -> None:
    """The review file and its digests, each written in one step."""
    out = io.StringIO(newline="")
    w = csv.DictWriter(out, COLUMNS, lineterminator="\r\n")  # RFC 4180, what spreadsheets write back
    w.writeheader()
    for r in result.images:
        w.writerow({k: _safe_cell(v) for k, v in review_row(r).items()})
    sums = "".join(f"{p.sha256}  {os.path.abspath(p.page)}\n" for p in result.pages if p.sha256)
    atomic_write(Path(path), out.getvalue().encode("utf-8"))
    atomic_write(digests_path(Path(path)), sums.encode("utf-8"))


@dataclass
class Reviewed:
    document: str
    location: str
    picture: str
    text: str
    write: bool


def read_review(path: Path) -> tuple[list[Reviewed], dict[str, str]]:
    """The rows of a review file, and the digest of each document as the review saw it."""
    try:
        raw = Path(path).read_bytes().decode("utf-8-sig")  # a spreadsheet may add a byte-order mark
        sums_raw = digests_path(Path(path)).read_text("utf-8")
    except OSError as exc:
        raise ReviewError(f"{exc.filename}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ReviewError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    reader = csv.DictReader(io.StringIO(raw, newline=""))
    missing = [c for c in ("document", "location", "picture", "text", "write") if c not in (reader.fieldnames or ())]
    if missing:
        raise ReviewError(f"{path}: not a review file (no column {', '.join(missing)})")
    rows = [Reviewed(r["document"] or "", r["location"] or "", _read_cell(r["picture"] or ""),
                     _read_cell(r["text"] or ""), (r["write"] or "").strip().lower() in ("yes", "y", "true", "1"))
            for r in reader]
    sums = {}
    for line in sums_raw.splitlines():
        digest, _, name = line.partition("  ")
        if name:
            sums[name] = digest
    return rows, sums


def apply_review(path: Path, dry_run: bool = False, backup_dir: Path | None = None,
                 before_write: Callable[[Path], None] | None = None, epub_metadata: bool = False) -> AltFillResult:
    """The ``text`` of every row marked ``yes`` written as its picture's alt text, a document at a time;
    a document changed since the review is left as it is and named. With ``epub_metadata``, an EPUB whose
    every picture has a text alternative once written says so in its package document, as a fill does."""
    rows, sums = read_review(path)
    result = AltFillResult(dry_run=dry_run)
    wanted: dict[str, list[Reviewed]] = {}
    for r in rows:
        if r.write:
            wanted.setdefault(r.document, []).append(r)
    writing = _Writing(dry_run, backup_dir, before_write, epub_metadata)
    for name, chosen in wanted.items():
        _apply_one(Path(name), chosen, sums.get(name), result, writing)
    changed = {p.page: p.sha256 for p in result.pages if p.status == "changed"}
    if changed:  # the review now describes the files as written: applying it again changes nothing
        sums.update(changed)
        atomic_write(digests_path(Path(path)), "".join(f"{d}  {n}\n" for n, d in sums.items()).encode("utf-8"))
    return result


@dataclass(frozen=True)
class _Writing:
    """How the reviewed texts are written: the same for every file of one review."""

    dry_run: bool
    backup_dir: Path | None
    before_write: Callable[[Path], None] | None
    epub_metadata: bool


def _apply_one(path: Path, chosen: list[Reviewed], digest: str | None, result: AltFillResult,
               how: _Writing) -> None:
    try:
        now = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        result.pages.append(PageRow(str(path), "failed", error=exc.strerror or str(exc)))
        return
    if digest != now:
        why = CHANGED if digest else "it is not in the review's list of documents (FILE.csv.sha256), so it was left"
        result.pages.append(PageRow(str(path), "failed", error=why, kind=_kind(path)))
        return
    if is_pdf(path):
        pdf = scan_pdf(path)
        result.pages.append(pdf.row)
        _fill_pdf(pdf, chosen, result)
        write_pdf(pdf, result, how.dry_run, how.backup_dir, how.before_write)
    elif is_document(path):
        doc = scan_document(path)
        result.pages.append(doc.row)
        _fill_document(doc, chosen, result)
        write_document(doc, result, how.dry_run, how.backup_dir, how.before_write, epub_metadata=how.epub_metadata)
    else:
        try:
            page = scan_page(path)
        except ScanCancelled:  # not asked to stop: no page scan is cancelled here
            return
        result.pages.append(page.row)
        _fill_page(page, chosen, result)
        if page.inserts:
            write_page(page, result, how.dry_run, how.backup_dir, how.before_write)


def _kind(path: Path) -> str:
    return path.suffix.lower().lstrip(".") if is_document(path) or is_pdf(path) else "page"


def _one_line(text: str) -> str:
    return " ".join(clean_text(text).split())


def _pick(chosen: list[Reviewed], row: ImageRow, seen: dict[tuple[str, str], int]) -> Reviewed | None:
    """The reviewed row for this picture: the same location and address, the same one of those in order."""
    key = (location_of(row), row.src)
    n = seen.get(key, 0)
    seen[key] = n + 1
    same = [c for c in chosen if (c.location, c.picture) == key]
    return same[n] if n < len(same) else None


def _take(chosen: list[Reviewed], row: ImageRow, seen: dict[tuple[str, str], int], used: list[Reviewed],
          result: AltFillResult) -> str | None:
    """The reviewed text for this picture on one line, its row reported and its review row used; None
    when the review has no row for it."""
    r = _pick(chosen, row, seen)
    if r is None:
        return None
    used.append(r)
    result.images.append(row)
    return _one_line(r.text)


def _decide(row: ImageRow, text: str, has_alt: str | None, problem: str) -> bool:
    """Whether ``text`` goes in; the row says why not when it does not."""
    row.proposed = text
    if not text:
        row.status, row.note = FillStatus.SKIPPED, "its text is empty in the review (empty alt marks it decorative)"
        return False
    if has_alt:
        row.status, row.alt_text = FillStatus.KEPT, has_alt
        if has_alt != text:
            row.note = "it has alt text now, which was left as it is"
        return False
    if problem:
        row.status, row.note = FillStatus.SKIPPED, problem
        return False
    return True


def _not_found(path: Path, chosen: list[Reviewed], used: list[Reviewed], result: AltFillResult) -> None:
    for r in chosen:
        if not any(u is r for u in used):
            result.images.append(ImageRow(str(path), 0, 0, r.picture, FillStatus.FAILED, location=r.location,
                                          error="no such picture at this place in it", proposed=r.text))


def _fill_page(page: _Page, chosen: list[Reviewed], result: AltFillResult) -> None:
    seen: dict[tuple[str, str], int] = {}
    used = []
    for f in page.found:
        row = ImageRow(str(page.path), f.line, f.column, f.src or "", FillStatus.KEPT, syntax=f.syntax,
                       before=f.source, alt_text=f.alt or "", context=f.context)
        text = _take(chosen, row, seen, used, result)
        if text is None:
            continue
        if _decide(row, text, None if f.placeholder else f.alt, f.problem):
            edit = place_text(row, f, text)
            if edit is not None:
                page.inserts.append((*edit, row))
    _not_found(page.path, chosen, used, result)


def _fill_document(doc: Doc, chosen: list[Reviewed], result: AltFillResult) -> None:
    seen: dict[tuple[str, str], int] = {}
    used = []
    for spot in doc.spots:
        alt = None if spot.placeholder else spot.alt
        # A text alternative as a fill counts one: alt text, a decorative mark (alt="" among them), a label.
        has_one = alt is not None or bool(spot.decorative or spot.labelled)
        row = ImageRow(str(doc.path), spot.line, spot.column, spot.src,
                       FillStatus.KEPT if has_one else FillStatus.SKIPPED, before=spot.before, alt_text=alt or "",
                       syntax=doc.kind, location=spot.location, context=spot.context)
        doc.rows.append(row)  # all of them: whether every picture has alt text afterwards is said from these
        text = _take(chosen, row, seen, used, result)
        if text is None or (not text and has_one):  # no text for a picture marked decorative: it stays so
            continue
        if _decide(row, text, alt, spot.problem or ("" if spot.make else "no place to write")):
            place_spot(doc, spot, row, text)
    _not_found(doc.path, chosen, used, result)


def _fill_pdf(doc: PdfDoc, chosen: list[Reviewed], result: AltFillResult) -> None:
    seen: dict[tuple[str, str], int] = {}
    used = []
    for fig in doc.figures:
        alt = None if fig.alt is None or not fig.alt.strip() or is_file_name(fig.alt) else fig.alt
        row = ImageRow(str(doc.path), fig.page, fig.number, fig.src, FillStatus.KEPT if alt else FillStatus.SKIPPED,
                       alt_text=alt or "", syntax="pdf", location=fig.location, context=fig.context)
        text = _take(chosen, row, seen, used, result)
        if text is None:
            continue
        no_place = "the element is not an object of its own, so nothing can be added to it"
        if _decide(row, text, alt, no_place if fig.ref is None else ""):
            place_alt(doc, fig, row, text)
    _not_found(doc.path, chosen, used, result)
