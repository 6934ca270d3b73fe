"""The kinds of file alt-fill writes into, by name: web pages, zip documents and PDFs, each one module here
behind one interface (``base.DocumentFormat``: which files it takes; scan, pictures, plan, fill, verify,
write) and one ``register`` line below. A fill and a review round go through it for every file alike;
the files a run takes are those registered, in the order they were registered.

May import: the rest of altfill/ (each family's own modules), describe/ and the shared vocabulary.
"""

from __future__ import annotations

import os
from pathlib import Path

from capdesk.altfill.formats.base import DocumentFormat, Planning, Seen, Wanted
from capdesk.altfill.formats.pdf_file import PdfFile
from capdesk.altfill.formats.web_page import WebPage
from capdesk.altfill.formats.zip_document import ZipDocument

__all__ = ["DocumentFormat", "Planning", "Seen", "Wanted", "for_file", "get", "kind_of", "known", "names",
           "register", "suffixes", "unregister"]

_REGISTERED: dict[str, DocumentFormat] = {}


def register(fmt: DocumentFormat) -> DocumentFormat:
    """Take ``fmt``'s files from now on; no suffix may belong to two formats."""
    if not fmt.name or fmt.name in _REGISTERED:
        raise ValueError(f"a document format needs a name of its own (not {fmt.name!r})")
    taken = {s for f in _REGISTERED.values() for s in f.suffixes} & set(fmt.suffixes)
    if taken:
        raise ValueError(f"{fmt.name}: {', '.join(sorted(taken))} already belong to another format")
    _REGISTERED[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def known() -> tuple[DocumentFormat, ...]:
    return tuple(_REGISTERED.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTERED)


def get(name: str) -> DocumentFormat:
    try:
        return _REGISTERED[name]
    except KeyError:
        raise ValueError(f"unknown document format {name!r} (choose {', '.join(_REGISTERED)})") from None


def for_file(path: str | os.PathLike[str]) -> DocumentFormat | None:
    """The format that takes ``path`` (by its suffix), or None."""
    return next((f for f in _REGISTERED.values() if f.takes(path)), None)


def suffixes() -> dict[str, str]:
    """Every suffix a run takes, with the kind each is (".html": "html", ".epub": "epub", ".pdf": "pdf")."""
    return {s: k for f in _REGISTERED.values() for s, k in f.suffixes.items()}


def kind_of(path: str | os.PathLike[str]) -> str:
    """What the report calls ``path`` (``PageRow.kind``): "page" for a page or a file no format takes."""
    fmt = for_file(Path(path))
    return fmt.kind(path) if fmt is not None else "page"


register(WebPage())
register(ZipDocument())
register(PdfFile())
