"""``capdesk``: one entry point, one subcommand per job.

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

from capdesk import __version__, limits
from capdesk.cli.altfill import add_parser as add_alt_fill_parser
from capdesk.cli.common import (
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    beam_type,
    describe_args,
    error,
    gpu_share,
    model_args,
    positive_int,
)
from capdesk.cli.screen import add_parser as add_screen_parser
from capdesk.cli.service import add_parser as add_service_parser
from capdesk.training_hint import training_missing

__all__ = ["EXIT_OK", "EXIT_SOME_FAILED", "EXIT_USAGE", "build_parser", "main", "training_missing"]

EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE: what a shell reports for `yes | head -1`'s yes

# `capdesk train --help` where PyTorch is missing: the commands are listed all the same (training's
# own parser cannot be built without PyTorch), so that a user sees what installing it would give.
# tests/test_first_day.py checks that this list is training's own.
TRAIN_COMMANDS = (
    ("prepare", "read a data set and cache its encoder features"),
    ("fit (train)", "train a decoder from cached features (resumes if interrupted)"),
    ("evaluate", "test-split metrics of a bundle at several beam widths"),
    ("export", "export a trained run into a model bundle"),
    ("finetune", "teach an installed model your own images and captions; installs a new model"),
    ("release", "export + tune decoding on val + test metrics + attention sheet, into a bundle"),
    ("scst", "self-critical training after fit: sampled captions rewarded by CIDEr-D"),
    ("ensemble", "several finished runs decoding as one model (the mean of their word probabilities)"),
    ("ground", "concept head, grounded beam and trust score for a bundle, chosen on val, measured on test"),
    ("shrink", "float16 encoder and int8 decoder weights: a bundle under half the size, decoding faster"),
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 already; keep the message one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="capdesk", description="Describe images offline: captions, speech and alt text.")
    ap.add_argument("--version", action="version", version=f"capdesk {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("caption", help="caption images and print the captions",
                       description="Caption image files (folders are expanded to their images).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--beam", type=beam_type, default=None, help="beam width (1 = greedy; default: the model's)")
    p.add_argument("--model", default=None, help="installed model name, or a bundle folder or zip")
    p.add_argument("--provider", default=None,
                   help="ONNX Runtime execution provider (cpu, cuda, directml, coreml; default: best available)")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    p.add_argument("--batch-size", type=int, default=8, help="images per encoder batch")
    p.add_argument("--speak", action="store_true", help="speak each caption aloud")
    p.add_argument("--wav", metavar="FILE", help="write the spoken captions to this WAV file instead")
    describe_args(p)

    p = sub.add_parser("batch", help="write alt-text sidecars for whole folders, with a report",
                       description="Caption every image under PATH and write alt-text sidecars. "
                                   "Images whose sidecars are current are skipped, so a second run changes nothing.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="image files or folders")
    p.add_argument("--files-from", metavar="LIST",
                   help="also the pictures listed in LIST, one path per line or NUL-separated (find -print0); "
                        "- reads the list from standard input")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    _sidecar_args(p)
    p.add_argument("--out", metavar="DIR",
                   help="write the sidecars into a mirror tree under DIR instead of beside the pictures (for "
                        "read-only image stores): the sidecar of a picture at ROOT/a/b.jpg goes to DIR/a/, where "
                        "ROOT is the deepest folder holding every PATH and listed picture")
    p.add_argument("--report", metavar="FILE", help="write a report: FILE.csv, FILE.json or FILE.html")
    p.add_argument("--embed", action="store_true",
                   help="also write the alt text into the image files themselves (needs exiftool and the xmp "
                        "sidecar); each original is kept beside it as NAME_original")
    model_args(p, threshold=True)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    describe_args(p)
    g = p.add_argument_group("describing on a Ray cluster (needs the 'ray' extra: pip install 'capdesk[ray]')")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="describe the pictures on Ray workers: on a Ray started on this machine for the batch, or "
                        "on the cluster at ADDRESS (auto: the one 'ray start' joined here; HOST:PORT; "
                        "ray://HOST:PORT). Sidecars, skips, the report and the exit status are those of the plain "
                        "batch")
    g.add_argument("--ray-workers", type=positive_int, default=None, metavar="N",
                   help="Ray workers, each holding the model once (default: one per CPU, or per GPU share)")
    g.add_argument("--ray-gpus", type=gpu_share, default=0.0, metavar="G",
                   help="GPUs per Ray worker, e.g. 1 or 0.5 (default 0: CPU workers); the workers use CUDA")

    p = sub.add_parser("watch", help="caption new images as they appear in folders",
                       description="Watch folders; caption each new or changed image once it is completely "
                                   "written, write its sidecars and print (or speak) the caption. Ctrl-C stops.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="folders to watch")
    p.add_argument("--recursive", "-r", action=argparse.BooleanOptionalAction, default=True,
                   help="watch sub-folders too (default: yes)")
    _sidecar_args(p)
    p.add_argument("--speak", action="store_true", help="speak each caption aloud")
    model_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object per captioned image")
    describe_args(p)

    add_alt_fill_parser(sub)
    add_screen_parser(sub)
    add_service_parser(sub)

    p = sub.add_parser("gui", help="open the desktop application",
                       description="Open the desktop application, at PATH (a folder or an image) if given.")
    p.add_argument("path", nargs="?", help="folder or image to open; the selected image is captioned at once")

    p = sub.add_parser("models", help="list, verify, import or remove model bundles",
                       description="List installed model bundles, verify their files, import one or remove one.")
    msub = p.add_subparsers(dest="models_command", metavar="ACTION", parser_class=_Parser)
    ml = msub.add_parser("list", help="installed bundles and where they are",
                         description="List the installed model bundles: name, where it was found (user, shipped, "
                                     "CAPDESK_MODELS) and its folder.")
    ml.add_argument("--json", action="store_true",
                    help="one JSON object: 'models' (each bundle's name, source, path, domain, metrics ...) "
                         "and 'problems' (bundles that cannot be used, one line each)")
    mv = msub.add_parser("verify", help="check every file of a bundle against its sha256")
    mv.add_argument("name", nargs="?", help="model name or folder (default: all installed)")
    mi = msub.add_parser("import", help="check a bundle folder or zip and install it in your model folder",
                         description="Check a model bundle (folder or .zip) against its manifest and install it "
                                     "in the user model folder; a bundle that fails any check installs nothing.")
    mi.add_argument("path", metavar="PATH", help="bundle folder or .zip")
    mr = msub.add_parser("remove", help="take a model you installed or taught out of your model folder",
                         description="Remove a model from your model folder (one you imported or taught). Shipped "
                                     "models cannot be removed. Alt text already written next to pictures is kept; "
                                     "if the settings use this model, they fall back to Automatic.")
    mr.add_argument("name", metavar="NAME", help="the model's name (capdesk models list)")
    mr.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts; without a terminal, "
                                                           "removing needs it)")

    sub.add_parser("train", help="train, evaluate and export models (needs the 'train' extra)",
                   add_help=False, prefix_chars="\0")
    return ap


def _sidecar_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sidecar", default="txt,xmp", help="sidecar formats, comma-separated: txt, xmp")
    p.add_argument("--xmp-name", choices=limits.SIDECAR_NAMINGS, default="ext",
                   help="ext: photo.jpg.xmp (default; cannot collide), stem: photo.xmp (Lightroom style)")
    p.add_argument("--txt-name", choices=limits.SIDECAR_NAMINGS, default="stem",
                   help="stem: photo.txt (default), ext: photo.jpg.txt")
    p.add_argument("--lang", default="en", help="language of the alt text (XMP xml:lang)")
    p.add_argument("--ext-descr", action="store_true",
                   help="also write a longer description to the XMP sidecar (IPTC ExtDescrAccessibility): what "
                        "the model said, the object tags, the text read, the picture's size and main colours")
    p.add_argument("--mirror-dc", action="store_true", help="also write the alt text to dc:description")
    p.add_argument("--overwrite", action="store_true",
                   help="replace sidecars that CapDesk did not write or that were edited since")


def cmd_train(argv: Sequence[str]) -> int:
    try:
        from training.cli import main as train_main
    except ImportError as exc:
        if list(argv) in (["--help"], ["-h"]):
            print(train_help(training_missing(exc)))
            return EXIT_OK
        error(training_missing(exc))
        return EXIT_USAGE
    if list(argv) in (["--help"], ["-h"]):
        missing = _torch_missing()
        if missing is not None:
            from training.cli import missing_dependency

            print(train_help(missing_dependency(missing)))
            return EXIT_OK
    return train_main(list(argv))


def _torch_missing() -> ModuleNotFoundError | None:
    """Why PyTorch cannot be imported here, or None; asked without importing it (seconds)."""
    import importlib.util

    try:
        if importlib.util.find_spec("torch") is not None:
            return None
    except ModuleNotFoundError as exc:
        return exc
    except (ImportError, ValueError):
        pass
    return ModuleNotFoundError("No module named 'torch'", name="torch")


def train_help(why: str) -> str:
    """``capdesk train --help`` in an install without PyTorch: the commands, and how to get them."""
    width = max(len(name) for name, _ in TRAIN_COMMANDS) + 2
    lines = ["usage: capdesk train COMMAND ...", "", "Train, evaluate and export caption models.", "",
             "commands (each has --help once PyTorch is installed):"]
    lines += [f"  {name:<{width}}{what}" for name, what in TRAIN_COMMANDS]
    lines += ["", f"Not available in this install: {why}"]
    return "\n".join(lines)


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
    if argv and argv[0] == "train":
        return cmd_train(argv[1:])
    ns = build_parser().parse_args(argv)
    if ns.command == "caption":
        from capdesk.cli.caption import cmd_caption

        return cmd_caption(ns)
    if ns.command in ("batch", "watch"):
        from capdesk.cli import folders as cli_folders

        return cli_folders.cmd_batch(ns) if ns.command == "batch" else cli_folders.cmd_watch(ns)
    if ns.command == "alt-fill":
        from capdesk.cli.altfill import cmd_alt_fill

        return cmd_alt_fill(ns)
    if ns.command == "screen":
        from capdesk.cli.screen import cmd_screen

        return cmd_screen(ns)
    if ns.command == "service":
        from capdesk.cli.service import cmd_service

        return cmd_service(ns, build_parser)
    if ns.command == "models":
        from capdesk.cli.models import cmd_models

        return cmd_models(ns)
    if ns.command == "gui":
        if ns.path and not __import__("os").path.exists(ns.path):
            error(f"{ns.path}: no such file or folder")
            return EXIT_USAGE
        from capdesk.gui.app import run

        return run(ns.path)
    build_parser().print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
