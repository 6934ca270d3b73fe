"""The review file's format: one CSV row per picture, read and written here and nowhere else.

A review is self-contained: each row carries its document's digest and its picture's (``document_sha256``,
``picture_sha256``) and the folders and files the run was given (``roots``) and that its pictures could
come from (``picture_roots``), so a copy saved under another name (a spreadsheet's "Save As") applies as
the original does. ``FILE.csv.sha256`` is still written beside it, for older CapDesk versions; a review
from before these columns is read with that file, as it always was.

Nothing here is signed: whoever edits the review can edit any cell. What the columns promise is that a
review writes only inside the folders it was made for, and a row only onto the document and picture it
was reviewed on (their exact bytes).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill.file_checks import read_bounded
from capdesk.safe_files import RefusedFile

# A contract: columns are read by name, never by place, and a file without the later ones still applies;
# no column is taken away or renamed. They are written in the order a person works down a row in a
# spreadsheet: decide (``write``), read or edit the text, see which picture and what is around it, then
# the rest. ``context`` (the text before and after the picture) and ``picture_name`` (its file name, or a
# PDF's page) are for the person reviewing; they are never read back. ``picture_id`` is the picture's
# identity in its document (``picture_ids``): a row is written onto the picture it names, and only while
# that picture's address (``picture``), place (``location``) and, where the review holds one, its bytes'
# digest (``picture_sha256``, for a web page's picture file and for a picture a document holds) match.
COLUMNS = ("write", "text", "picture", "context", "picture_name", "said_as", "reason", "document", "location",
           "trust", "document_sha256", "picture_sha256", "roots", "picture_roots", "picture_id")
NEEDED = ("document", "location", "picture", "text", "write")
# ``said_as`` in plain words since the columns were reordered, and the words before; both are read.
SAID_AS_READ = {"fact": "fact", "guess": "probably", "probably": "probably", "tags only": "maybe",
                "maybe": "maybe", "kind only": "kind", "kind": "kind", "from the caption": "caption",
                "caption": "caption", "nothing said": "none", "none": "none", "withheld": "withheld",
                "already in the document": "kept"}
# A cell a spreadsheet would run as a formula is written with a leading apostrophe, taken off when read.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MAX_REVIEW_BYTES = 64 * 1024 * 1024  # a review of a hundred thousand pictures is a few tens of MiB
MAX_DIGESTS_BYTES = 16 * 1024 * 1024  # the old side file: one line of about 100 bytes per document


class ReviewError(ValueError):
    """A review file that cannot be used as a whole (missing, not CSV, the wrong columns)."""


def digests_path(path: Path) -> Path:
    return Path(str(path) + ".sha256")


def safe_cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def read_cell(text: str) -> str:
    """``safe_cell`` undone: every cell is guarded when written, so every cell is unguarded when read."""
    return text[1:] if text.startswith("'") and text[1:].startswith(_FORMULA_START) else text


def roots_cell(paths: list[str]) -> str:
    return json.dumps(paths, ensure_ascii=False) if paths else ""


def _roots(cell: str) -> list[str] | None:
    """The paths a ``roots`` cell names; None when it names none (a review from before the column)."""
    try:
        got = json.loads(cell) if cell.strip() else None
    except ValueError:
        return []  # present but unreadable: no folder at all, so nothing is written for that row
    if got is None:
        return None
    return [p for p in got if isinstance(p, str) and p] if isinstance(got, list) else []


@dataclass
class Reviewed:
    document: str
    location: str
    picture: str
    text: str
    write: bool
    line: int = 0  # where the row is in the review file, for what is said about it
    document_sha256: str = ""  # the document as the review saw it ("" in a review from before the column)
    picture_sha256: str = ""  # the picture file as the review saw it ("": inside its document, or none read)
    roots: list[str] | None = None  # the folders and files the run was given; None in a review from before
    picture_roots: list[str] = field(default_factory=list)  # the folders its pictures could come from
    said_as: str = ""  # how its text said what it said when proposed (``SAID_AS_READ``'s values), "" when unsaid
    picture_id: str = ""  # the picture's identity in its document ("" in a review from before the column)


def write_rows(rows: list[dict[str, str]], columns: tuple[str, ...] | list[str] = COLUMNS,
               guard: bool = True) -> bytes:
    """The CSV's bytes for ``rows`` (RFC 4180, what spreadsheets write back); each cell guarded unless
    the rows are cells read back as they were (``guard=False``)."""
    out = io.StringIO(newline="")
    w = csv.DictWriter(out, list(columns), lineterminator="\r\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: safe_cell(v) for k, v in r.items()} if guard else r)
    return out.getvalue().encode("utf-8")


def read_cells(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the cells of a review file, as written (guards kept); ``ReviewError`` for one that
    is too large, not a regular file, not UTF-8 or not CSV, naming the file and the line."""
    try:
        raw = read_bounded(path, MAX_REVIEW_BYTES)  # the user names it: a link is theirs
    except RefusedFile as exc:
        raise ReviewError(f"{path}: {exc.strerror}") from exc
    except OSError as exc:
        raise ReviewError(f"{exc.filename or path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")  # a spreadsheet may add a byte-order mark
    except UnicodeDecodeError as exc:
        raise ReviewError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    old = csv.field_size_limit()
    csv.field_size_limit(MAX_REVIEW_BYTES)  # a cell is bounded by the file, which is bounded
    try:
        rows = list(reader)
        columns = list(reader.fieldnames or ())
    except csv.Error as exc:
        raise ReviewError(f"{path}, line {reader.line_num}: not a CSV file a review can be read from ({exc})") from exc
    finally:
        csv.field_size_limit(old)
    missing = [c for c in NEEDED if c not in columns]
    if missing:
        raise ReviewError(f"{path}: not a review file (no column {', '.join(missing)})")
    return columns, rows


def _old_digests(path: Path) -> dict[str, str]:
    """The side file of a review from before the digest columns: {document: digest}."""
    try:
        raw = read_bounded(digests_path(path), MAX_DIGESTS_BYTES)
    except RefusedFile as exc:
        raise ReviewError(f"{digests_path(path)}: {exc.strerror}") from exc
    except OSError as exc:
        raise ReviewError(f"{exc.filename or digests_path(path)}: {exc.strerror or exc}") from exc
    sums = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        digest, _, name = line.partition("  ")
        if name:
            sums[name] = digest
    return sums


def read_review(path: Path) -> tuple[list[Reviewed], dict[str, str]]:
    """The rows of a review file, and the digest of each document as the side file says (only for a
    review from before the digest columns; {} for one that has them)."""
    columns, cells = read_cells(path)
    bound = "document_sha256" in columns
    sums = {} if bound else _old_digests(path)
    rows = []
    for n, raw in enumerate(cells, start=2):  # line 1 is the header (a cell over lines counts as one row)
        c = {k: read_cell(v or "") for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}
        name = c.get("document", "")
        rows.append(Reviewed(name, c.get("location", ""), c.get("picture", ""), c.get("text", ""),
                             c.get("write", "").strip().lower() in ("yes", "y", "true", "1"), n,
                             c.get("document_sha256", "").strip().lower() if bound else sums.get(name, ""),
                             c.get("picture_sha256", "").strip().lower(), _roots(c.get("roots", "")),
                             _roots(c.get("picture_roots", "")) or [], said_as_read(c.get("said_as", "")),
                             c.get("picture_id", "").strip()))
    return rows, sums


def said_as_read(cell: str) -> str:
    """A ``said_as`` cell in the words of either CapDesk version ("guess" or "probably"), as one value;
    "" for an empty or unknown one (it decides nothing: the ``write`` column does)."""
    return SAID_AS_READ.get(" ".join(cell.split()).lower(), "")
