"""Web pages: HTML and Markdown files, their ``<img>`` tags and Markdown images (``capdesk.altfill.pages``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.formats.base import DocumentFormat, Planning, Seen, Wanted
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.pages import (
    PAGE_SUFFIXES,
    Page,
    fill_image,
    plan_page,
    reads_back,
    scan_page,
    write_filled,
)
from capdesk.altfill.picture_ids import page_picture_id
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.review_fill import fill_page
from capdesk.altfill.rows import AltFillResult
from capdesk.describe.describer import Described


class WebPage(DocumentFormat):
    name = "page"
    label = "web page (HTML, Markdown)"
    suffixes = PAGE_SUFFIXES
    write_order = 0
    previews = False  # a page's report links its pictures' own files

    def kind(self, path: str | os.PathLike[str]) -> str:
        return "page"

    def max_bytes(self) -> int:
        return file_checks.MAX_PAGE_BYTES

    def scan(self, path: Path, options: AltFillOptions | None = None,
             cancelled: Callable[[], bool] | None = None) -> Page:
        return scan_page(path, cancelled)

    def pictures(self, doc: Page) -> list[Seen]:
        return [Seen(page_picture_id(n), f"line {f.line}", f.src or "", "" if f.placeholder else f.alt or "",
                     f.context) for n, f in enumerate(doc.found, 1)]

    def plan(self, doc: Page, planning: Planning, root: Path) -> list[Wanted]:
        return [Wanted(f, row, key) for _, f, row, key in
                plan_page(doc, root, planning.options.include_empty, planning.roots, planning.result, planning.files)]

    def fill(self, doc: Page, wanted: Wanted, described: Described | None, write: str) -> None:
        edit = fill_image(wanted.row, wanted.item, described, write, doc.row.lang)
        if edit is not None:
            doc.inserts.append((*edit, wanted.row))

    def fill_reviewed(self, doc: Page, chosen: list[Reviewed], result: AltFillResult) -> None:
        fill_page(doc, chosen, result)

    def verify(self, doc: Page, data: bytes) -> str:
        return reads_back(doc, data)

    def write(self, doc: Page, result: AltFillResult, writing: Writing) -> None:
        write_filled(doc, result, writing.dry_run, writing.backup_dir, writing.before_write)
