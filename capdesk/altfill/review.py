"""The review file: every picture a run found, one CSV row each, with the text CapDesk proposes and
whether it is to be written; a person edits the text and the ``write`` column, and the rows marked
``yes`` are written back into the same pages and documents with the guarantees of a fill (only alt
text changes, the original kept in the backup folder, replaced in one step).

Each row carries its document's digest and its picture's, as the review saw them, and the folders the
run was given (``review_file``). A row is written only into a document inside those folders
(``review_bind``), only while the document's bytes and its picture's are those reviewed; a document
changed since is left as it is and named, a row outside the folders or whose picture changed is named.
A review is the person's file: applying it never rewrites it. Applied again, a document whose every
reviewed text is already in it, where it was reviewed, is said to be so ("already written") and left.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from capdesk.altfill.documents import Doc, is_document, place_spot, scan_document, spot_digest, write_document
from capdesk.altfill.dry_run import as_dry_run
from capdesk.altfill.fill import MAX_PAGE_BYTES, _Page, place_text, scan_page, write_page
from capdesk.altfill.html_images import ScanCancelled
from capdesk.altfill.pdf import PdfDoc, is_pdf, place_alt, scan_pdf, write_pdf
from capdesk.altfill.pdf_untagged import refuse_listed
from capdesk.altfill.picture_ids import page_picture_id, pdf_figure_id
from capdesk.altfill.review_bind import picture_changed, refused, review_digests
from capdesk.altfill.review_file import (  # noqa: F401  (ReviewError, read_review, digests_path: API)
    COLUMNS,
    Reviewed,
    ReviewError,
    digests_path,
    read_review,
    roots_cell,
    write_rows,
)
from capdesk.altfill.review_match import Matcher, not_found_error
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow, said_words
from capdesk.altfill.spots import is_file_name
from capdesk.altfill.zipsafe import MAX_DOCUMENT_BYTES
from capdesk.safe_files import atomic_write, read_limited
from capdesk.sidecars.xmp import clean_text

CHANGED = "it changed since the review, so it was left as it is; review it again"
UNLISTED = "it is not in the review's list of documents (no digest of it), so it was left"
ALREADY = "already written: every text the review marks yes is in it, so it was left as it is"


def location_of(r: ImageRow) -> str:
    """Where a person finds a picture: a document's own words, a page's line. (Not its column: alt text
    written earlier on the line moves it, and a line's pictures of one address are told apart by order.)"""
    return r.location or f"line {r.line}"


def review_row(r: ImageRow) -> dict[str, str]:
    """One picture's row: ``text`` is what is or would be written (or was there); ``write`` is ``yes``
    for what the run wrote or would write."""
    text = r.alt_text if r.status in (FillStatus.FILLED, FillStatus.KEPT) else r.proposed
    return {"document": os.path.abspath(r.page), "location": location_of(r), "picture": r.src, "text": text,
            "said_as": said_words(r), "reason": r.reason or r.error or r.note or _kept(r),
            "trust": "" if r.trust is None else f"{r.trust:.4f}",
            "write": "yes" if r.status == FillStatus.FILLED else "no", "context": r.context,
            "picture_name": picture_name(r), "picture_id": r.picture_id}


def picture_name(r: ImageRow) -> str:
    """Which picture, as a person tells it: its file name (an address decoded), or a PDF's page."""
    if r.syntax == "pdf":
        return f"page {r.line}" if r.line else ""
    src = unquote(r.src or "").split("?")[0].split("#")[0].replace("\\", "/")
    return src.rstrip("/").rsplit("/", 1)[-1] if not src.startswith("data:") else "a picture inside the page"


def _kept(r: ImageRow) -> str:
    return "it has alt text, which is left as it is" if r.status == FillStatus.KEPT and r.alt_text else ""


def write_review(result: AltFillResult, path: Path) -> None:
    """The review file, and beside it the digests in the old form (for older CapDesk versions), each
    written in one step."""
    pictures = review_digests(result)
    sums = {p.page: p.sha256 for p in result.pages if p.sha256}
    roots, picture_roots = roots_cell(result.roots), roots_cell(result.picture_roots)
    rows = [{**review_row(r), "document_sha256": sums.get(r.page, ""), "picture_sha256": pictures.get(id(r), ""),
             "roots": roots, "picture_roots": picture_roots} for r in result.images]
    old = "".join(f"{p.sha256}  {os.path.abspath(p.page)}\n" for p in result.pages if p.sha256)
    atomic_write(Path(path), write_rows(rows))
    atomic_write(digests_path(Path(path)), old.encode("utf-8"))


def apply_review(path: Path, dry_run: bool = False, backup_dir: Path | None = None,
                 before_write: Callable[[Path], None] | None = None, epub_metadata: bool = False) -> AltFillResult:
    """The ``text`` of every row marked ``yes`` written as its picture's alt text, a document at a time;
    a document changed since the review is left as it is and named, and so is a row naming a document
    outside the folders the review was made for. With ``epub_metadata``, an EPUB whose every picture has
    a text alternative once written says so in its package document, as a fill does."""
    rows, _ = read_review(path)
    result = AltFillResult(dry_run=dry_run)
    wanted: dict[str, list[Reviewed]] = {}
    outside: dict[str, str] = {}
    for r in rows:
        if not r.write:
            continue
        why = refused(r)
        if why:
            outside.setdefault(r.document, why)
        else:
            wanted.setdefault(r.document, []).append(r)
    for name, why in outside.items():  # one line each; the rest of the review is written
        result.pages.append(PageRow(name, "failed", error=why, kind=_kind(Path(name))))
    writing = _Writing(dry_run, backup_dir, before_write, epub_metadata)
    for name, chosen in wanted.items():
        _apply_one(Path(name), chosen, result, writing)
    return as_dry_run(result)


@dataclass(frozen=True)
class _Writing:
    """How the reviewed texts are written: the same for every file of one review."""

    dry_run: bool
    backup_dir: Path | None
    before_write: Callable[[Path], None] | None
    epub_metadata: bool


def _current(path: Path, chosen: list[Reviewed], result: AltFillResult) -> tuple[list[Reviewed], str]:
    """The rows that may be written into ``path`` as it is now: those reviewed on its present bytes,
    read with the bound of its kind from a descriptor opened without waiting. The document is named
    when none may."""
    limit = MAX_DOCUMENT_BYTES if is_document(path) or is_pdf(path) else MAX_PAGE_BYTES
    try:
        raw, _ = read_limited(os.path.realpath(path), limit)  # resolved when the review's folders were checked
    except OSError as exc:
        result.pages.append(PageRow(str(path), "failed", error=exc.strerror or str(exc), kind=_kind(path)))
        return [], ""
    now = hashlib.sha256(raw).hexdigest()
    del raw
    same = [r for r in chosen if r.document_sha256 == now]
    if not same and not (any(r.document_sha256 for r in chosen) and _already_written(path, chosen, result)):
        why = CHANGED if any(r.document_sha256 for r in chosen) else UNLISTED
        result.pages.append(PageRow(str(path), "failed", error=why, kind=_kind(path)))
    return same, now


def _pictures_now(path: Path) -> tuple[PageRow, list[tuple[str, tuple[str, str], str]]]:
    """A file's row as scanned now, and each picture's identity and (location, address), with the alt
    text it has."""
    if is_pdf(path):
        pdf = scan_pdf(path)
        return pdf.row, [(pdf_figure_id(f.ref, f.number), (f.location, f.src), f.alt or "") for f in pdf.figures]
    if is_document(path):
        doc = scan_document(path)
        return doc.row, [(s.picture_id, (s.location, s.src), "" if s.placeholder else s.alt or "") for s in doc.spots]
    try:
        page = scan_page(path)
    except ScanCancelled:  # not asked to stop: no page scan is cancelled here
        return PageRow(str(path), "failed"), []
    return page.row, [(page_picture_id(n), (f"line {f.line}", f.src or ""), "" if f.placeholder else f.alt or "")
                      for n, f in enumerate(page.found, 1)]


def _already_written(path: Path, chosen: list[Reviewed], result: AltFillResult) -> bool:
    """Whether a file changed since the review holds, on each reviewed picture, the text its row marks
    yes: the review was applied already (it is never rewritten with the new digests). Then it is said
    so and left as it is; nothing is written either way."""
    row, pictures = _pictures_now(path)
    if row.status == "failed":
        return False
    alts: dict[tuple[str, str], list[str]] = {}
    by_id = {pid: (key, alt) for pid, key, alt in pictures if pid}
    for _, key, alt in pictures:
        alts.setdefault(key, []).append(alt)
    seen: dict[tuple[str, str], int] = {}
    for r in chosen:
        key = (r.location, r.picture)
        text = _one_line(r.text)
        if r.picture_id:  # the picture the row names, where the review said it is
            if text and by_id.get(r.picture_id) != (key, text):
                return False
            continue
        n = seen[key] = seen.get(key, -1) + 1
        if text and (n >= len(alts.get(key, [])) or alts[key][n] != text):
            return False
    row.status, row.note, row.error = "unchanged", ALREADY, None
    result.pages.append(row)
    result.images += [ImageRow(str(path), 0, 0, r.picture, FillStatus.KEPT, location=r.location,
                               alt_text=_one_line(r.text), note="already written") for r in chosen]
    return True


def _read_as_checked(row: PageRow, now: str, result: AltFillResult) -> bool:
    """Whether a scan read the bytes that were checked; a file replaced in between is left and named."""
    result.pages.append(row)
    if row.sha256 and row.sha256 != now:
        row.status, row.error = "failed", CHANGED
        return False
    return row.status != "failed"


def _apply_one(path: Path, chosen: list[Reviewed], result: AltFillResult, how: _Writing) -> None:
    chosen, now = _current(path, chosen, result)
    if not chosen:
        return
    if is_pdf(path):
        pdf = scan_pdf(path)
        if not _read_as_checked(pdf.row, now, result):
            return
        _fill_pdf(pdf, chosen, result)
        write_pdf(pdf, result, how.dry_run, how.backup_dir, how.before_write)
    elif is_document(path):
        doc = scan_document(path)
        if not _read_as_checked(doc.row, now, result):
            return
        _fill_document(doc, chosen, result)
        write_document(doc, result, how.dry_run, how.backup_dir, how.before_write, epub_metadata=how.epub_metadata)
    else:
        try:
            page = scan_page(path)
        except ScanCancelled:  # not asked to stop: no page scan is cancelled here
            return
        if not _read_as_checked(page.row, now, result):
            return
        _fill_page(page, chosen, result)
        if page.inserts:
            write_page(page, result, how.dry_run, how.backup_dir, how.before_write)


def _kind(path: Path) -> str:
    return path.suffix.lower().lstrip(".") if is_document(path) or is_pdf(path) else "page"


def _one_line(text: str) -> str:
    return " ".join(clean_text(text).split())


def _take(match: Matcher, row: ImageRow, result: AltFillResult, digest: str = "") -> tuple[Reviewed | None, str | None]:
    """The review row for this picture (``review_match``) and its text on one line, the picture's row
    reported; (None, None) when the review has no row for it, (the row, None) when the row may not be
    written onto it (the report says why)."""
    r, why = match.pick(row, digest)
    if r is None:
        return None, None
    result.images.append(row)
    if why:  # the text was reviewed on another picture, or two rows claim this one: it goes onto none
        row.proposed, row.status, row.error = _one_line(r.text), FillStatus.FAILED, why
        return r, None
    return r, _one_line(r.text)


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


def _not_found(path: Path, match: Matcher, result: AltFillResult) -> None:
    for r in match.unmatched():
        result.images.append(ImageRow(str(path), 0, 0, r.picture, FillStatus.FAILED, location=r.location,
                                      error=not_found_error(r), proposed=r.text, picture_id=r.picture_id))


def _fill_page(page: _Page, chosen: list[Reviewed], result: AltFillResult) -> None:
    match = Matcher(chosen)
    for n, f in enumerate(page.found, 1):
        row = ImageRow(str(page.path), f.line, f.column, f.src or "", FillStatus.KEPT, syntax=f.syntax,
                       before=f.source, alt_text=f.alt or "", context=f.context, picture_id=page_picture_id(n))
        r, text = _take(match, row, result)
        if r is None or text is None:
            continue
        swapped = picture_changed(r, row, page.path)
        if swapped:  # the text was reviewed on another picture: it is not put on this one
            row.proposed, row.status, row.error = text, FillStatus.FAILED, swapped
            continue
        if _decide(row, text, None if f.placeholder else f.alt, f.problem):
            edit = place_text(row, f, text)
            if edit is not None:
                page.inserts.append((*edit, row))
    _not_found(page.path, match, result)


def _fill_document(doc: Doc, chosen: list[Reviewed], result: AltFillResult) -> None:
    match = Matcher(chosen)
    for spot in doc.spots:
        alt = None if spot.placeholder else spot.alt
        # A text alternative as a fill counts one: alt text, a decorative mark (alt="" among them), a label.
        has_one = alt is not None or bool(spot.decorative or spot.labelled)
        row = ImageRow(str(doc.path), spot.line, spot.column, spot.src,
                       FillStatus.KEPT if has_one else FillStatus.SKIPPED, before=spot.before, alt_text=alt or "",
                       syntax=doc.kind, location=spot.location, context=spot.context, picture_id=spot.picture_id)
        doc.rows.append(row)  # all of them: whether every picture has alt text afterwards is said from these
        _, text = _take(match, row, result, spot_digest(doc, spot))
        if text is None or (not text and has_one):  # no text for a picture marked decorative: it stays so
            continue
        if _decide(row, text, alt, spot.problem or ("" if spot.make else "no place to write")):
            place_spot(doc, spot, row, text)
    _not_found(doc.path, match, result)


def _fill_pdf(doc: PdfDoc, chosen: list[Reviewed], result: AltFillResult) -> None:
    if doc.untagged:  # its rows are a listing: there is nowhere in it to write a text
        refuse_listed(doc, chosen, result)
        return
    match = Matcher(chosen)
    for fig in doc.figures:
        alt = None if fig.alt is None or not fig.alt.strip() or is_file_name(fig.alt) else fig.alt
        row = ImageRow(str(doc.path), fig.page, fig.number, fig.src, FillStatus.KEPT if alt else FillStatus.SKIPPED,
                       alt_text=alt or "", syntax="pdf", location=fig.location, context=fig.context,
                       picture_id=pdf_figure_id(fig.ref, fig.number))
        _, text = _take(match, row, result)
        if text is None:
            continue
        no_place = "the element is not an object of its own, so nothing can be added to it"
        if _decide(row, text, alt, no_place if fig.ref is None else ""):
            place_alt(doc, fig, row, text)
    _not_found(doc.path, match, result)
