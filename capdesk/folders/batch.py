"""Alt text for whole folders: caption in batches, write sidecars, report, resume.

One runner serves the CLI (``capdesk batch``) and the GUI's export dialog: progress and
cancellation come in through callbacks, nothing here prints or knows about Qt.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

from capdesk.describe import ocr
from capdesk.describe.describer import Described, Describer
from capdesk.folders.reading import describe_paths, expand_paths
from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD
from capdesk.safe_files import cannot_write_in
from capdesk.sidecars.formats import read_back
from capdesk.sidecars.ledger import recorded_review
from capdesk.sidecars.writer import SidecarWriter, WriteOutcome, atomic_write
from capdesk.status import RowStatus, WriteStatus


@dataclass
class Row:
    """One picture's line in a batch report: its description (a ``Described``) and what was written."""

    path: str
    status: RowStatus  # captioned | skipped (sidecar current) | kept (a person's sidecar) | failed
    alt_text: str = ""
    confidence: float | None = None
    needs_review: bool = False
    model: str = ""
    sidecars: list[str] = field(default_factory=list)
    error: str | None = None
    in_domain: bool | None = None
    reason: str | None = None  # why the alt text needs review (never part of the alt text)
    note: str | None = None  # what was done differently from what was asked (e.g. photo.jpg.txt naming)


@dataclass
class BatchResult:
    rows: list[Row]
    interrupted: bool = False
    seconds: float = 0.0
    total: int = 0  # the pictures found; a cancelled run has rows for fewer

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.status == RowStatus.FAILED]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[str(r.status)] = out.get(str(r.status), 0) + 1
        return out

    def tally(self) -> dict[str, int]:
        """What a person needs to know of the outcome: alt texts written, and of those how many are empty
        and how many need review; the pictures skipped (and of those, needing review), kept, failed;
        how many were found (``listed``) and how many were done."""
        t = dict.fromkeys(TALLY_KEYS, 0)
        for r in self.rows:
            if r.status == RowStatus.CAPTIONED:
                t["written"] += 1
                t["empty"] += not r.alt_text.strip()
                t["review"] += bool(r.needs_review)
            elif r.status == RowStatus.SKIPPED:
                t["skipped"] += 1
                t["skipped_review"] += bool(r.needs_review)
            elif r.status == RowStatus.KEPT:
                t["kept"] += 1
            else:
                t["failed"] += 1
        t["done"] = len(self.rows)
        t["listed"] = max(self.total, len(self.rows))
        return t

    def summary(self) -> str:
        """'2 captioned (1 empty, both need review), 1 failed' (or 'no images'), as the report says it;
        an interrupted run says how far it got."""
        return self.counts_words() + self.stopped_note()

    def counts_words(self) -> str:
        """What was done, in the report's words: each status, and of the alt texts written (or found up
        to date) how many are empty and how many need review."""
        t = self.tally()
        parts = []
        if t["written"]:
            parts.append(f"{t['written']} captioned{of_them(t['written'], t['empty'], t['review'])}")
        if t["skipped"]:
            parts.append(f"{t['skipped']} skipped{of_them(t['skipped'], 0, t['skipped_review'])}")
        parts += [f"{t[k]} {k}" for k in ("kept", "failed") if t[k]]
        return ", ".join(parts) or "no images"

    def stopped_note(self) -> str:
        """' (interrupted after 3 of 10 pictures)' for a run stopped before the end, else ''."""
        if not self.interrupted:
            return ""
        t = self.tally()
        return f" (interrupted after {t['done']} of {t['listed']} pictures)"


TALLY_KEYS = ("written", "empty", "review", "skipped", "skipped_review", "kept", "failed", "done", "listed")


def of_them(n: int, empty: int, review: int) -> str:
    """' (1 empty, both need review)' about ``n`` alt texts, or '' when none is empty or needs review."""
    def part(k: int, one: str, many: str) -> str:
        if k == n:
            return one if n == 1 else ("both " if n == 2 else "all ") + many
        return f"{k} {one if k == 1 else many}"

    said = [part(k, one, many) for k, one, many in ((empty, "empty", "empty"), (review, "needs review",
                                                                                   "need review")) if k]
    return f" ({', '.join(said)})" if said else ""


def counts_summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no images"


ProgressFn = Callable[[int, int, Row], None]
# Told once per folder where no sidecar can be written (folder, why, the error its pictures' rows carry).
BlockedFn = Callable[[Path, str, str], None]
# Describes the pictures it is given, yielding one ``Described`` per path in the same order; a
# generator is closed when the batch is cancelled, so it can stop its work (and its Ray job).
DescribeStream = Callable[[list[str]], Iterator[Described]]


# Chunks a folder describes at once (``describe_paths``'s ``overlap``): two keep both cores of a small machine
# busy, where more only hold more pictures in memory (bench/bench_user_speed.py measures it); on 16 cores
# (`capdesk batch --ocr never` of 200 photos, medians of 3) 1, 2, 4 and 8 at once gave 17.7, 25.4, 32.2 and
# 33.6 pictures/s: past four the threads wait on Python's lock. So as many as the cores, from two to four.
def chunks_at_once(cores: int | None) -> int:
    """How many chunks a folder describes at once on a machine of ``cores`` cores (None: unknown)."""
    return min(4, max(2, cores or 2))


OVERLAP = chunks_at_once(os.cpu_count())


def local_stream(describer: Describer, batch_size: int = 8, overlap: int = OVERLAP) -> DescribeStream:
    """Describing on this machine: chunks of ``batch_size`` pictures, decoded ahead while the model runs,
    ``overlap`` chunks described at once (and text read on one thread, beside the other chunks' work)."""
    ocr.use_threads(1)

    def stream(paths: list[str]) -> Iterator[Described]:
        return describe_paths(describer, paths, batch_size=batch_size, overlap=overlap)
    return stream


def run_batch(
    paths: Iterable[str | os.PathLike[str]],
    describer: Describer,
    writer: SidecarWriter,
    recursive: bool = False,
    threshold: float | None = None,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    batch_size: int = 8,
    describe: DescribeStream | None = None,
    writers: int = 1,
    on_blocked: BlockedFn | None = None,
) -> BatchResult:
    """Caption every image under ``paths`` whose sidecars are missing or stale; write them, as
    ``describer`` describes (the beam and the options it was built with).

    A new description is flagged for review by the describer's own rule (its options'
    ``low_confidence``); ``threshold`` (default: that same value) flags the skipped pictures whose
    sidecars CapDesk wrote earlier, from the confidence the ledger kept.

    ``describe`` says where the pictures are described (default: here, ``local_stream``; ``capdesk
    batch --ray``: on a Ray cluster). Listing, the skip check, writing and the report are always
    done here, through this one ledger, so every way of describing keeps the same rules. ``writers``
    threads write the sidecars while the next pictures are described (rows still come out in
    order): writing is mostly waiting for the disk, and on a network file system that wait is what
    limits a big batch.

    A folder where no sidecar can be made (read-only, no permission) is found before anything is
    described: its pictures fail at once with one reason, told once through ``on_blocked``."""
    if threshold is None:
        threshold = describer.options.low_confidence
    t0 = time.monotonic()
    listed = list(expand_paths(paths, recursive))
    total = len(listed)
    rows: list[Row] = []
    todo: list[str] = []
    done = 0

    def emit(row: Row) -> None:
        nonlocal done
        rows.append(row)
        done += 1
        if progress:
            progress(done, total, row)

    for p, err in listed:
        if err:
            emit(Row(p, RowStatus.FAILED, error=err))
        elif writer.is_current(Path(p)):
            emit(_skipped(p, writer, threshold))
        else:
            todo.append(p)
    todo = _drop_blocked(todo, writer, emit, on_blocked)
    interrupted = cancelled()
    if todo and not interrupted:
        stream = (describe or local_stream(describer, batch_size))(todo)
        try:
            interrupted = _write_all(stream, writer, emit, cancelled, writers)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
    return BatchResult(rows, interrupted, time.monotonic() - t0, total)


def _drop_blocked(todo: list[str], writer: SidecarWriter, emit: Callable[[Row], None],
                  on_blocked: BlockedFn | None) -> list[str]:
    """The pictures whose sidecar folders can be written; the others are emitted as failed."""
    verdict: dict[Path, str | None] = {}
    keep = []
    for p in todo:
        try:
            folders = sorted({s.parent for s in writer.paths(Path(p)).values()})
        except (OSError, ValueError):
            keep.append(p)  # the write will say what is wrong
            continue
        blocked = None
        for folder in folders:
            if folder not in verdict:
                why = cannot_write_in(folder)
                verdict[folder] = None if why is None else f"sidecars cannot be written in {folder} ({why})"
                if why is not None and on_blocked is not None:
                    on_blocked(folder, why, verdict[folder])
            blocked = blocked or verdict[folder]
        if blocked:
            emit(Row(p, RowStatus.FAILED, error=blocked))
        else:
            keep.append(p)
    return keep


def _write_all(stream: Iterable[Described], writer: SidecarWriter, emit: Callable[[Row], None],
               cancelled: Callable[[], bool], writers: int) -> bool:
    """Write each description's sidecars, emitting rows in order; True when cancelled. Cancellation
    is checked between images, so an image's sidecars are written whole or not at all (writes
    already begun are finished and reported)."""
    if writers <= 1:
        for res in stream:
            if cancelled():
                return True
            emit(write_described(res, writer))
        return False
    interrupted = False
    with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="capdesk-write") as pool:
        pending: deque[Future[Row]] = deque()
        for res in stream:
            if cancelled():
                interrupted = True
                break
            pending.append(pool.submit(write_described, res, writer))
            # Bounded: a fast describer never piles up more than a few writes' worth of pictures.
            while pending and (len(pending) >= 2 * writers or pending[0].done()):
                emit(pending.popleft().result())
        while pending:
            emit(pending.popleft().result())
    return interrupted


def _skipped(path: str, writer: SidecarWriter, threshold: float) -> Row:
    """A picture whose sidecars are current: its row carries the alt text they hold."""
    image = Path(path)
    sidecars = [p for p in writer.paths(image).values() if p.exists()]
    alt, rec = "", None
    for p in sidecars:
        try:
            text = read_back(p) or ""
        except (OSError, UnicodeDecodeError):
            continue
        alt, rec = " ".join(text.split()), writer.ledger.get(p)
        break
    row = Row(path, RowStatus.SKIPPED, alt, sidecars=[str(p) for p in sidecars])
    if rec is None or rec.get("source") != "machine" or rec.get("alt_text") != alt:
        return row  # a person's alt text (or one edited since): nothing to flag
    row.model, conf = rec.get("model") or "", rec.get("confidence")
    row.confidence = None if conf is None else round(float(conf), 4)
    # The flag kept when it was written decides, as it did then; a threshold the person chose still
    # holds over it (as in the describer's rule), and alone decides for a record from before the flag.
    reason = recorded_review(rec)
    chosen = rec.get("review") is None or threshold != DEFAULT_CONFIDENCE_THRESHOLD
    if reason is None and chosen and conf is not None and conf < threshold:
        reason = f"the model was unsure (confidence {conf:.2f})"
    row.needs_review, row.reason = reason is not None, reason
    return row


def write_described(res: Described, writer: SidecarWriter) -> Row:
    """Write one description's sidecars: the step shared by batch, ``capdesk watch`` and the GUI's
    watched folders. Whether it needs review, and why, is the describer's decision."""
    if not res.ok:
        return Row(res.path, RowStatus.FAILED, model=res.model, error=res.error)
    conf = res.confidence
    reason = res.reason if res.review else None
    if res.review and reason is None:
        reason = "the model gave no caption"
    outcomes = writer.write(Path(res.path), res.alt_text(), review=bool(res.review), reason=reason)
    done = (WriteStatus.WRITTEN, WriteStatus.UNCHANGED)
    row = Row(res.path, RowStatus.CAPTIONED, res.description, round(conf, 4) if conf is not None else None,
              res.review, res.model, [str(o.path) for o in outcomes if o.action in done],
              in_domain=res.in_domain, reason=reason)
    row.note = "; ".join(o.note for o in outcomes if o.note) or None
    failed = [o for o in outcomes if o.action == WriteStatus.FAILED]
    kept = [o for o in outcomes if o.action == WriteStatus.KEPT]
    if failed:
        row.status, row.error = RowStatus.FAILED, "; ".join(f"{o.path.name}: {o.reason}" for o in failed)
    elif kept and not row.sidecars:
        row.status, row.error = RowStatus.KEPT, "; ".join(f"{o.path.name}: {o.reason}" for o in kept)
    elif kept:
        differ = _differing(kept, res.description)
        if differ:
            written = " and ".join(Path(p).name for p in row.sidecars)
            names = " and ".join(o.path.name for o in differ)
            said = (f"{names} holds other words (edited by hand, or not written by CapDesk) and is kept; "
                    f"{written} now {'hold' if len(row.sidecars) > 1 else 'holds'} the new description, so they "
                    f"differ: check {names}, or use --overwrite to replace it")
            row.note = f"{row.note}; {said}" if row.note else said
    return row


def _differing(kept: list[WriteOutcome], description: str) -> list[WriteOutcome]:
    """The kept sidecars whose alt text is not ``description`` (what a person would see disagree)."""
    want = " ".join(description.split())
    out = []
    for o in kept:
        try:
            text = read_back(o.path)
        except (OSError, UnicodeDecodeError, ValueError):
            text = None
        if text is None or " ".join(text.split()) != want:
            out.append(o)
    return out


# -- reports -----------------------------------------------------------------------------------
REPORT_FIELDS = ("path", "status", "alt_text", "confidence", "needs_review", "model", "sidecars", "error",
                 "in_domain", "reason", "note")


def _json_safe(text: str) -> str:
    """JSON text with file-name bytes that are not UTF-8 (lone surrogates) as \\udcXX escapes:
    valid UTF-8 JSON, and json.loads gives back the exact name os.fsencode turns into the bytes."""
    return re.sub("[\udc80-\udcff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def json_report_bytes(obj: dict) -> bytes:
    """A report as indented JSON, names that are not UTF-8 kept as escapes (see ``_json_safe``)."""
    return _json_safe(json.dumps(obj, indent=2, ensure_ascii=False)).encode("utf-8")


def html_report_bytes(page: str) -> bytes:
    """Links keep a name's real bytes (percent-encoded); the text shows what cannot be decoded as U+FFFD."""
    return page.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode()


def report_link(p: str, base: Path) -> str:
    """A picture's address in a report kept in ``base``: relative where it can be, its bytes quoted."""
    try:
        rel = os.path.relpath(p, base)
    except ValueError:
        rel = p
    return html.escape(quote(os.fsencode(Path(rel).as_posix())), quote=True)


def write_report(result: BatchResult, path: Path) -> None:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=REPORT_FIELDS)
        w.writeheader()
        for r in result.rows:
            d = asdict(r)
            d["sidecars"] = " ".join(d["sidecars"])
            w.writerow(d)
        # A file name that is not UTF-8 is written as its own bytes, as ls would show it.
        raw = buf.getvalue().encode("utf-8", "surrogateescape")
    elif suffix == ".json":
        raw = json_report_bytes({"counts": result.counts(), "interrupted": result.interrupted,
                                 "seconds": round(result.seconds, 2), "rows": [asdict(r) for r in result.rows],
                                 "tally": result.tally(), "summary": result.summary()})
    elif suffix in (".html", ".htm"):
        raw = html_report_bytes(_html(result, path.parent))
    else:
        raise ValueError(f"{path}: report must end in .csv, .json or .html")
    atomic_write(path, raw)


def _html(result: BatchResult, base: Path) -> str:
    counts = result.summary()
    items = []
    for r in result.rows:
        note = ""
        if r.error:
            note = f'<p class="error">Problem: {html.escape(r.error)}</p>'
        elif r.needs_review:
            note = f'<p class="review">Needs review: {html.escape(r.reason or "check the alt text")}.</p>'
        alt = html.escape(r.alt_text or "", quote=True)
        link = report_link(r.path, base)
        img = f'<img src="{link}" alt="{alt}" loading="lazy">' if r.status != RowStatus.FAILED else ""
        items.append(
            f'<li class="{r.status}{" review" if r.needs_review else ""}"><figure>{img}'
            f"<figcaption><strong>{html.escape(Path(r.path).name)}</strong>"
            f"<p>{html.escape(r.alt_text) if r.alt_text else '(no alt text)'}</p>{note}"
            f"<p class='meta'>{html.escape(r.status)}"
            # An empty alt text says no caption: a confidence beside it would be the unsaid caption's.
            f"{f', confidence {r.confidence:.2f}' if r.confidence is not None and r.alt_text else ''}"
            "</p></figcaption></figure></li>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Alt text review</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 1rem/1.5 system-ui, sans-serif; margin: 1rem 2rem; }}
ul {{ list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr));
     gap: 1rem; }}
li {{ border: 2px solid #888; border-radius: .4rem; padding: .5rem; }}
li.review {{ border-color: #b36b00; }} li.failed {{ border-color: #b00020; }}
img {{ max-width: 100%; height: auto; display: block; }}
.error {{ color: #b00020; }} .review {{ color: #8a4f00; }} .meta {{ color: #555; font-size: .9rem; }}
</style></head><body>
<h1>Alt text review</h1>
<p>{html.escape(counts)}.
Alt text is machine-generated unless marked otherwise; check the entries marked for review.</p>
<ul>
{chr(10).join(items)}
</ul></body></html>
"""
