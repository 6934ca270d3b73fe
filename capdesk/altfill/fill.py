"""Alt text written into web pages: the ``<img>`` tags and Markdown images of HTML and Markdown
files that have none get the description of the picture they show.

One runner serves ``capdesk alt-fill`` and the window's dialog (progress and cancellation come in
through callbacks; nothing here prints or knows about Qt). Each distinct picture is described once,
by the same describer and rule as ``capdesk batch``: a picture with nothing certain to say gets no
alt text (an empty one would mark it decorative) and is listed for review. A page changes only by
insertions of alt text; it is replaced in one step, only if its bytes are still those that were
read, and its original is kept in the backup folder first (``backups``). Only pictures inside the
folders given are described (``places``); a read-only page is left as it is and listed as failed.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from capdesk.altfill.backups import default_backup_dir, keep_original  # noqa: F401  (default_backup_dir: API)
from capdesk.altfill.html_images import Found, ScanCancelled, find_html_images
from capdesk.altfill.pagetext import PageError, PageText, decode_page
from capdesk.altfill.places import OUTSIDE, REMOTE, Roots, resolve_src  # noqa: F401  (REMOTE: API)
from capdesk.describe.describer import Described, Describer
from capdesk.folders.batch import counts_summary
from capdesk.safe_files import folder_lock, swap_in, write_temp
from capdesk.sidecars.xmp import clean_text

PAGE_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
MAX_PAGE_BYTES = 64 * 1024 * 1024  # a page is rarely past a megabyte; this is no page
UNDESCRIBED = "nothing certain could be said about the picture, so no alt text was written"


class FillStatus(str, Enum):
    """What alt-fill did for one image reference: the report's ``status``."""

    FILLED = "filled"  # alt text written (or, in a dry run, would be)
    UNDESCRIBED = "undescribed"  # described, with nothing certain to say: no alt text, a person should write it
    KEPT = "kept"  # it has alt text, or the author marked it decorative
    SKIPPED = "skipped"  # not a local file (remote, data:), or no place to put the text exactly
    FAILED = "failed"  # the picture is missing or cannot be read, or its page could not be written

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


@dataclass
class ImageRow:
    page: str
    line: int
    column: int
    src: str  # as the page gives it (character references and escapes decoded)
    status: FillStatus
    file: str | None = None  # the local picture it points to
    alt_text: str = ""  # what was written (filled), or what was there (kept)
    confidence: float | None = None
    needs_review: bool = False
    in_domain: bool | None = None
    model: str = ""
    reason: str | None = None  # why a person should look (never part of the alt text)
    note: str | None = None  # why it was left as it is
    error: str | None = None
    syntax: str = "html"  # html | markdown
    before: str = ""  # the reference's exact text before, and after the edit
    after: str = ""
    written: bool = False


@dataclass
class PageRow:
    page: str
    status: str  # changed | would change (dry run) | unchanged | failed
    encoding: str = ""
    images: int = 0
    filled: int = 0
    backup: str | None = None
    error: str | None = None


@dataclass
class AltFillResult:
    pages: list[PageRow] = field(default_factory=list)
    images: list[ImageRow] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    dry_run: bool = False
    diffs: dict[str, bytes] = field(default_factory=dict)  # page -> unified diff of what changes, in its bytes

    @property
    def failed(self) -> bool:
        return any(p.status == "failed" for p in self.pages) or any(r.status == FillStatus.FAILED
                                                                     for r in self.images)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.images:
            out[str(r.status)] = out.get(str(r.status), 0) + 1
        return out

    def summary(self) -> str:
        pages: dict[str, int] = {}
        for p in self.pages:
            pages[p.status] = pages.get(p.status, 0) + 1
        listed = ", ".join(f"{n} {k}" for k, n in sorted(pages.items()))
        return f"{len(self.pages)} page{'s' if len(self.pages) != 1 else ''}" + (f" ({listed})" if listed else "") \
            + f"; images: {counts_summary(self.counts())}"


ProgressFn = Callable[[int, int, str], None]


def find_pages(paths: Iterable[str | os.PathLike[str]], recursive: bool = False
               ) -> Iterator[tuple[Path, Path, str | None]]:
    """(page, the site folder root-relative addresses start from, error or None) for each page."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
                found += [Path(root, f) for f in files
                          if not f.startswith(".") and Path(f).suffix.lower() in PAGE_SUFFIXES]
            yield from ((f, p, None) for f in sorted(found))
        elif not p.exists():
            yield p, p.parent, "no such file or folder"
        elif p.suffix.lower() not in PAGE_SUFFIXES:
            yield p, p.parent, "not an HTML or Markdown page (.html, .htm, .md, .markdown)"
        else:
            yield p, p.parent, None


@dataclass
class _Page:
    path: Path
    syntax: str
    row: PageRow
    text: PageText | None = None
    digest: str = ""
    found: list[Found] = field(default_factory=list)
    inserts: list[tuple[int, str, ImageRow]] = field(default_factory=list)


def scan_page(path: Path, cancelled: Callable[[], bool] | None = None) -> _Page:
    """Read a page and find its image references; a page that cannot be read has its row's error.
    ScanCancelled when ``cancelled()`` turns true while a long page is searched."""
    page = _Page(path, PAGE_SUFFIXES.get(path.suffix.lower(), "html"), PageRow(str(path), "unchanged"))
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO named page.html would block the read for ever
            raise PageError("not a regular file")
        if st.st_size > MAX_PAGE_BYTES:
            raise PageError(f"too large for a page ({st.st_size:,} bytes)")
        raw = path.read_bytes()
        page.text = decode_page(raw, page.syntax == "html")
    except (OSError, PageError) as exc:
        page.row.status, page.row.error = "failed", _why(exc)
        return page
    page.digest = hashlib.sha256(raw).hexdigest()
    page.row.encoding = page.text.encoding + (" with BOM" if page.text.bom else "")
    try:
        if page.syntax == "markdown":
            from capdesk.altfill.md_images import find_markdown_images

            page.found = find_markdown_images(page.text.text, cancelled)
        else:
            page.found = find_html_images(page.text.text)
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


def _plan(page: _Page, f: Found, root: Path, include_empty: bool, roots: Roots) -> tuple[ImageRow, Path | None]:
    """The row for one reference, and the picture to describe when it is to be filled."""
    row = ImageRow(str(page.path), f.line, f.column, f.src or "", FillStatus.KEPT, syntax=f.syntax,
                   before=f.source, alt_text=f.alt or "")
    if f.alt:
        return row, None
    if f.decorative and not include_empty:
        row.note = f"{f.decorative}: marked decorative by the author (--include-empty fills it too)"
        return row, None
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


def _apply(row: ImageRow, f: Found, d: Described | None) -> tuple[int, str] | None:
    """Set the row from the picture's description; the insertion to make, when there is one."""
    if d is None:
        row.status, row.note = FillStatus.SKIPPED, "not described: the run was stopped first"
        return None
    row.model, row.in_domain = d.model, d.in_domain
    if not d.ok:
        row.status, row.error = FillStatus.FAILED, d.error
        return None
    # One line (an attribute or Markdown brackets hold no line breaks), with nothing a page, its
    # XML reader or a terminal showing the report must not be given (an ESC, a NUL).
    text = " ".join(clean_text(d.description).split())
    row.needs_review = d.review
    row.reason = (d.reason or "the model gave no caption") if d.review else None
    if not text:
        row.status, row.needs_review, row.reason = FillStatus.UNDESCRIBED, True, row.reason or UNDESCRIBED
        return None
    conf = d.alt_text().confidence  # only a caption said in the alt text carries its confidence
    row.confidence = None if conf is None else round(conf, 4)
    try:
        piece = f.insertion(text)
    except ValueError as exc:
        row.status, row.note, row.needs_review = FillStatus.SKIPPED, str(exc), True
        return None
    cut = f.at - f.start
    row.status, row.alt_text, row.after = FillStatus.FILLED, text, f.source[:cut] + piece + f.source[cut:]
    return f.at, piece


def run_alt_fill(paths: Iterable[str | os.PathLike[str]], describer: Describer, recursive: bool = False,
                 include_empty: bool = False, dry_run: bool = False, backup_dir: Path | None = None,
                 beam: int | None = None, progress: ProgressFn | None = None,
                 cancelled: Callable[[], bool] = lambda: False, before_write: Callable[[Path], None] | None = None,
                 batch_size: int = 8, allow_roots: Iterable[str | os.PathLike[str]] = ()) -> AltFillResult:
    """Fill the alt text of every page under ``paths``; ``before_write(page)`` is called just
    before each page is replaced (tests use it to edit a page at the worst moment). Pictures are
    described only inside the folders given (each folder, each page's folder) and ``allow_roots``."""
    t0 = time.monotonic()
    result = AltFillResult(dry_run=dry_run)
    pages: list[_Page] = []
    seen: set[str] = set()
    pending: list[tuple[_Page, Found, ImageRow, str]] = []
    files: dict[str, Path] = {}
    listed = list(find_pages(paths, recursive))
    roots = Roots([root for _, root, err in listed if not err] + list(allow_roots))
    for path, root, err in listed:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if err:
            result.pages.append(PageRow(str(path), "failed", error=err))
            continue
        try:
            if cancelled():
                raise ScanCancelled
            page = scan_page(path, cancelled)
        except ScanCancelled:
            result.interrupted = True
            break
        pages.append(page)
        result.pages.append(page.row)
        for f in page.found:
            row, file = _plan(page, f, root, include_empty, roots)
            result.images.append(row)
            if file is not None:
                key = os.path.realpath(file)
                # The real path is what is described: a link swapped after the check above changes nothing.
                files.setdefault(key, Path(key))
                pending.append((page, f, row, key))
    described = _describe(describer, files, beam, progress, cancelled, batch_size)
    result.interrupted = result.interrupted or len(described) < len(files)
    for page, f, row, key in pending:
        edit = _apply(row, f, described.get(key))
        if edit is not None:
            page.inserts.append((*edit, row))
    for page in pages:
        if page.inserts:
            _write(page, result, dry_run, backup_dir, before_write)
    result.seconds = time.monotonic() - t0
    return result


def _describe(describer: Describer, files: dict[str, Path], beam: int | None, progress: ProgressFn | None,
              cancelled: Callable[[], bool], batch_size: int) -> dict[str, Described]:
    """Each distinct picture described once; cancellation is checked between batches."""
    keys = list(files)
    out: dict[str, Described] = {}
    for start in range(0, len(keys), batch_size):
        if cancelled():
            break
        chunk = keys[start:start + batch_size]
        for key, d in zip(chunk, describer.describe_paths([files[k] for k in chunk], beam=beam,
                                                          batch_size=batch_size)):
            out[key] = d
            if progress:
                progress(len(out), len(keys), files[key].name)
    return out


def _write(page: _Page, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
           before_write: Callable[[Path], None] | None) -> None:
    rows = [r for _, _, r in page.inserts]
    assert page.text is not None
    try:
        data = page.text.with_insertions([(at, piece) for at, piece, _ in page.inserts])
    except PageError as exc:
        _page_failed(page.row, rows, str(exc))
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
    page.row.status = "changed"
    for r in rows:
        r.written = True


def _read_only(page: Path) -> str | None:
    """Why a page must not be replaced though its folder could take a new file: its mode says no one
    may write it (0444: a person made it read-only, and running as root does not change that), or
    this user may not. None when it may be written."""
    try:
        mode = os.stat(page).st_mode
    except OSError as exc:
        return f"cannot write it ({_why(exc)})"
    if not mode & 0o222 or not os.access(page, os.W_OK):
        return (f"it is read-only (mode {stat.S_IMODE(mode):04o}), so it was left as it is; "
                "make it writable to have its alt text filled")
    return None


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
