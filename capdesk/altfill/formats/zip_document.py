"""Documents that are zips of XML parts: EPUB, Word, PowerPoint, Excel and OpenDocument files
(``capdesk.altfill.documents``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.documents import (
    DOC_SUFFIXES,
    Doc,
    apply_spot,
    kept_previews,
    plan_document,
    reads_back,
    scan_document,
    write_document,
)
from capdesk.altfill.formats.base import DocumentFormat, Planning, Seen, Wanted
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.review_fill import fill_document
from capdesk.altfill.rows import AltFillResult
from capdesk.describe.describer import Described


class ZipDocument(DocumentFormat):
    name = "zip"
    label = "document (EPUB, DOCX, PPTX, XLSX, ODT, ODP, ODS)"
    suffixes = DOC_SUFFIXES

    def max_bytes(self) -> int:
        return file_checks.MAX_DOCUMENT_BYTES

    def scan(self, path: Path, options: AltFillOptions | None = None,
             cancelled: Callable[[], bool] | None = None) -> Doc:
        return scan_document(path)

    def pictures(self, doc: Doc) -> list[Seen]:
        return [Seen(s.picture_id, s.location, s.src, "" if s.placeholder else s.alt or "", s.context)
                for s in doc.spots]

    def plan(self, doc: Doc, planning: Planning, root: Path) -> list[Wanted]:
        wanted = [Wanted(*w) for w in plan_document(doc, planning.options.include_empty, planning.store,
                                                    planning.result, planning.files)]
        if planning.options.previews:
            kept_previews(doc, planning.store)
        return wanted

    def fill(self, doc: Doc, wanted: Wanted, described: Described | None, write: str) -> None:
        apply_spot(doc, wanted.item, wanted.row, described, write)

    def fill_reviewed(self, doc: Doc, chosen: list[Reviewed], result: AltFillResult) -> None:
        fill_document(doc, chosen, result)

    def verify(self, doc: Doc, data: bytes) -> str:
        return reads_back(doc, data)

    def write(self, doc: Doc, result: AltFillResult, writing: Writing) -> None:
        write_document(doc, result, writing.dry_run, writing.backup_dir, writing.before_write, writing.epub_metadata)
