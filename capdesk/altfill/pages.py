"""Web pages in a fill: an HTML or Markdown page read so that only insertions change it (``pagetext``),
its image references found (``html_images``, ``md_images``), each planned, given its text, and the page
written back in one step, only if its bytes are still those that were read, its original kept first.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.backups import keep_original
from capdesk.altfill.backups import read_only as _read_only
from capdesk.altfill.html_images import Found, ScanCancelled, find_html_images, page_language
from capdesk.altfill.pagetext import PageError, PageText, decode_page
from capdesk.altfill.picture_ids import page_picture_id
from capdesk.altfill.places import OUTSIDE, Roots, resolve_src
from capdesk.altfill.rows import (
    UNHIDDEN,
    AltFillResult,
    FillStatus,
    ImageRow,
    PageRow,
    foreign,
    language_note,
    take_description,
)
from capdesk.describe.describer import Described
from capdesk.imageio import FoundPath
from capdesk.safe_files import folder_lock, swap_in, write_temp

PAGE_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}


@dataclass
class Page:
    path: Path
    syntax: str
    row: PageRow
    text: PageText | None = None
    digest: str = ""
    found: list[Found] = field(default_factory=list)
    inserts: list[tuple[int, str, int, ImageRow]] = field(default_factory=list)  # (at, text, end, row)


def scan_page(path: Path, cancelled: Callable[[], bool] | None = None) -> Page:
    """Read a page and find its image references; a page that cannot be read has its row's error.
    ScanCancelled when ``cancelled()`` turns true while a long page is searched."""
    page = Page(path, PAGE_SUFFIXES.get(path.suffix.lower(), "html"), PageRow(str(path), "unchanged"))
    try:
        # One descriptor, opened without waiting (a FIFO named page.html), its kind and size judged on it.
        raw = file_checks.read_bounded(path, file_checks.MAX_PAGE_BYTES)
        page.text = decode_page(raw, page.syntax == "html")
    except (OSError, PageError) as exc:
        page.row.status, page.row.error = "failed", _why(exc)
        return page
    page.digest = page.row.sha256 = hashlib.sha256(raw).hexdigest()
    page.row.encoding = page.text.encoding + (" with BOM" if page.text.bom else "")
    try:
        if page.syntax == "markdown":
            from capdesk.altfill.md_images import find_markdown_images

            page.found = find_markdown_images(page.text.text, cancelled)
        else:
            page.found = find_html_images(page.text.text)
            page.row.lang = page_language(page.text.text)
    except ScanCancelled:
        raise
    except Exception as exc:  # a parser's own fault on a hostile page (a marked section, deep nesting)
        page.row.status = "failed"  # is this page's failure, never the end of the site's run
        page.row.error = f"cannot be searched for images ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
        page.found = []
    page.row.images = len(page.found)
    return page


def _why(exc: BaseException) -> str:
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def plan_image(page: Page, f: Found, root: Path, include_empty: bool, roots: Roots) -> tuple[ImageRow, Path | None]:
    """The row for one reference, and the picture to describe when it is to be filled."""
    row = ImageRow(str(page.path), f.line, f.column, f.src or "", FillStatus.KEPT, syntax=f.syntax,
                   before=f.source, alt_text=f.alt or "", caption=f.caption, context=f.context)
    if f.alt and not f.placeholder:
        return row, None
    if f.placeholder:
        row.note = "its alt text was only a file name, which says nothing about the picture (WCAG F30)"
    elif f.decorative and not include_empty:
        row.note = f"{f.decorative}: marked decorative by the author (--include-empty fills it too)"
        return row, None
    elif f.decorative:
        row.note = f"{f.decorative}: {UNHIDDEN}"
    if f.labelled:
        row.note = f"named by its {f.labelled} attribute"
        return row, None
    if f.problem:
        row.status, row.note, row.needs_review = FillStatus.SKIPPED, f.problem, True
        return row, None
    file, why = resolve_src(f.src or "", page.path, root, roots)
    if file is None:
        row.status, row.note = FillStatus.SKIPPED, why
        return row, None
    if not roots.allows(file):  # asked before anything about the file: the same answer whether it exists or not
        row.status, row.note = FillStatus.SKIPPED, OUTSIDE
        return row, None
    row.file = os.path.normpath(file)  # "docs/../img/a.png" said as "img/a.png"
    if not file.is_file():
        row.status, row.error = FillStatus.FAILED, "no such picture file" if not file.exists() else "not a file"
        return row, None
    return row, file


def fill_image(row: ImageRow, f: Found, d: Described | None, write: str,
           page_lang: str = "") -> tuple[int, str, int] | None:
    """Set the row from the picture's description; the insertion to make, when there is one."""
    text = take_description(row, d, write)
    if text is None:
        return None
    return place_text(row, f, text, page_lang)


def place_text(row: ImageRow, f: Found, text: str, page_lang: str = "") -> tuple[int, str, int] | None:
    """The edit that gives ``f`` the alt text ``text``: (where, what, end of what it replaces); the row says
    it. None when it cannot go there. On a page in another language (``page_lang``), CapDesk's English
    text is marked English; a caption's words are the page's own language."""
    lang = "en" if foreign(page_lang) and row.said_as != "caption" and f.syntax == "html" and not f.has_lang else ""
    try:
        at, piece, end = f.edit(text, lang)
        row.lang = lang
    except ValueError as exc:
        row.status, row.note, row.needs_review = FillStatus.SKIPPED, str(exc), True
        return None
    row.status, row.alt_text = FillStatus.FILLED, text
    row.after = f.source[:at - f.start] + piece + f.source[end - f.start:]
    return at, piece, end


def plan_page(page: Page, root: Path, include_empty: bool, roots: Roots, result: AltFillResult,
               files: dict[str, Path | FoundPath]) -> list[tuple[Page, Found, ImageRow, str]]:
    """A page's images: their rows added to ``result``, the pictures to describe to ``files``; the
    (page, image, row, key) of each to fill."""
    pending = []
    for n, f in enumerate(page.found, 1):
        row, file = plan_image(page, f, root, include_empty, roots)
        row.picture_id = page_picture_id(n)  # what its review row names it by
        result.images.append(row)
        if file is not None:
            key = os.path.realpath(file)
            # The real path is what is described, and it is checked again on the descriptor it is read
            # from: a site folder swapped for a link to a private one while pictures are described is
            # refused, not put into the page.
            files.setdefault(key, FoundPath(key, roots.real))
            pending.append((page, f, row, key))
    return pending


def write_page(page: Page, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
               before_write: Callable[[Path], None] | None) -> None:
    rows = [r for *_, r in page.inserts]
    assert page.text is not None
    try:
        data = page.text.with_insertions([(at, piece, end) for at, piece, end, _ in page.inserts])
    except PageError as exc:
        _page_failed(page.row, rows, str(exc))
        return
    why = reads_back(page, data)
    if why:
        _page_failed(page.row, rows, f"the change would not read back ({why})")
        return
    target = Path(os.path.realpath(page.path))  # a linked page: change the file, keep the link
    locked = _read_only(target)
    if locked:
        _page_failed(page.row, rows, locked)
        return
    old = page.text.text
    new = data[len(page.text.bom):].decode(page.text.encoding, "surrogateescape")
    result.diffs[str(page.path)] = unified_diff(str(page.path), old, new, page.text.encoding)
    page.row.filled = len(rows)
    if dry_run:
        page.row.status = "would change"
        return
    try:
        if backup_dir is not None:
            page.row.backup = str(keep_original(Path(backup_dir), target, page.text.raw))
        with folder_lock(target.parent):
            tmp = write_temp(target, data, like=target)
            if before_write is not None:
                before_write(page.path)
            done = swap_in(tmp, target, page.digest)
    except OSError as exc:
        _page_failed(page.row, rows, f"cannot write it ({_why(exc)})")
        return
    if not done:
        _page_failed(page.row, rows, "it changed while CapDesk was working, so it was left as it is; run again")
        return
    page.row.status, page.row.sha256 = "changed", hashlib.sha256(data).hexdigest()
    for r in rows:
        r.written = True


def reads_back(page: Page, data: bytes) -> str:
    """Why the page as it would be written does not read back as the page read (its encoding found again
    the same way: an insertion that pushed a ``<meta charset>`` out of sight would change how every byte
    is read); "" when it does."""
    assert page.text is not None
    try:
        again = decode_page(data, page.syntax == "html")
    except PageError as exc:
        return str(exc)
    if (again.encoding, again.bom) != (page.text.encoding, page.text.bom):
        return f"it would be read as {again.encoding}, not {page.text.encoding}"
    return ""


def write_filled(page: Page, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
                 before_write: Callable[[Path], None] | None) -> None:
    """The page written with the alt text given to it, if any; the report says when CapDesk's English text
    went into a page in another language."""
    if foreign(page.row.lang) and any(r.lang for *_, r in page.inserts):
        page.row.note = language_note(page.row.lang, 'lang="en"')
    if page.inserts:
        write_page(page, result, dry_run, backup_dir, before_write)


def _page_failed(row: PageRow, images: list[ImageRow], why: str) -> None:
    row.status, row.error = "failed", why
    for r in images:
        r.status, r.error, r.after = FillStatus.FAILED, f"the page was not changed: {why}", ""


def unified_diff(name: str, old: str, new: str, encoding: str = "utf-8") -> bytes:
    """The change to one page as a unified diff, in the page's own bytes (its encoding and line
    endings), so that ``patch`` can apply it; the file names as the file system spells them."""
    if encoding.startswith("utf-16"):  # a diff is read in a terminal: one in UTF-16 would be noise
        encoding = "utf-8"
    out = []
    for i, line in enumerate(difflib.unified_diff(_lines(old), _lines(new), name, name)):
        raw = os.fsencode(line) if i < 2 else line.encode(encoding, "surrogateescape")
        out.append(raw if raw.endswith(b"\n") else raw + b"\n\\ No newline at end of file\n")
    return b"".join(out)


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)
