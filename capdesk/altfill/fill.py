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
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill.backups import default_backup_dir, keep_original  # noqa: F401  (default_backup_dir: API)
from capdesk.altfill.backups import read_only as _read_only
from capdesk.altfill.documents import (
    DOC_SUFFIXES,
    Doc,
    PictureStore,
    apply_spot,
    is_document,
    picture_file,
    plan_spot,
    scan_document,
    write_document,
)
from capdesk.altfill.dry_run import as_dry_run
from capdesk.altfill.html_images import Found, ScanCancelled, find_html_images, page_language
from capdesk.altfill.pagetext import PageError, PageText, decode_page
from capdesk.altfill.pdf import PdfDoc, is_pdf, write_pdf
from capdesk.altfill.pdf_plan import fill_pdf_row, plan_pdf
from capdesk.altfill.picture_ids import page_picture_id
from capdesk.altfill.places import OUTSIDE, REMOTE, Roots, resolve_src  # noqa: F401  (REMOTE: API)
from capdesk.altfill.review_bind import run_roots
from capdesk.altfill.rows import (  # noqa: F401  (the report's types, said where they always were)
    UNDESCRIBED,
    UNHIDDEN,
    AltFillResult,
    FillStatus,
    ImageRow,
    PageRow,
    foreign,
    language_note,
    take_description,
)
from capdesk.altfill.thumbnails import thumbnail_url
from capdesk.describe.describer import Described, Describer
from capdesk.folders.reading import describe_paths
from capdesk.imageio import FoundPath
from capdesk.safe_files import folder_lock, read_limited, swap_in, write_temp

PAGE_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
FILL_SUFFIXES = {**PAGE_SUFFIXES, **DOC_SUFFIXES, ".pdf": "pdf"}
MAX_PAGE_BYTES = 64 * 1024 * 1024  # a page is rarely past a megabyte; this is no page


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
                          if not f.startswith(".") and Path(f).suffix.lower() in FILL_SUFFIXES]
            yield from ((f, p, None) for f in sorted(found))
        elif not p.exists():
            yield p, p.parent, "no such file or folder"
        elif p.suffix.lower() not in FILL_SUFFIXES:
            yield p, p.parent, ("not an HTML or Markdown page (.html, .htm, .md, .markdown) or a document "
                                "(.epub, .docx, .pptx, .odt, .odp, .xlsx, .ods, .pdf)")
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
    inserts: list[tuple[int, str, int, ImageRow]] = field(default_factory=list)  # (at, text, end, row)


def scan_page(path: Path, cancelled: Callable[[], bool] | None = None) -> _Page:
    """Read a page and find its image references; a page that cannot be read has its row's error.
    ScanCancelled when ``cancelled()`` turns true while a long page is searched."""
    page = _Page(path, PAGE_SUFFIXES.get(path.suffix.lower(), "html"), PageRow(str(path), "unchanged"))
    try:
        # One descriptor, opened without waiting (a FIFO named page.html), its kind and size judged on it.
        raw, _ = read_limited(path, MAX_PAGE_BYTES, follow=True)
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


def _plan(page: _Page, f: Found, root: Path, include_empty: bool, roots: Roots) -> tuple[ImageRow, Path | None]:
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


def _apply(row: ImageRow, f: Found, d: Described | None, write: str = "all",
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


def run_alt_fill(paths: Iterable[str | os.PathLike[str]], describer: Describer, recursive: bool = False,
                 include_empty: bool = False, dry_run: bool = False, backup_dir: Path | None = None,
                 progress: ProgressFn | None = None,
                 cancelled: Callable[[], bool] = lambda: False, before_write: Callable[[Path], None] | None = None,
                 batch_size: int = 8, allow_roots: Iterable[str | os.PathLike[str]] = (),
                 epub_metadata: bool = False, write: str = "all", previews: bool = False,
                 allow_signed: bool = False) -> AltFillResult:
    """Fill the alt text of every page and document under ``paths``; ``before_write(page)`` is
    called just before each page is replaced (tests use it to edit a page at the worst moment).
    Pictures are described as ``describer`` describes (the beam and the options it was built with).
    Pictures are described only inside the folders given (each folder, each page's folder) and
    ``allow_roots``, and a document's only from inside it. With ``epub_metadata``, an EPUB whose
    pictures all have alt text afterwards says so in its package document. ``write`` (facts, probably,
    all) says which kinds of text are written; the rest are listed for review with the text proposed.
    With ``previews``, each document's pictures are kept in their rows, small, for the HTML report. With
    ``allow_signed``, a signed PDF is updated after its signature (never one certified against changes)."""
    store = PictureStore()
    try:
        return as_dry_run(_run(paths, describer, recursive, include_empty, dry_run, backup_dir, progress, cancelled,
                               before_write, batch_size, allow_roots, epub_metadata, store, write, previews,
                               allow_signed))
    finally:
        store.close()


def _run(paths: Iterable[str | os.PathLike[str]], describer: Describer, recursive: bool, include_empty: bool,
         dry_run: bool, backup_dir: Path | None, progress: ProgressFn | None,
         cancelled: Callable[[], bool], before_write: Callable[[Path], None] | None, batch_size: int,
         allow_roots: Iterable[str | os.PathLike[str]], epub_metadata: bool, store: PictureStore, write: str,
         previews: bool, allow_signed: bool = False) -> AltFillResult:
    t0 = time.monotonic()
    result = AltFillResult(dry_run=dry_run)
    pages: list[_Page] = []
    seen: set[str] = set()
    pending: list[tuple[_Page, Found, ImageRow, str]] = []
    docs: list[tuple[Doc, list[tuple]]] = []  # each document, with its (spot, row, key) to fill
    files: dict[str, Path | FoundPath] = {}
    paths = [os.fspath(p) for p in paths]
    listed = list(find_pages(paths, recursive))
    roots = Roots([root for _, root, err in listed if not err] + list(allow_roots))
    result.roots, result.picture_roots = run_roots([p for p in paths if os.path.exists(p)]), list(roots.real)
    for path, root, err in listed:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if err:
            kind = "pdf" if is_pdf(path) else DOC_SUFFIXES.get(path.suffix.lower(), "page")
            result.pages.append(PageRow(str(path), "failed", error=err, kind=kind))
            continue
        if cancelled():
            result.interrupted = True
            break
        if _plan_file(path, include_empty, store, result, files, docs, allow_signed):
            continue
        try:
            page = scan_page(path, cancelled)
        except ScanCancelled:
            result.interrupted = True
            break
        pages.append(page)
        result.pages.append(page.row)
        pending += _plan_page(page, root, include_empty, roots, result, files)
    described = _describe(describer, files, progress, cancelled, batch_size)
    result.interrupted = result.interrupted or len(described) < len(files)
    for page, f, row, key in pending:
        edit = _apply(row, f, described.get(key), write, page.row.lang)
        if edit is not None:
            page.inserts.append((*edit, row))
    for page in pages:
        if foreign(page.row.lang) and any(r.lang for *_, r in page.inserts):
            page.row.note = language_note(page.row.lang, 'lang="en"')
        if page.inserts:
            write_page(page, result, dry_run, backup_dir, before_write)
    for doc, wanted in docs:
        _fill_document(doc, wanted, described, files, write, previews)
        if isinstance(doc, PdfDoc):
            write_pdf(doc, result, dry_run, backup_dir, before_write)
        else:
            write_document(doc, result, dry_run, backup_dir, before_write, epub_metadata)
    result.seconds = time.monotonic() - t0
    return result


def _plan_file(path: Path, include_empty: bool, store: PictureStore, result: AltFillResult,
               files: dict[str, Path | FoundPath], docs: list[tuple[Doc, list[tuple]]], allow_signed: bool) -> bool:
    """A PDF or document planned (True); False for a web page."""
    if is_pdf(path):
        docs.append(plan_pdf(path, include_empty, store, result, files, allow_signed))  # type: ignore[arg-type]
    elif is_document(path):
        docs.append(_plan_document(path, include_empty, store, result, files))
    else:
        return False
    return True


def _plan_document(path: Path, include_empty: bool, store: PictureStore, result: AltFillResult,
                   files: dict[str, Path | FoundPath]) -> tuple[Doc, list[tuple]]:
    """A document scanned: its rows added to ``result``, its pictures to ``files``; the document, with
    the (spot, row, key) of each picture to fill."""
    doc = scan_document(path)
    result.pages.append(doc.row)
    wanted: list[tuple] = []
    for spot in doc.spots:
        row, entry = plan_spot(doc, spot, include_empty)
        result.images.append(row)
        file = picture_file(doc, entry, row, store, spot) if entry else None
        if file is not None:
            files.setdefault(str(file), file)
            wanted.append((spot, row, str(file)))
    return doc, wanted


def _fill_document(doc: Doc | PdfDoc, wanted: list[tuple], described: dict[str, Described],
                   files: dict[str, Path | FoundPath], write: str, previews: bool) -> None:
    """A document's (or a PDF's) pictures given the texts ``write`` lets in; with ``previews``, their pictures
    kept, small, in their rows."""
    for spot, row, key in wanted:
        if isinstance(doc, PdfDoc):
            fill_pdf_row(doc, spot, row, described.get(key), write)
        else:
            apply_spot(doc, spot, row, described.get(key), write)
        if previews:
            row.preview = thumbnail_url(files[key])


def _plan_page(page: _Page, root: Path, include_empty: bool, roots: Roots, result: AltFillResult,
               files: dict[str, Path | FoundPath]) -> list[tuple[_Page, Found, ImageRow, str]]:
    """A page's images: their rows added to ``result``, the pictures to describe to ``files``; the
    (page, image, row, key) of each to fill."""
    pending = []
    for n, f in enumerate(page.found, 1):
        row, file = _plan(page, f, root, include_empty, roots)
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


def _describe(describer: Describer, files: dict[str, Path | FoundPath], progress: ProgressFn | None,
              cancelled: Callable[[], bool], batch_size: int) -> dict[str, Described]:
    """Each distinct picture described once; cancellation is checked between batches."""
    keys = list(files)
    out: dict[str, Described] = {}
    for start in range(0, len(keys), batch_size):
        if cancelled():
            break
        chunk = keys[start:start + batch_size]
        for key, d in zip(chunk, describe_paths(describer, [files[k] for k in chunk], batch_size=batch_size)):
            out[key] = d
            if progress:
                progress(len(out), len(keys), os.path.basename(files[key]))
    return out


def write_page(page: _Page, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
               before_write: Callable[[Path], None] | None) -> None:
    rows = [r for *_, r in page.inserts]
    assert page.text is not None
    try:
        data = page.text.with_insertions([(at, piece, end) for at, piece, end, _ in page.inserts])
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
    page.row.status, page.row.sha256 = "changed", hashlib.sha256(data).hexdigest()
    for r in rows:
        r.written = True


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
