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
from pathlib import Path
from urllib.parse import unquote

from capdesk.altfill import file_checks, formats
from capdesk.altfill.dry_run import as_dry_run
from capdesk.altfill.html_images import ScanCancelled
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.review_bind import refused, review_digests
from capdesk.altfill.review_file import (  # noqa: F401  (ReviewError, read_review, digests_path: API)
    COLUMNS,
    Reviewed,
    ReviewError,
    digests_path,
    read_review,
    roots_cell,
    write_rows,
)
from capdesk.altfill.review_fill import one_line
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow, said_words
from capdesk.safe_files import atomic_write

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
                 before_write: Callable[[Path], None] | None = None, epub_metadata: bool = False,
                 allow_signed: bool = False) -> AltFillResult:
    """The ``text`` of every row marked ``yes`` written as its picture's alt text, a document at a time;
    a document changed since the review is left as it is and named, and so is a row naming a document
    outside the folders the review was made for. With ``epub_metadata``, an EPUB whose every picture has
    a text alternative once written says so in its package document, as a fill does; with
    ``allow_signed``, a signed PDF is updated after its signature as a fill does (never one certified
    against any change)."""
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
    writing = Writing(dry_run, backup_dir, before_write, epub_metadata)
    for name, chosen in wanted.items():
        _apply_one(Path(name), chosen, result, writing, AltFillOptions(allow_signed=allow_signed))
    return as_dry_run(result)


def _current(path: Path, chosen: list[Reviewed], result: AltFillResult) -> tuple[list[Reviewed], str]:
    """The rows that may be written into ``path`` as it is now: those reviewed on its present bytes,
    read with the bound of its kind from a descriptor opened without waiting. The document is named
    when none may."""
    fmt = formats.for_file(path) or formats.get("page")
    try:  # resolved when the review's folders were checked
        raw = file_checks.read_bounded(os.path.realpath(path), fmt.max_bytes(), follow=False)
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
    fmt = formats.for_file(path) or formats.get("page")
    try:
        doc = fmt.scan(path)
    except ScanCancelled:  # not asked to stop: no scan is cancelled here
        return PageRow(str(path), "failed"), []
    return doc.row, [(p.picture_id, (p.location, p.src), p.alt) for p in fmt.pictures(doc)]


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
        text = one_line(r.text)
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
                               alt_text=one_line(r.text), note="already written") for r in chosen]
    return True


def _read_as_checked(row: PageRow, now: str, result: AltFillResult) -> bool:
    """Whether a scan read the bytes that were checked; a file replaced in between is left and named."""
    result.pages.append(row)
    if row.sha256 and row.sha256 != now:
        row.status, row.error = "failed", CHANGED
        return False
    return row.status != "failed"


def _apply_one(path: Path, chosen: list[Reviewed], result: AltFillResult, how: Writing,
               options: AltFillOptions) -> None:
    chosen, now = _current(path, chosen, result)
    if not chosen:
        return
    fmt = formats.for_file(path) or formats.get("page")
    try:
        doc = fmt.scan(path, options)
    except ScanCancelled:  # not asked to stop: no scan is cancelled here
        return
    if not _read_as_checked(doc.row, now, result):
        return
    fmt.fill_reviewed(doc, chosen, result)
    fmt.write(doc, result, how)


def _kind(path: Path) -> str:
    return formats.kind_of(path)
