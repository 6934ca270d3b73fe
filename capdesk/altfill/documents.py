"""Alt text filled into documents: EPUB, Word, PowerPoint and OpenDocument files, by the rules of
web pages, their pictures described by the same describer.

A document is read once (its digest kept), its zip checked (``zipsafe``), its pictures found
(``epub``, ``office``). Each picture the document holds is copied to a private temporary folder to
be described, like any file. The changed XML parts get only the alt text, spliced in at byte
offsets; the zip is rebuilt with every other entry's bytes as they were, and replaced in one step
only if it still holds the bytes that were read, its original kept in the backup folder first.
A document that cannot be read safely (DRM, a password, a zip bomb, names leading out of the zip,
a broken XML part) is named with the reason and left as it is.
"""

from __future__ import annotations

import hashlib
import posixpath
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.altfill import file_checks
from capdesk.altfill.backups import write_change
from capdesk.altfill.context import document_lang
from capdesk.altfill.epub import Epub, find_epub, metadata_edit
from capdesk.altfill.office import find_office
from capdesk.altfill.picture_ids import entry_digest
from capdesk.altfill.rows import (
    UNHIDDEN,
    AltFillResult,
    FillStatus,
    ImageRow,
    PageRow,
    foreign,
    language_note,
    take_description,
)
from capdesk.altfill.spots import Spot
from capdesk.altfill.thumbnails import thumbnail_url
from capdesk.altfill.xmlscan import Part, PartError, parse_part
from capdesk.altfill.zipsafe import ZipDoc, ZipRefused
from capdesk.describe.describer import Described

DOC_SUFFIXES = {".epub": "epub", ".docx": "docx", ".pptx": "pptx", ".odt": "odt", ".odp": "odp", ".xlsx": "xlsx",
                ".ods": "ods"}
ALL_ALT = "every picture has a text alternative (alt text, or marked decorative)"
FEATURE_ADDED = "; the package now says so (schema:accessibilityFeature alternativeText)"
FEATURE_HINT = "; --epub-metadata would say so in the package (schema:accessibilityFeature alternativeText)"


def is_document(path: Path) -> bool:
    return path.suffix.lower() in DOC_SUFFIXES


@dataclass
class Doc:
    path: Path
    kind: str
    row: PageRow
    raw: bytes = b""
    digest: str = ""
    zip: ZipDoc | None = None
    parts: dict[str, Part] = field(default_factory=dict)
    spots: list[Spot] = field(default_factory=list)
    epub: Epub | None = None
    edits: list[tuple[Spot, str, ImageRow]] = field(default_factory=list)  # (spot, text to put at it, row)
    rows: list[ImageRow] = field(default_factory=list)
    meta_piece: str = ""  # what the package document gets, with --epub-metadata
    lang_note: str = ""  # what the report says of English alt text in a document in another language
    notes: list[str] = field(default_factory=list)  # what else the report says of the whole document
    digests: dict[str, str] = field(default_factory=dict)  # each picture's sha256, by its zip entry


def scan_document(path: Path) -> Doc:
    """Read a document and find its pictures; one that cannot be read has its row's error."""
    kind = DOC_SUFFIXES[path.suffix.lower()]
    doc = Doc(path, kind, PageRow(str(path), "unchanged", kind=kind))
    try:
        doc.raw = file_checks.read_bounded(path, file_checks.MAX_DOCUMENT_BYTES)
        doc.digest = doc.row.sha256 = hashlib.sha256(doc.raw).hexdigest()
        doc.zip = ZipDoc(doc.raw)
        if kind == "epub":
            doc.epub = find_epub(doc.zip)
            doc.parts, doc.spots = doc.epub.parts, doc.epub.spots
            doc.row.lang = doc.epub.lang
            if doc.epub.fragments:
                doc.notes.append(f"its manifest links {', '.join(doc.epub.fragments[:3])} carry a #fragment (EPUBCheck "
                                 "reports them); each was read as the file it names")
        else:
            doc.parts, doc.spots = find_office(doc.zip, kind)
            doc.row.lang = document_lang(doc.zip, kind, doc.parts)
            doc.notes += _pictures_elsewhere(doc)
    except (ZipRefused, PartError) as exc:
        doc.row.status, doc.row.error, doc.spots = "failed", str(exc), []
    except OSError as exc:
        doc.row.status, doc.row.error, doc.spots = "failed", exc.strerror or str(exc), []
    except Exception as exc:  # noqa: BLE001 (MemoryError, a reader's own fault: this document's failure,
        # never the end of the run; what it read is let go with it)
        _unreadable(doc, exc)
    doc.row.encoding = "utf-8" if doc.parts else ""
    doc.row.images = len(doc.spots)
    if doc.row.status == "failed":  # never written: nothing of it is kept for the rest of the run
        doc.raw, doc.zip, doc.parts, doc.epub = b"", None, {}, None
    return doc


def _unreadable(doc: Doc, exc: BaseException) -> None:
    why = ("too large to read in the memory left" if isinstance(exc, MemoryError)
           else f"cannot be read ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]})")
    doc.row.status, doc.row.error, doc.spots = "failed", why, []


SHEET_MEDIA = {"xlsx": "xl/media/", "ods": "Pictures/"}


def _pictures_elsewhere(doc: Doc) -> list[str]:
    """A spreadsheet's pictures that are in none of its drawings (Excel's pictures placed in a cell, a
    chart's fill): named in one line, since they are left as they are."""
    media = SHEET_MEDIA.get(doc.kind)
    if media is None or doc.zip is None:
        return []
    used = {s.picture for s in doc.spots}
    rest = [n for n in doc.zip.names() if n.startswith(media) and not n.endswith("/") and n not in used]
    if not rest:
        return []
    return [f"a spreadsheet: {len(rest)} of its pictures ({', '.join(rest[:3])}{', ...' if len(rest) > 3 else ''}) "
            "are not drawings on a sheet (pictures placed in cells, or a chart's), so CapDesk leaves them; "
            "give them alt text in the spreadsheet program"]


def plan_spot(doc: Doc, spot: Spot, include_empty: bool) -> tuple[ImageRow, str | None]:
    """The row for one picture, and its zip entry when it is to be described."""
    row = ImageRow(str(doc.path), spot.line, spot.column, spot.src, FillStatus.KEPT, before=spot.before,
                   alt_text=spot.alt or "", syntax=doc.kind, location=spot.location, caption=spot.caption,
                   context=spot.context, picture_id=spot.picture_id, picture_sha256=spot_digest(doc, spot))
    doc.rows.append(row)
    if spot.alt:
        return row, None
    if spot.decorative and not include_empty:
        row.note = f"{spot.decorative}: marked decorative by the author (--include-empty fills it too)"
        return row, None
    if spot.decorative:
        row.note = f"{spot.decorative}: {UNHIDDEN}"
    if spot.labelled:
        row.note = f"named by its {spot.labelled} attribute"
        return row, None
    if spot.problem or spot.make is None:
        row.status, row.note, row.needs_review = FillStatus.SKIPPED, spot.problem or "no place to write", True
        return row, None
    if spot.skip or spot.picture is None:
        if spot.missing:
            row.status, row.error = FillStatus.FAILED, spot.missing
        else:
            row.status, row.note = FillStatus.SKIPPED, spot.skip
        return row, None
    if spot.placeholder:
        row.note = "its text was only a file name, which says nothing about the picture (WCAG F30)"
    return row, spot.picture


def spot_digest(doc: Doc, spot: Spot) -> str:
    """The sha256 of the picture ``spot`` shows, as the document holds it ("" for none of its own)."""
    return entry_digest(doc.zip.read, spot.picture, doc.digests) if doc.zip is not None else ""


class PictureStore:
    """A private temporary folder where a document's pictures are put to be described like files;
    the same picture (by its bytes) once, however many documents hold it."""

    def __init__(self) -> None:
        self._dir: str | None = None

    def add(self, data: bytes, name: str) -> Path:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="capdesk-alt-fill-")  # mode 0700
        digest = hashlib.sha256(data).hexdigest()[:32]
        folder = Path(self._dir, digest)
        folder.mkdir(mode=0o700, exist_ok=True)
        # The same bytes under another name (or a write that failed before) find the first copy, if any.
        existing = next(folder.iterdir(), None)
        if existing is not None:
            return existing
        path = folder / _store_name(name)
        path.write_bytes(data)
        return path

    def close(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _store_name(entry: str) -> str:
    """The entry's own name where the file system takes it: a name over 255 bytes (90 Chinese characters
    are enough) keeps only its extension, which is all that describing needs of it."""
    name = posixpath.basename(entry).replace("\x00", "") or "picture"
    if len(name.encode("utf-8", "surrogateescape")) <= 200:
        return name
    suffix = posixpath.splitext(name)[1]
    return "picture" + (suffix if len(suffix.encode("utf-8", "surrogateescape")) <= 16 else "")


def vector_kind(data: bytes, name: str = "") -> str:
    """The vector format of a picture CapDesk cannot draw (Office's EMF and WMF, LibreOffice's SVM, SVG, and
    their compressed forms), named as people know it; "" for any other picture."""
    if len(data) >= 44 and data[:4] == b"\x01\x00\x00\x00" and data[40:44] == b" EMF":
        return "EMF"
    if data[:4] == b"\xd7\xcd\xc6\x9a" or data[:6] in (b"\x01\x00\x09\x00\x00\x03", b"\x02\x00\x09\x00\x00\x03"):
        return "WMF"
    if data[:6] == b"VCLMTF":
        return "SVM (a LibreOffice metafile)"
    suffix = posixpath.splitext(name)[1].lower()
    if suffix in (".svg", ".svgz") or (data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<" and b"<svg" in data[:1024]):
        return "SVG"
    if data[:2] == b"\x1f\x8b" and suffix in (".emz", ".wmz"):
        return f"{suffix[1:].upper()} (a compressed {suffix[1:3].upper()}F)"
    return ""


def picture_file(doc: Doc, entry: str, row: ImageRow, store: PictureStore, spot: Spot | None = None) -> Path | None:
    """The picture copied out to be described; None when it is not (a metafile CapDesk cannot draw is
    skipped by its name, or given its caption's words when it has one)."""
    assert doc.zip is not None
    try:
        data = doc.zip.read(entry)
        kind = vector_kind(data, entry)
        if kind:
            why = f"{'a' if kind[0] == 'W' else 'an'} {kind} picture, a drawing CapDesk cannot read"
            if spot is not None and spot.caption:
                apply_spot(doc, spot, row, Described(entry, error=why))
            if row.status != FillStatus.FILLED:
                row.status, row.needs_review = FillStatus.SKIPPED, True
                row.note = f"{why}: skipped; write its alt text by hand"
            return None
        return store.add(data, entry)
    except ZipRefused as exc:
        row.status, row.error = FillStatus.FAILED, str(exc)
    except OSError as exc:
        row.status, row.error = FillStatus.FAILED, f"cannot be copied out to be described ({exc.strerror or exc})"
    except MemoryError:
        row.status, row.error = FillStatus.FAILED, "too large to copy out to be described in the memory left"
    return None


def apply_spot(doc: Doc, spot: Spot, row: ImageRow, d: Described | None, write: str = "facts") -> None:
    text = take_description(row, d, write)
    if text is not None:
        place_spot(doc, spot, row, text)


def place_spot(doc: Doc, spot: Spot, row: ImageRow, text: str) -> None:
    """The edit that gives ``spot`` the alt text ``text``, kept in ``doc`` (the row says it)."""
    if spot.make is None:
        return
    english = row.said_as != "caption" and bool(row.said_as or row.wording)  # CapDesk's own words, not a person's
    make = spot.make_en if spot.make_en is not None and english else spot.make
    piece = make(text)
    if foreign(doc.row.lang) and english:
        row.lang = "en"
        doc.lang_note = language_note(doc.row.lang, 'lang="en"' if spot.make_en is not None else "")
    row.status, row.alt_text, row.after = FillStatus.FILLED, text, spot.after(piece)
    doc.edits.append((spot, piece, row))


def _changed_parts(doc: Doc, epub_metadata: bool) -> dict[str, bytes]:
    by_part: dict[str, list[tuple[int, int, bytes]]] = {}
    for spot, piece, _ in doc.edits:
        by_part.setdefault(spot.part, []).append((spot.at, spot.cut, piece.encode("utf-8")))
        by_part[spot.part] += [(at, cut, new.encode("utf-8")) for at, cut, new in spot.also]
    all_alt = bool(doc.rows) and all(r.status in (FillStatus.FILLED, FillStatus.KEPT) for r in doc.rows)
    if doc.epub is not None and all_alt:
        edit = metadata_edit(doc.epub) if epub_metadata else None
        doc.row.note = ALL_ALT + (FEATURE_ADDED if edit or doc.epub.has_feature and epub_metadata else
                                  "" if doc.epub.has_feature else FEATURE_HINT)
        if edit is not None:
            by_part.setdefault(doc.epub.opf.name, []).append((edit[0], edit[0], edit[1].encode("utf-8")))
            doc.parts.setdefault(doc.epub.opf.name, doc.epub.opf)
            doc.meta_piece = edit[1].strip()
    elif all_alt:
        doc.row.note = ALL_ALT
    out: dict[str, bytes] = {}
    for name, edits in by_part.items():
        raw = doc.parts[name].raw
        pieces, copied = [], 0
        for at, cut, new in sorted(edits):
            pieces += [raw[copied:at], new]
            copied = cut
        pieces.append(raw[copied:])
        out[name] = b"".join(pieces)
    return out


def tag_diff(doc: Doc) -> bytes:
    """The change as a unified diff of the changed tags only (a Word part is one line of 100 kB)."""
    out = []
    for spot, _piece, row in sorted(doc.edits, key=lambda e: (e[0].part, e[0].at)):
        name = f"{doc.path}/{spot.part}"
        out.append(f"--- {name}\n+++ {name}\n@@ -{spot.line} +{spot.line} @@\n-{spot.before}\n+{row.after}\n")
    if doc.meta_piece and doc.epub is not None:
        name = f"{doc.path}/{doc.epub.opf.name}"
        out.append(f"--- {name}\n+++ {name}\n@@ metadata @@\n+{doc.meta_piece}\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def write_document(doc: Doc, result: AltFillResult, dry_run: bool, backup_dir: Path | None,
                   before_write: Callable[[Path], None] | None, epub_metadata: bool) -> None:
    if doc.row.status == "failed" or doc.zip is None:
        return
    changed = _changed_parts(doc, epub_metadata)
    if doc.lang_note or doc.notes:
        doc.row.note = "; ".join(n for n in (doc.row.note, doc.lang_note, *doc.notes) if n)
    rows = [r for _, _, r in doc.edits]
    if not changed:
        return
    try:
        data = doc.zip.rebuild(changed)
        why = reads_back(doc, data)
    except ZipRefused as exc:
        why = str(exc)
    except MemoryError:  # this document's failure, never the end of the run
        _failed(doc, rows, "too large to change in the memory left")
        return
    if why:
        _failed(doc, rows, f"the change would not read back ({why})")
        return
    result.diffs[str(doc.path)] = tag_diff(doc)
    why = write_change(doc.row, rows, doc.path, doc.raw, doc.digest, data, dry_run, backup_dir, before_write)
    if why:
        _failed(doc, rows, why)


def reads_back(doc: Doc, data: bytes) -> str:
    """Why the document as it would be written (``data``) does not read back: a zip that would not be
    opened again, or a changed part no longer well-formed XML as read from it; "" when it reads back."""
    names = {spot.part for spot, _, _ in doc.edits}
    if doc.meta_piece and doc.epub is not None:
        names.add(doc.epub.opf.name)
    try:
        again = ZipDoc(data)
        for name in sorted(names):
            parse_part(name, again.read(name))
    except (ZipRefused, PartError) as exc:
        return str(exc)
    return ""


def plan_document(doc: Doc, include_empty: bool, store: PictureStore, result: AltFillResult,
                  files: dict) -> list[tuple]:
    """A scanned document's rows added to ``result``, its pictures to ``files``; the (spot, row, key) of
    each picture to fill."""
    wanted: list[tuple] = []
    for spot in doc.spots:
        row, entry = plan_spot(doc, spot, include_empty)
        result.images.append(row)
        file = picture_file(doc, entry, row, store, spot) if entry else None
        if file is not None:
            files.setdefault(str(file), file)
            wanted.append((spot, row, str(file)))
    return wanted


def kept_previews(doc: Doc, store: PictureStore) -> None:
    """Each picture left as it was (its alt text the author's, or marked decorative) given its small copy in
    its row too, so that the HTML report shows every picture beside its text, not only those described."""
    if doc.zip is None:
        return
    for spot, row in zip(doc.spots, doc.rows):
        if row.preview or row.status != FillStatus.KEPT or not spot.picture:
            continue
        try:
            data = doc.zip.read(spot.picture)
        except (ZipRefused, OSError, MemoryError):
            continue  # the report shows its text alone
        if not vector_kind(data, spot.picture):
            row.preview = thumbnail_url(store.add(data, spot.picture))


def _failed(doc: Doc, rows: list[ImageRow], why: str) -> None:
    doc.row.status, doc.row.error, doc.row.note = "failed", why, None
    for r in rows:
        r.status, r.error, r.after = FillStatus.FAILED, f"the document was not changed: {why}", ""
