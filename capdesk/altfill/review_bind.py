"""What binds a review to the run that made it: the documents a row may write (only inside the folders
and files the run was given, links resolved, never through ``..``) and the picture it was reviewed on
(the same bytes). A review is plain text that anyone who edits it can change, so these are checks of
where and onto what it writes, not of who wrote it.
"""

from __future__ import annotations

import os
from pathlib import Path

from capdesk.altfill.places import Roots, resolve_src
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.rows import AltFillResult, ImageRow
from capdesk.imageio import MAX_FILE_BYTES
from capdesk.safe_files import snapshot

OUTSIDE_REVIEW = ("outside the folders the review was made for, so it was not written (a review writes only "
                  "into the pages and documents of the run that made it)")
DOTDOT = "named through '..', so it was not written (a review names each document by its own path)"
PAGE_SUFFIXES = (".html", ".htm", ".md", ".markdown")  # the pictures of these are files of their own


def run_roots(paths: list[str]) -> list[str]:
    """What a review records of the paths a run was given: each as given (absolute) and as it really is,
    so that a document is found inside by its name and by its real path alike."""
    out: list[str] = []
    for p in paths:
        for q in (os.path.abspath(p), os.path.realpath(p)):
            if q not in out:
                out.append(q)
    return out


def refused(r: Reviewed) -> str | None:
    """Why the row's document may not be written, or None when it may. A review from before the roots
    column holds each document to the folder it is in: no link out of it, no ``..``."""
    if ".." in Path(r.document).parts:
        return DOTDOT
    roots = r.roots if r.roots is not None else [os.path.dirname(os.path.abspath(r.document))]
    return None if roots and Roots(roots).allows(r.document) else OUTSIDE_REVIEW


def picture_digest(file: str | os.PathLike[str], roots: Roots) -> str:
    """The sha256 of a page's picture file, read in chunks with the picture bound, from the descriptor
    whose kind was checked; "" for one outside ``roots``, missing, not a regular file or too large."""
    if not roots.allows(file):
        return ""
    got = snapshot(Path(os.path.realpath(file)), MAX_FILE_BYTES)
    return got if got and ":" not in got else ""


def review_digests(result: AltFillResult) -> dict[int, str]:
    """Each picture's digest as a run leaves it, by row: what a review holds its row to. A web page's
    picture file is read for it; a document's picture was read from the document (``picture_sha256``)."""
    roots = Roots(result.picture_roots)
    out: dict[int, str] = {}
    for r in result.images:
        if r.file and Path(r.page).suffix.lower() in PAGE_SUFFIXES:
            out[id(r)] = picture_digest(r.file, roots)
        elif r.picture_sha256:
            out[id(r)] = r.picture_sha256
    return out


def picture_changed(r: Reviewed, row: ImageRow, page: Path) -> str | None:
    """Why the reviewed text may not go onto this page's picture: it is not the picture the review saw
    (other bytes, gone, or no longer a file inside the run's folders); None when it is, or when the
    review holds no digest for it (a remote picture, a review from before the column)."""
    if not r.picture_sha256:
        return None
    roots = Roots(r.picture_roots or r.roots or [])
    file, _ = resolve_src(row.src, page, _site_root(r, page), roots)
    if file is None or picture_digest(file, roots) != r.picture_sha256:
        return f"picture changed since the review: {row.src}"
    return None


def _site_root(r: Reviewed, page: Path) -> Path:
    """The folder a page's root-relative addresses start from, as in the run: the folder given that holds
    it, else its own folder."""
    real = os.path.realpath(page)
    held = [f for f in (r.roots or []) if os.path.isdir(f) and Roots([f]).holds(real)]
    return Path(max(held, key=len)) if held else page.parent
