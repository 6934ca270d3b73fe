"""A PDF in a fill run: a tagged one's Figures planned to be filled, an untagged one's pictures listed for
review (``pdf_untagged``); and each, once described, given its text or its listing."""

from __future__ import annotations

from capdesk.altfill.pdf import PdfDoc, PdfRefused, picture_bytes, place_alt, plan_figure
from capdesk.altfill.pdf_untagged import list_text, plan_untagged
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, take_description
from capdesk.altfill.thumbnails import thumbnail_url
from capdesk.describe.describer import Described


def plan_pdf(doc: PdfDoc, include_empty: bool, store, result: AltFillResult, files: dict,
             previews: bool = False) -> list[tuple]:
    """A scanned PDF's rows added to ``result``, its pictures to ``files``; the (figure or picture, row, key)
    of each to describe. With ``previews``, a Figure left as it was (its /Alt the author's) gets its small
    copy too, for the HTML report."""
    if doc.untagged:
        return plan_untagged(doc, store, result, files)
    wanted: list[tuple] = []
    for fig in doc.figures:
        row, describe = plan_figure(doc, fig, include_empty)
        result.images.append(row)
        if not describe:
            if previews and row.status == FillStatus.KEPT:
                row.preview = _kept_preview(fig, store)
            continue
        try:
            file = store.add(picture_bytes(fig), f"page-{fig.page}-figure-{fig.number}.png")
        except PdfRefused as exc:
            row.status, row.error = FillStatus.FAILED, str(exc)
            continue
        except OSError as exc:
            row.status, row.error = FillStatus.FAILED, f"cannot be copied out to be described ({exc.strerror or exc})"
            continue
        files.setdefault(str(file), file)
        wanted.append((fig, row, str(file)))
    return wanted


def _kept_preview(fig, store) -> str:
    """The Figure's picture, small, as a data: URL ("" where it cannot be drawn: the report shows its text)."""
    try:
        return thumbnail_url(store.add(picture_bytes(fig), f"page-{fig.page}-figure-{fig.number}.png"))
    except (PdfRefused, OSError):
        return ""


def fill_pdf_row(doc: PdfDoc, item, row: ImageRow, d: Described | None, write: str) -> None:
    """One described picture of a PDF: a Figure given the text ``write`` lets in, an untagged PDF's picture
    its text to paste."""
    if doc.untagged:
        list_text(row, d)
        return
    text = take_description(row, d, write)
    if text is not None:
        place_alt(doc, item, row, text)
