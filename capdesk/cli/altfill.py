"""``capdesk alt-fill``: alt text written into the image references of HTML and Markdown pages."""

from __future__ import annotations

import argparse
import sys

from capdesk.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    describe_args,
    error,
    model_args,
    open_engine,
)


def add_parser(sub) -> None:
    """Register the command with the main parser's subcommands."""
    p = sub.add_parser(
        "alt-fill", help="write alt text into the images of HTML and Markdown pages",
        description="Give each <img> without an alt attribute, and each Markdown image with empty brackets, "
                    "the description of the local picture it shows. Nothing else in a page changes; alt=\"\" "
                    "(decorative), existing alt text, remote images and images in comments, scripts and code "
                    "are left alone. Each changed page's original is kept in CapDesk's backup folder. "
                    "A second run changes nothing.")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".html, .htm, .md or .markdown files, or folders")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    p.add_argument("--dry-run", action="store_true", help="print a unified diff of each page and change nothing")
    p.add_argument("--include-empty", action="store_true",
                   help='also fill alt="" (and role="presentation", aria-hidden="true"), which mark a picture '
                        "as decorative")
    p.add_argument("--report", metavar="FILE", help="write a report: FILE.json or FILE.html")
    model_args(p, threshold=True)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    describe_args(p)


def cmd_alt_fill(ns: argparse.Namespace) -> int:
    import signal
    import threading
    from pathlib import Path

    from capdesk.altfill.fill import FillStatus, default_backup_dir, run_alt_fill
    from capdesk.altfill.report import REPORT_SUFFIXES, write_report

    if ns.report and Path(ns.report).suffix.lower() not in REPORT_SUFFIXES:
        error("--report must end in .json or .html")
        return EXIT_USAGE
    engine = open_engine(ns)
    if engine is None:
        return EXIT_USAGE
    bar = None
    if not ns.quiet:
        from tqdm import tqdm

        bar = tqdm(unit="img", desc="alt text", file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int, name: str) -> None:
        if bar is not None:
            bar.total = total
            bar.update(1)

    cancel = threading.Event()

    def on_sigint(signum, frame) -> None:
        if cancel.is_set():  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        cancel.set()
        print("capdesk: stopping after the current pictures; what is described so far is written "
              "(Ctrl-C again to stop at once)", file=sys.stderr)

    backups = None if ns.dry_run else default_backup_dir()
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        result = run_alt_fill(ns.paths, engine, recursive=ns.recursive, include_empty=ns.include_empty,
                              dry_run=ns.dry_run, backup_dir=backups, beam=ns.beam, progress=progress,
                              cancelled=cancel.is_set)
    finally:
        signal.signal(signal.SIGINT, previous)
    if bar is not None:
        bar.close()
    if ns.dry_run:
        sys.stdout.flush()
        for diff in result.diffs.values():  # each page's own bytes: what patch needs
            sys.stdout.buffer.write(diff)
        sys.stdout.buffer.flush()
    for p in result.pages:
        if p.error:
            print(f"capdesk: {p.page}: {p.error}", file=sys.stderr)
    for r in result.images:
        where = f"{r.page}:{r.line}"
        if r.status == FillStatus.FILLED and not ns.dry_run and r.written:
            print(f"{where}\t{r.src}\t{r.alt_text}", flush=True)
        why = r.error or (f"needs review: {r.reason}" if r.needs_review else None) or \
            (r.note if r.status == FillStatus.SKIPPED else None)
        if why:
            print(f"capdesk: {where}: {r.src}: {why}", file=sys.stderr)
    if ns.report:
        write_report(result, Path(ns.report))
    changed = [p for p in result.pages if p.status == "changed"]
    if changed:
        print(f"capdesk: the originals of the {len(changed)} changed page(s) are in {backups}", file=sys.stderr)
    print(f"capdesk: {result.summary()} in {result.seconds:.1f} s" + (" (interrupted)" if result.interrupted else "")
          + (" (dry run: nothing written)" if ns.dry_run else ""), file=sys.stderr)
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_SOME_FAILED if result.failed else EXIT_OK
