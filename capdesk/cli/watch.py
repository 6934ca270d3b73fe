"""``capdesk watch``: new pictures in folders captioned as they appear, their sidecars written, each
caption printed (or spoken) (``capdesk.session.watch_run``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    describe_args,
    error,
    model_args,
    open_engine,
    open_writer,
    shown,
    sidecar_args,
    sidecar_options,
    speaker_or_say,
)
from capdesk.status import RowStatus

if TYPE_CHECKING:
    from capdesk.folders.batch import Row


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
    p = sub.add_parser("watch", help="caption new images as they appear in folders",
                       description="Watch folders; caption each new or changed image once it is completely "
                                   "written, write its sidecars and print (or speak) the caption. Ctrl-C stops.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="folders to watch")
    p.add_argument("--recursive", "-r", action=argparse.BooleanOptionalAction, default=True,
                   help="watch sub-folders too (default: yes)")
    sidecar_args(p)
    p.add_argument("--speak", action="store_true", help="speak each caption aloud")
    model_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object per captioned image")
    describe_args(p)
    p.set_defaults(run=cmd_watch)


def cmd_watch(ns: argparse.Namespace) -> int:
    from capdesk.session.watch_run import WatchRun

    opts = sidecar_options(ns)
    if opts is None:
        return EXIT_USAGE
    missing = [p for p in ns.paths if not Path(p).is_dir()]
    if missing:
        error(f"{missing[0]}: not a folder")
        return EXIT_USAGE
    engine = open_engine(ns)
    writer = open_writer(opts) if engine is not None else None
    if writer is None:
        return EXIT_USAGE
    speaker = speaker_or_say("warning")[0] if ns.speak else None
    show = _show_json if ns.json else _show_line
    watch = WatchRun([Path(p) for p in ns.paths], engine, writer, ns.recursive, show, _say_waiting, speaker)
    # The readiness line: from here on a new image is seen (tests and service scripts wait for it).
    reader_gone = watch.run(lambda: print(f"capdesk: watching {shown(', '.join(ns.paths))} with model {engine.name} "
                                          "(Ctrl-C stops)", file=sys.stderr, flush=True))
    print("capdesk: stopped watching", file=sys.stderr, flush=True)
    if reader_gone:
        raise BrokenPipeError  # nobody reads the captions: main() ends quietly (141), as for every command
    return EXIT_OK


def _show_json(row: Row) -> None:
    from dataclasses import asdict

    print(json.dumps(asdict(row), ensure_ascii=False), flush=True)


def _show_line(row: Row) -> None:
    if row.status == RowStatus.FAILED:
        print(f"{shown(row.path)}\tERROR: {shown(row.error)}", flush=True)
    elif row.status == RowStatus.CAPTIONED:
        print(f"{shown(row.path)}\t{shown(row.alt_text)}", flush=True)
        if row.needs_review:
            print(f"capdesk: {shown(row.path)}: needs review: {shown(row.reason)}", file=sys.stderr, flush=True)
    if row.note:
        print(f"capdesk: {shown(row.path)}: {shown(row.note)}", file=sys.stderr, flush=True)


def _say_waiting(path: Path, reason: str, give_up: float) -> None:
    print(f"capdesk: {shown(path)}: waiting until it is completely written and readable ({reason}); "
          f"after {give_up:.0f} s without a change it is reported as it is", file=sys.stderr, flush=True)
