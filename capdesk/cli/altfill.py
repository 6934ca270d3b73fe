"""``capdesk alt-fill``: alt text written into the image references of HTML and Markdown pages, and
into the pictures of EPUB, Word, PowerPoint and OpenDocument files."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from capdesk.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    describe_args,
    error,
    model_args,
    open_engine,
    progress_bar,
)

if TYPE_CHECKING:
    from capdesk.altfill.fill import AltFillResult

STOPPING = ("capdesk: stopping after the current pictures; what is described so far is written "
            "(Ctrl-C again to stop at once)")


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
    p = sub.add_parser(
        "alt-fill", help="write alt text into the images of HTML and Markdown pages and of documents",
        description="Give each <img> without an alt attribute, and each Markdown image with empty brackets, "
                    "the description of the local picture it shows. Nothing else in a page changes; alt=\"\" "
                    "(decorative), existing alt text, remote images and images in comments, scripts and code "
                    "are left alone, and so are pictures outside the folders given (--allow-root adds one). "
                    "Each changed page's original is kept in CapDesk's backup folder, private to you, until "
                    "removed with --prune-backups DAYS. A second run changes nothing. EPUB, DOCX, PPTX, ODT, "
                    "ODP, XLSX and ODS files get alt text for their own pictures the same way: only the alt text "
                    "changes, every other part of the file stays byte for byte as it was. A tagged PDF's Figures "
                    "without /Alt get it in an update appended to the file (its original bytes stay as they "
                    "were); an untagged PDF is left as it is, its pictures listed for review with texts to paste "
                    "into its source.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help=".html, .htm, .md, .markdown, .epub, .docx, .pptx, .odt, .odp, .xlsx, .ods or .pdf files, "
                        "or folders")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    p.add_argument("--dry-run", action="store_true", help="print a unified diff of each page and change nothing")
    p.add_argument("--include-empty", action="store_true",
                   help='also fill alt="" (and role="presentation", aria-hidden="true"), which mark a picture '
                        "as decorative")
    p.add_argument("--epub-metadata", action="store_true",
                   help="when every picture of an EPUB has alt text afterwards, say so in its package document "
                        "(schema:accessibilityFeature alternativeText); nothing else is added (with --review-in "
                        "too, once the reviewed texts are written)")
    _review_args(p)
    p.add_argument("--report", metavar="FILE", help="write a report: FILE.json or FILE.html")
    p.add_argument("--allow-root", action="append", default=[], metavar="DIR",
                   help="also describe pictures in DIR (by default only pictures inside the folders given, and "
                        "the folders of the pages given, are; one outside them is listed as skipped)")
    p.add_argument("--prune-backups", type=_days, metavar="DAYS", default=None,
                   help="remove the backups of runs older than DAYS days (they are kept until removed), "
                        "then fill the PATHs given, if any")
    model_args(p, threshold=True)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    describe_args(p)
    p.set_defaults(run=cmd_alt_fill)


def _review_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-signed", action="store_true",
                   help="also update a signed PDF (else named and left), after its signature: that still covers the "
                        "document as signed, not the alt text; one certified against any change is left even so "
                        "(with --review-in too: the reviewed texts are written after the signature)")
    p.add_argument("--write", choices=("facts", "probably", "all"), default="facts",
                   help="which texts are written: facts (the default: what is said as fact, and figure captions, "
                        "the author's words), probably (also captions said as \"Probably ...\" and a picture's kind "
                        "said alone, \"A drawing.\"), all (also \"May contain: ...\"); the rest are left untouched "
                        "and listed for review")
    p.add_argument("--review-out", metavar="FILE.csv",
                   help="write every picture found to FILE.csv, one row each (write, text, picture, context, "
                        "picture_name, said_as, reason, document, ...), to be edited in a spreadsheet and read back "
                        "by column name; applying it never rewrites it")
    p.add_argument("--review-in", metavar="FILE.csv",
                   help="write the text of every row marked write=yes in a review file into its page or document "
                        "(no describing; a file changed since the review is left as it is and named)")


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not 0 <= days <= 100_000:  # NaN is in no range
        raise argparse.ArgumentTypeError(f"expected a number of days from 0, got {value!r}")
    return days


def _prune(days: float) -> int:
    from capdesk.altfill.backups import backups_root, prune

    done = prune(days)
    for problem in done.problems:
        error(one_line(problem))
    print(f"capdesk: {done.message(days)} in {backups_root()}", file=sys.stderr)
    return EXIT_SOME_FAILED if done.problems else EXIT_OK


# What a terminal acts on: C0 and C1 controls and DEL, and the name bytes 0x80-0x9F (kept by Python
# as lone surrogates), which an 8-bit terminal reads as C1 controls. Other bytes of a name that is
# not UTF-8 are printed as they are, as ls prints them.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udc9f]")


def one_line(text: object) -> str:
    """Text from a page or a picture, safe to print: no ESC or other control character, one line."""
    return _TERMINAL_CONTROLS.sub("", re.sub("[\t\n\r]", " ", str(text)))


def cmd_alt_fill(ns: argparse.Namespace) -> int:
    from capdesk.session.altfill_run import AltFillOptions, fill_alt_text

    if not _usable(ns):
        return EXIT_USAGE
    status = EXIT_OK
    if ns.prune_backups is not None:
        status = _prune(ns.prune_backups)
        if not ns.paths:
            return status
    if ns.review_in:
        return _apply_review(ns, status)
    engine = open_engine(ns)
    if engine is None:
        return EXIT_USAGE
    options = AltFillOptions(tuple(ns.paths), recursive=ns.recursive, include_empty=ns.include_empty,
                             dry_run=ns.dry_run, allow_roots=tuple(ns.allow_root), epub_metadata=ns.epub_metadata,
                             write=ns.write, previews=bool(ns.report) and not ns.report.lower().endswith(".json"),
                             allow_signed=ns.allow_signed)
    progress = _Progress(ns.quiet)
    result, backups = fill_alt_text(options, engine, progress, lambda: print(STOPPING, file=sys.stderr))
    progress.close()
    if ns.review_out:
        from capdesk.altfill.review import write_review

        write_review(result, Path(ns.review_out))
    return _finish(ns, result, backups, status)


def _apply_review(ns: argparse.Namespace, status: int) -> int:
    from capdesk.altfill.review import ReviewError
    from capdesk.session.altfill_run import apply_reviewed

    try:
        result, backups = apply_reviewed(Path(ns.review_in), ns.dry_run, epub_metadata=ns.epub_metadata,
                                         allow_signed=ns.allow_signed)
    except ReviewError as exc:
        error(one_line(exc))
        return EXIT_USAGE
    return _finish(ns, result, backups, status)


def _finish(ns: argparse.Namespace, result: AltFillResult, backups: Path | None, status: int) -> int:
    """The run said: diffs (dry run), each picture, the report, the summary; the exit status."""
    from capdesk.altfill.report import write_report

    if ns.dry_run:
        _write_diffs(result)
    _say_rows(result, ns.dry_run)
    if ns.report:
        write_report(result, Path(ns.report))
    _say_summary(result, backups, ns.dry_run)
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_SOME_FAILED if result.failed or status != EXIT_OK else EXIT_OK


def _usable(ns: argparse.Namespace) -> bool:
    """Whether the options can be used together; False once why not is said."""
    from capdesk.altfill.report import REPORT_SUFFIXES

    if ns.report and Path(ns.report).suffix.lower() not in REPORT_SUFFIXES:
        error("--report must end in .json or .html")
        return False
    if not ns.paths and ns.prune_backups is None and not ns.review_in:
        error("alt-fill needs at least one PATH (or --prune-backups DAYS, or --review-in FILE.csv)")
        return False
    if ns.review_in and (ns.paths or ns.review_out):
        error("--review-in writes what a review file says: it takes no PATH and no --review-out")
        return False
    for root in ns.allow_root:
        if not Path(root).is_dir():
            error(f"--allow-root {one_line(root)}: no such folder")
            return False
    return True


class _Progress:
    """The progress bar, drawn from the first picture described: a run with nothing to describe shows none."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar = None

    def __call__(self, done: int, total: int, name: str) -> None:
        if self.quiet:
            return
        if self.bar is None:
            self.bar = progress_bar(total)
        self.bar.total = total
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _write_diffs(result: AltFillResult) -> None:
    sys.stdout.flush()
    for diff in result.diffs.values():  # each page's own bytes: what patch needs
        sys.stdout.buffer.write(diff)
    sys.stdout.buffer.flush()


def _say_rows(result: AltFillResult, dry_run: bool) -> None:
    """Each picture filled on stdout (page, address, alt text); problems and skips on stderr. A page's
    addresses and a file's name are anyone's text: printed without their control characters."""
    from capdesk.altfill.fill import FillStatus

    for p in result.pages:
        if p.error:
            print(f"capdesk: {one_line(p.page)}: {one_line(p.error)}", file=sys.stderr)
        elif p.note:
            print(f"capdesk: {one_line(p.page)}: {one_line(p.note)}", file=sys.stderr)
    for r in result.images:
        where = f"{one_line(r.page)}: {one_line(r.location)}" if r.location else f"{one_line(r.page)}:{r.line}"
        # The address as a person reads it: Markdown's <my cat é.png> comes back percent-encoded.
        shown = one_line(unquote(r.src, errors="surrogateescape")) if r.src else ""
        if r.status == FillStatus.FILLED and not dry_run and r.written:
            print(f"{where}\t{shown}\t{one_line(r.alt_text)}", flush=True)
        held = f"{r.note}; proposed: {r.proposed}" if r.status == FillStatus.REVIEW else None
        # A row that needs review says why, or only what it says otherwise (a skipped PDF Figure has a note).
        said = r.reason or r.note
        why = r.error or held or (f"needs review: {said}" if r.needs_review and said else None) or \
            (r.note if r.status == FillStatus.SKIPPED or r.said_as == "caption" else None)
        if why:
            print(f"capdesk: {where}: {shown + ': ' if shown else ''}{one_line(why)}", file=sys.stderr)


def _say_summary(result: AltFillResult, backups: Path | None, dry_run: bool) -> None:
    changed = [p for p in result.pages if p.status == "changed"]
    if changed:
        kinds = {p.kind == "page" for p in changed}
        word = "pages and documents" if len(kinds) > 1 else "page(s)" if True in kinds else "document(s)"
        print(f"capdesk: the originals of the {len(changed)} changed {word} are in {backups}", file=sys.stderr)
    if dry_run:  # what would be written, before the counts (whose "filled" a dry run only plans)
        from capdesk.altfill.dry_run import would_write

        print(f"capdesk: {would_write(result)}", file=sys.stderr)
    print(f"capdesk: {result.summary()} in {result.seconds:.1f} s" + (" (interrupted)" if result.interrupted else "")
          + (" (dry run: nothing written)" if dry_run else ""), file=sys.stderr)
