"""The alt-fill report, as JSON or as an HTML page for review: every image reference with its page,
line, the alt text written and its confidence, why a person should look, and the reference's exact
text before and after (with the backups, how to undo any of it)."""

from __future__ import annotations

import html
from dataclasses import asdict
from pathlib import Path

from capdesk.altfill.fill import AltFillResult, FillStatus, ImageRow
from capdesk.altfill.rows import said_words
from capdesk.altfill.thumbnails import browser_shows, thumbnail_url
from capdesk.folders.batch import html_report_bytes, json_report_bytes, report_link
from capdesk.safe_files import atomic_write

REPORT_SUFFIXES = (".json", ".html", ".htm")


def write_report(result: AltFillResult, path: Path) -> None:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        raw = json_report_bytes({"dry_run": result.dry_run, "counts": result.counts(),
                                 "interrupted": result.interrupted, "seconds": round(result.seconds, 2),
                                 "pages": [asdict(p) for p in result.pages],
                                 "images": [_json_row(r) for r in result.images]})
    elif suffix in (".html", ".htm"):
        raw = html_report_bytes(_html(result, path.parent, result.picture_roots))
    else:
        raise ValueError(f"{path}: report must end in .json or .html")
    atomic_write(path, raw)


def _json_row(r: ImageRow) -> dict:
    row = asdict(r)
    del row["preview"]  # the picture itself belongs in the HTML report only
    return row


def _picture(r: ImageRow, base: Path, roots: list[str] | None = None) -> str:
    """Every picture beside its text: a page's by a link to its file (by a small copy where a browser may
    not show the file: HEIC, HEIF, AVIF, TIFF), a document's by the copy kept in the row."""
    src = r.preview
    if not src and r.file:
        src = report_link(r.file, base) if browser_shows(r.file) else thumbnail_url(r.file, within=roots or None)
    if not src:
        return ""
    return f'<img src="{src}" alt="{html.escape(r.proposed or r.alt_text, quote=True)}" loading="lazy">'


def _item(r: ImageRow, base: Path, roots: list[str] | None = None) -> str:
    if r.error:
        note = f'<p class="error">Problem: {html.escape(r.error)}</p>'
    elif r.needs_review:
        note = f'<p class="review">Needs review: {html.escape(r.reason or r.note or "check the alt text")}.</p>'
    elif r.note:
        note = f'<p class="meta">{html.escape(r.note)}</p>'
    else:
        note = ""
    img = _picture(r, base, roots)
    if r.listed_only and r.proposed:  # an untagged PDF's picture: nothing is written into the PDF
        said = f"Text to paste into the source: {html.escape(r.proposed)}"
    elif r.status == FillStatus.REVIEW:
        said = f"Proposed, not written: {html.escape(r.proposed)}"
    else:
        said = html.escape(r.alt_text) if r.alt_text else "(no alt text)"
    change = ""
    if r.after:
        change = (f"<details><summary>Exact change</summary><pre>{html.escape(r.before)}</pre>"
                  f"<p>became</p><pre>{html.escape(r.after)}</pre></details>")
    said_as = said_words(r)
    conf = f", said as: {said_as}" if said_as else ""
    conf += f", confidence {r.confidence:.2f}" if r.confidence is not None else ""
    conf += f", trust {r.trust:.2f}" if r.trust is not None else ""
    page = report_link(r.page, base)
    where = html.escape(r.location or f"line {r.line}")
    caption = f'<p class="meta">Its caption: {html.escape(r.caption)}</p>' if r.caption else ""
    # What the document says around the picture, for the person judging the text (it changes no alt text).
    caption += f'<p class="meta">Text around it: {html.escape(r.context)}</p>' if r.context else ""
    return (f'<li class="{r.status}{" review" if r.needs_review else ""}"><figure>{img}<figcaption>'
            f'<strong><a href="{page}">{html.escape(Path(r.page).name)}</a>, {where}</strong>'
            f"<p><code>{html.escape(r.src)}</code></p><p>{said}</p>{caption}{note}"
            f"<p class='meta'>{html.escape(str(r.status))}{conf}</p>{change}</figcaption></figure></li>")


def _where(result: AltFillResult) -> str:
    pages = any(p.kind == "page" for p in result.pages)
    docs = any(p.kind != "page" for p in result.pages)
    return "web pages and documents" if pages and docs else "documents" if docs else "web pages"


def _html(result: AltFillResult, base: Path, roots: list[str] | None = None) -> str:
    problems = "".join(f"<li>{html.escape(p.page)}: {html.escape(p.error or '')}</li>"
                       for p in result.pages if p.status == "failed")
    problems = f"<h2>Pages and documents with problems</h2><ul class='pages'>{problems}</ul>" if problems else ""
    notes = "".join(f"<li>{html.escape(p.page)}: {html.escape(p.note)}</li>" for p in result.pages if p.note)
    problems += f"<h2>Documents</h2><ul class='pages'>{notes}</ul>" if notes else ""
    head = "Dry run: nothing was written. " if result.dry_run else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Alt text filled in {_where(result)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 1rem/1.5 system-ui, sans-serif; margin: 1rem 2rem; }}
ul {{ list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr));
     gap: 1rem; }}
ul.pages {{ display: block; }}
li {{ border: 2px solid #888; border-radius: .4rem; padding: .5rem; }}
li.review {{ border-color: #b36b00; }} li.failed {{ border-color: #b00020; }}
img {{ max-width: 100%; height: auto; display: block; }} pre {{ white-space: pre-wrap; }}
.error {{ color: #b00020; }} .review {{ color: #8a4f00; }} .meta {{ color: #555; font-size: .9rem; }}
</style></head><body>
<h1>Alt text filled in {_where(result)}</h1>
<p>{head}{html.escape(result.summary())}{' (interrupted before the end)' if result.interrupted else ''}.
Alt text is machine-generated; check the entries marked for review.</p>
{problems}
<ul>
{chr(10).join(_item(r, base, roots) for r in result.images)}
</ul></body></html>
"""
