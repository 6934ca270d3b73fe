"""``capdesk``: one entry point, one subcommand per job.

Exit status: 0 when everything succeeded, 1 when some file (or bundle) failed, 2 on
usage errors (bad options, unknown model or provider).
"""

from __future__ import annotations

import argparse
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
from capdesk.training_hint import training_missing

__all__ = ["EXIT_OK", "EXIT_SOME_FAILED", "EXIT_USAGE", "build_parser", "main", "training_missing"]


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

    p = sub.add_parser("gui", help="open the desktop application",
                       description="Open the desktop application, at PATH (a folder or an image) if given.")
    p.add_argument("path", nargs="?", help="folder or image to open; the selected image is captioned at once")

    p = sub.add_parser("models", help="list, verify or import model bundles",
                       description="List installed model bundles, verify their files, or import one.")
    msub = p.add_subparsers(dest="models_command", metavar="ACTION", parser_class=_Parser)
    ml = msub.add_parser("list", help="installed bundles and where they are")
    ml.add_argument("--json", action="store_true")
    mv = msub.add_parser("verify", help="check every file of a bundle against its sha256")
    mv.add_argument("name", nargs="?", help="model name or folder (default: all installed)")
    mi = msub.add_parser("import", help="check a bundle folder or zip and install it in your model folder",
                         description="Check a model bundle (folder or .zip) against its manifest and install it "
                                     "in the user model folder; a bundle that fails any check installs nothing.")
    mi.add_argument("path", metavar="PATH", help="bundle folder or .zip")

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
        error(training_missing(exc))
        return EXIT_USAGE
    return train_main(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # File names that are not UTF-8 are printed as their own bytes (as ls does), never an encoding error.
    if hasattr(sys.stdout, "reconfigure") and sys.stdout.errors == "strict":
        sys.stdout.reconfigure(errors="surrogateescape")
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
