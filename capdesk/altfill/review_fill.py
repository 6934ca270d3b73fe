"""The texts of a review placed into a page or document as it is now: each picture matched to its review row
(``review_match``), its text put in only where the picture has none and nothing stands in the way; the
report says of every other row why not. Each format's ``fill_reviewed`` is one of these."""

from __future__ import annotations

from pathlib import Path

from capdesk.altfill.documents import Doc, place_spot, spot_digest
from capdesk.altfill.pages import Page, place_text
from capdesk.altfill.pdf import PdfDoc, place_alt
from capdesk.altfill.pdf_untagged import refuse_listed
from capdesk.altfill.picture_ids import page_picture_id, pdf_figure_id
from capdesk.altfill.review_bind import picture_changed
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.review_match import Matcher, not_found_error
from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow
from capdesk.altfill.spots import is_file_name
from capdesk.sidecars.xmp import clean_text


def one_line(text: str) -> str:
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
        row.proposed, row.status, row.error = one_line(r.text), FillStatus.FAILED, why
        return r, None
    return r, one_line(r.text)


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


def fill_page(page: Page, chosen: list[Reviewed], result: AltFillResult) -> None:
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


def fill_document(doc: Doc, chosen: list[Reviewed], result: AltFillResult) -> None:
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


def fill_pdf(doc: PdfDoc, chosen: list[Reviewed], result: AltFillResult) -> None:
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
