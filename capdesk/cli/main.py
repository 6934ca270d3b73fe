"""``capdesk``: one entry point, one subcommand per job.

Each command's module adds its parser (``register``) and names the function that runs it
(``set_defaults(run=...)``); ``COMMANDS`` lists those ``register`` functions in the order ``--help``
shows them. ``capdesk gui`` is registered here: the window is reached only from this module.

Exit status: 0 when everything succeeded, 1 when some file (or bundle) failed, 2 on
usage errors (bad options, unknown model or provider), 141 when the reader of the output went
away (``capdesk models list | head -1``), as for any program stopped by SIGPIPE.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from collections.abc import Sequence

from capdesk import __version__
from capdesk.cli import altfill, caption, folders, models, screen, service, train, watch
from capdesk.cli.common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, UsageParser, error
from capdesk.cli.train import TRAIN_COMMANDS
from capdesk.training_hint import training_missing

__all__ = ["EXIT_OK", "EXIT_SOME_FAILED", "EXIT_USAGE", "TRAIN_COMMANDS", "build_parser", "main",
           "training_missing"]

EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE: what a shell reports for `yes | head -1`'s yes


def register_gui(sub) -> None:
    """Add ``capdesk gui`` to the main parser's subcommands."""
    p = sub.add_parser("gui", help="open the desktop application",
                       description="Open the desktop application, at PATH (a folder or an image) if given.")
    p.add_argument("path", nargs="?", help="folder or image to open; the selected image is captioned at once")
    p.set_defaults(run=cmd_gui)


def cmd_gui(ns: argparse.Namespace) -> int:
    if ns.path and not os.path.exists(ns.path):
        error(f"{ns.path}: no such file or folder")
        return EXIT_USAGE
    from capdesk.gui.app import run

    return run(ns.path)


COMMANDS = (caption.register, folders.register, watch.register, altfill.register, screen.register,
            service.register, register_gui, models.register, train.register)

# Commands whose own parser reads the rest of the line as it is, before this parser sees it.
WHOLE_LINE = {train.NAME: train.cmd_train}


def build_parser() -> argparse.ArgumentParser:
    ap = UsageParser(prog="capdesk", description="Describe images offline: captions, speech and alt text.")
    ap.add_argument("--version", action="version", version=f"capdesk {__version__}")
    # ``capdesk service`` reads its clients' command lines with this same parser.
    ap.set_defaults(run=None, build_parser=build_parser)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=UsageParser)
    for register in COMMANDS:
        register(sub)
    return ap


def _name_bytes(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encoding errors on output: a file name's bytes that are not UTF-8 (lone surrogates, as Python
    decodes them) go out as those bytes, as ls shows them; any other character the terminal's
    encoding lacks as an escape, never an error."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    chunk = exc.object[exc.start:exc.end]
    if all("\udc80" <= ch <= "\udcff" for ch in chunk):
        return bytes(ord(ch) - 0xDC00 for ch in chunk), exc.end
    return codecs.backslashreplace_errors(exc)


codecs.register_error("capdesk-names", _name_bytes)


def _printing_safely(stream) -> None:
    if hasattr(stream, "reconfigure") and stream.errors in ("strict", "backslashreplace", "surrogateescape"):
        stream.reconfigure(errors="capdesk-names")


def main(argv: Sequence[str] | None = None) -> int:
    _printing_safely(sys.stdout)
    _printing_safely(sys.stderr)
    try:
        try:
            status = _dispatch(list(sys.argv[1:] if argv is None else argv))
        finally:
            sys.stdout.flush()  # a reader gone after the last line (or after --help) shows here, not at exit
    except BrokenPipeError:
        # The reader of the output went away (`capdesk ... | head`): stop quietly, as a program killed
        # by SIGPIPE would. Later writes (Python's own flush at exit) go nowhere instead of failing.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    return status


def _dispatch(argv: list[str]) -> int:
    if argv[:1] and argv[0] in WHOLE_LINE:
        return WHOLE_LINE[argv[0]](argv[1:])
    ns = build_parser().parse_args(argv)
    if ns.run is None:
        build_parser().print_help()
        return EXIT_USAGE
    return ns.run(ns)


if __name__ == "__main__":
    sys.exit(main())
