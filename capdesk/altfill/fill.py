"""Alt text written into pages and documents: the ``<img>`` tags and Markdown images of HTML and
Markdown files, the pictures of EPUB and Office documents and the Figures of tagged PDFs that have
none get the description of the picture they show.

One runner serves ``capdesk alt-fill`` and the window's dialog (progress and cancellation come in
through callbacks; nothing here prints or knows about Qt), and takes every file through the same steps
of its format (``formats``). Each distinct picture is described once,
by the same describer and rule as ``capdesk batch``: a picture with nothing certain to say gets no
alt text (an empty one would mark it decorative) and is listed for review. A page changes only by
insertions of alt text; it is replaced in one step, only if its bytes are still those that were
read, and its original is kept in the backup folder first (``backups``). Only pictures inside the
folders given are described (``places``); a read-only page is left as it is and listed as failed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capdesk.altfill import formats
from capdesk.altfill.backups import default_backup_dir, keep_original  # noqa: F401  (API)
from capdesk.altfill.documents import PictureStore
from capdesk.altfill.dry_run import as_dry_run
from capdesk.altfill.file_checks import MAX_PAGE_BYTES  # noqa: F401  (said here since before file_checks)
from capdesk.altfill.html_images import ScanCancelled
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.pages import (  # noqa: F401  (a page's steps, said where they always were)
    PAGE_SUFFIXES,
    Page,
    place_text,
    scan_page,
    unified_diff,
    write_page,
)
from capdesk.altfill.places import OUTSIDE, REMOTE, Roots, resolve_src  # noqa: F401  (REMOTE, OUTSIDE: API)
from capdesk.altfill.review_bind import run_roots
from capdesk.altfill.rows import (  # noqa: F401  (the report's types, said where they always were)
    UNDESCRIBED,
    UNHIDDEN,
    AltFillResult,
    FillStatus,
    ImageRow,
    PageRow,
)
from capdesk.altfill.thumbnails import thumbnail_url
from capdesk.describe.describer import Described, Describer
from capdesk.folders.reading import describe_paths
from capdesk.imageio import FoundPath

FILL_SUFFIXES = formats.suffixes()


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


@dataclass(frozen=True)
class Hooks:
    """What a run is given besides the person's choices: where originals are kept, how progress is told,
    how it is stopped (checked between pictures), and a call just before each file is replaced (tests
    use it to edit a file at the worst moment)."""

    backup_dir: Path | None = None
    progress: ProgressFn | None = None
    cancelled: Callable[[], bool] = lambda: False
    before_write: Callable[[Path], None] | None = None
    batch_size: int = 8


def run_alt_fill(paths: Iterable[str | os.PathLike[str]], describer: Describer, recursive: bool = False,
                 include_empty: bool = False, dry_run: bool = False, backup_dir: Path | None = None,
                 progress: ProgressFn | None = None,
                 cancelled: Callable[[], bool] = lambda: False, before_write: Callable[[Path], None] | None = None,
                 batch_size: int = 8, allow_roots: Iterable[str | os.PathLike[str]] = (),
                 epub_metadata: bool = False, write: str = "facts", previews: bool = False,
                 allow_signed: bool = False) -> AltFillResult:
    """``run_fill`` with the options said one by one. ``write`` is "facts" unless said, as on the command
    line and in the window: only texts said as fact and the author's captions are written."""
    options = AltFillOptions(tuple(os.fspath(p) for p in paths), recursive=recursive, include_empty=include_empty,
                             dry_run=dry_run, allow_roots=tuple(os.fspath(r) for r in allow_roots),
                             epub_metadata=epub_metadata, write=write, previews=previews, allow_signed=allow_signed)
    return run_fill(options, describer, Hooks(backup_dir, progress, cancelled, before_write, batch_size))


def run_fill(options: AltFillOptions, describer: Describer, hooks: Hooks = Hooks()) -> AltFillResult:
    """Fill the alt text of every page and document under ``options.paths``. Pictures are described as
    ``describer`` describes (the beam and the options it was built with), only inside the folders given
    (each folder, each page's folder) and ``options.allow_roots``, and a document's only from inside it.
    With ``epub_metadata``, an EPUB whose pictures all have alt text afterwards says so in its package
    document. ``write`` (facts, probably, all) says which kinds of text are written; the rest are listed
    for review with the text proposed. With ``previews``, each document's pictures are kept in their rows,
    small, for the HTML report. With ``allow_signed``, a signed PDF is updated after its signature (never
    one certified against changes)."""
    store = PictureStore()
    try:
        return as_dry_run(_run(options, describer, hooks, store))
    finally:
        store.close()


def _run(options: AltFillOptions, describer: Describer, hooks: Hooks, store: PictureStore) -> AltFillResult:
    """Every file through the same steps of its format (``formats``): scanned and planned, its pictures
    described once each, then given their texts, then written."""
    t0 = time.monotonic()
    result = AltFillResult(dry_run=options.dry_run)
    listed = list(find_pages(options.paths, options.recursive))
    roots = Roots([root for _, root, err in listed if not err] + list(options.allow_roots))
    result.roots = run_roots([p for p in options.paths if os.path.exists(p)])
    result.picture_roots = list(roots.real)
    planning = formats.Planning(options, roots, store, result, {})
    scanned: list[tuple[formats.DocumentFormat, Any]] = []
    wanted: list[tuple[formats.DocumentFormat, Any, formats.Wanted]] = []
    seen: set[str] = set()
    for path, root, err in listed:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if err:
            result.pages.append(PageRow(str(path), "failed", error=err, kind=formats.kind_of(path)))
            continue
        if hooks.cancelled():
            result.interrupted = True
            break
        fmt = formats.for_file(path)
        assert fmt is not None  # find_pages names a file no format takes as an error
        try:
            doc = fmt.scan(path, options, hooks.cancelled)
        except ScanCancelled:
            result.interrupted = True
            break
        result.pages.append(doc.row)
        scanned.append((fmt, doc))
        wanted += [(fmt, doc, w) for w in fmt.plan(doc, planning, root)]
    described = _describe(describer, planning.files, hooks)
    result.interrupted = result.interrupted or len(described) < len(planning.files)
    for fmt, doc, w in wanted:
        fmt.fill(doc, w, described.get(w.key), options.write)
        if options.previews and fmt.previews:
            w.row.preview = thumbnail_url(planning.files[w.key])
    writing = Writing(options.dry_run, hooks.backup_dir, hooks.before_write, options.epub_metadata)
    for fmt, doc in sorted(scanned, key=lambda s: s[0].write_order):
        fmt.write(doc, result, writing)
    result.seconds = time.monotonic() - t0
    return result


def _describe(describer: Describer, files: dict[str, Path | FoundPath], hooks: Hooks) -> dict[str, Described]:
    """Each distinct picture described once; cancellation is checked between batches."""
    keys = list(files)
    out: dict[str, Described] = {}
    size = hooks.batch_size
    for start in range(0, len(keys), size):
        if hooks.cancelled():
            break
        chunk = keys[start:start + size]
        for key, d in zip(chunk, describe_paths(describer, [files[k] for k in chunk], batch_size=size)):
            out[key] = d
            if hooks.progress:
                hooks.progress(len(out), len(keys), os.path.basename(files[key]))
    return out
