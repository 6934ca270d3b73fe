"""PDFs: a tagged one's Figures given /Alt in an incremental update, an untagged one's pictures listed for
review (``capdesk.altfill.pdf``, ``pdf_plan``, ``pdf_untagged``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.formats.base import DocumentFormat, Planning, Seen, Wanted
from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.pdf import PdfDoc, reads_back, scan_pdf, write_pdf
from capdesk.altfill.pdf_plan import fill_pdf_row, plan_pdf
from capdesk.altfill.picture_ids import pdf_figure_id
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.review_fill import fill_pdf
from capdesk.altfill.rows import AltFillResult
from capdesk.describe.describer import Described


class PdfFile(DocumentFormat):
    name = "pdf"
    label = "PDF"
    suffixes = {".pdf": "pdf"}

    def max_bytes(self) -> int:
        return file_checks.MAX_DOCUMENT_BYTES

    def scan(self, path: Path, options: AltFillOptions | None = None,
             cancelled: Callable[[], bool] | None = None) -> PdfDoc:
        return scan_pdf(path, options is not None and options.allow_signed)

    def pictures(self, doc: PdfDoc) -> list[Seen]:
        """A tagged PDF's Figures (an untagged one's pictures are listed, never written: none here)."""
        return [Seen(pdf_figure_id(f.ref, f.number), f.location, f.src, f.alt or "", f.context) for f in doc.figures]

    def plan(self, doc: PdfDoc, planning: Planning, root: Path) -> list[Wanted]:
        return [Wanted(*w) for w in plan_pdf(doc, planning.options.include_empty, planning.store, planning.result,
                                             planning.files, planning.options.previews)]

    def fill(self, doc: PdfDoc, wanted: Wanted, described: Described | None, write: str) -> None:
        fill_pdf_row(doc, wanted.item, wanted.row, described, write)

    def fill_reviewed(self, doc: PdfDoc, chosen: list[Reviewed], result: AltFillResult) -> None:
        fill_pdf(doc, chosen, result)

    def verify(self, doc: PdfDoc, data: bytes) -> str:
        return reads_back(doc, data)

    def write(self, doc: PdfDoc, result: AltFillResult, writing: Writing) -> None:
        write_pdf(doc, result, writing.dry_run, writing.backup_dir, writing.before_write)
