"""``capdesk batch``: alt-text sidecars written for whole folders, with a report; the pictures
described here or on a Ray cluster (``capdesk.session.batch_run``)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from capdesk.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    describe_args,
    error,
    gpu_share,
    model_args,
    open_engine,
    open_writer,
    positive_int,
    progress_bar,
    say_line,
    shown,
    sidecar_args,
    sidecar_options,
)
from capdesk.status import RowStatus

if TYPE_CHECKING:
    from capdesk.folders.batch import BatchResult, Row
    from capdesk.folders.ray_batch import RayPlan
    from capdesk.session.batch_run import BatchOptions, BatchRun
    from capdesk.sidecars.writer import SidecarError, SidecarOptions

STOPPING = "capdesk: stopping after the current image (Ctrl-C again to stop at once)"


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
    p = sub.add_parser("batch", help="write alt-text sidecars for whole folders, with a report",
                       description="Caption every image under PATH and write alt-text sidecars. "
                                   "Images whose sidecars are current are skipped, so a second run changes nothing.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="image files or folders")
    p.add_argument("--files-from", metavar="LIST",
                   help="also the pictures listed in LIST, one path per line or NUL-separated (find -print0); "
                        "- reads the list from standard input")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    sidecar_args(p)
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
    _ray_args(p)
    p.set_defaults(run=cmd_batch)


def _ray_args(p: argparse.ArgumentParser) -> None:
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


def cmd_batch(ns: argparse.Namespace) -> int:
    from capdesk.folders.batch import write_report
    from capdesk.session.batch_run import BatchRun

    asked = _asked(ns)
    if asked is None:
        return EXIT_USAGE
    options, sidecars = asked
    # On Ray this process only chooses the models (the workers describe): it needs no GPU of its own.
    engine = open_engine(ns, "cpu" if options.ray else None)
    writer = open_writer(sidecars) if engine is not None else None
    if writer is None:
        return EXIT_USAGE
    printer = _BatchPrinter(mirrored=bool(ns.out))  # before Ray takes stdout over
    run = BatchRun(options, engine, writer)
    if not _started(run):
        return EXIT_USAGE
    printer.bar = None if ns.quiet else progress_bar()
    result = run.run(printer)
    if printer.bar is not None:
        printer.bar.close()
    if ns.report:
        write_report(result, Path(ns.report))
    return _summary(result)


def _asked(ns: argparse.Namespace) -> tuple[BatchOptions, SidecarOptions] | None:
    """The batch and the sidecars the options ask for, or None once the usage error is said."""
    from capdesk.session.batch_run import BatchOptions

    inputs = batch_inputs(ns)
    if inputs is None:
        return None
    out_root = None
    if ns.out:
        out_root = mirror_folder(ns, inputs)
        if out_root is None:
            return None
    opts = sidecar_options(ns, out_root)
    if opts is None or not _options_agree(ns, opts):
        return None
    return BatchOptions(tuple(inputs), recursive=ns.recursive, embed=ns.embed, ray=_ray_plan(ns)), opts


def _options_agree(ns: argparse.Namespace, opts: SidecarOptions) -> bool:
    if ns.report and Path(ns.report).suffix.lower() not in (".csv", ".json", ".html", ".htm"):
        error("--report must end in .csv, .json or .html")
        return False
    if ns.embed and "xmp" not in opts.formats:
        error("--embed copies the XMP sidecar into the image: add xmp to --sidecar")
        return False
    if ns.embed and shutil.which("exiftool") is None:  # said before describing anything, not per picture
        error("--embed needs exiftool (Debian and Ubuntu: sudo apt install libimage-exiftool-perl); "
              "nothing was described")
        return False
    if not ns.ray and (ns.ray_workers is not None or ns.ray_gpus):
        error("--ray-workers and --ray-gpus say how to use Ray: add --ray")
        return False
    return True


def _ray_plan(ns: argparse.Namespace) -> RayPlan | None:
    if not ns.ray:
        return None
    from capdesk.folders.ray_batch import RayPlan

    return RayPlan(address=None if ns.ray == "local" else ns.ray, workers=ns.ray_workers, gpus=ns.ray_gpus,
                   provider=ns.provider)


def _started(run: BatchRun) -> bool:
    """Ray ready, when asked for (where it describes said on stderr); False once why not is said."""
    if run.options.ray is None:
        return True
    from capdesk.folders.ray_batch import RaySetupError

    try:
        where = run.start()
    except RaySetupError as exc:
        error(str(exc))
        return False
    print(f"capdesk: {where}", file=sys.stderr, flush=True)
    return True


def _summary(result: BatchResult) -> int:
    if result.interrupted or result.rows:
        # Of the alt texts written, how many are empty and how many need review: '3 captioned' alone hides them.
        print(f"capdesk: {result.counts_words()} in {result.seconds:.1f} s{result.stopped_note()}", file=sys.stderr)
    if result.interrupted:
        return EXIT_INTERRUPTED
    if not result.rows:  # a wrong folder, or files of no kind CapDesk reads: said once, here
        from capdesk.imageio import IMAGE_SUFFIXES

        error(f"no pictures found in the given paths (pictures are {', '.join(sorted(IMAGE_SUFFIXES))} files)")
        return EXIT_SOME_FAILED
    return EXIT_SOME_FAILED if result.failed else EXIT_OK


class _BatchPrinter:
    """The batch as it runs (``session.batch_run.BatchEvents``): path<TAB>alt text on stdout, one line per
    described picture; problems and notes on stderr; all beside the progress bar."""

    def __init__(self, mirrored: bool) -> None:
        self.rows_out = sys.stdout
        self.bar = None
        self.mirrored = mirrored  # --out given: the hint to use it is not given
        self.blocked_errors: set[str] = set()  # the errors of folders already said in one line

    def blocked(self, folder: Path, why: str, row_error: str) -> None:
        self.blocked_errors.add(row_error)
        hint = "" if self.mirrored else "; --out DIR writes the sidecars into another folder instead"
        say_line(self.bar, f"capdesk: error: {folder}: sidecars cannot be written in this folder ({why}); nothing "
                           f"in it is described{hint}", flush=True)

    def progress(self, done: int, total: int, row: Row) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.update(1)
        if row.status == RowStatus.FAILED and row.error in self.blocked_errors:
            pass  # its folder was said once
        elif row.status == RowStatus.FAILED:
            say_line(self.bar, f"capdesk: {shown(row.path)}: {shown(row.error)}")
        elif row.status == RowStatus.CAPTIONED:
            review = f"\t(needs review: {shown(row.reason)})" if row.needs_review else ""
            line = f"{shown(row.path)}\t{shown(row.alt_text)}{review}"
            say_line(self.bar, line, self.rows_out, flush=True)
        if row.note:
            say_line(self.bar, f"capdesk: {shown(row.path)}: {shown(row.note)}")

    def stopping(self) -> None:
        print(STOPPING, file=sys.stderr)

    def embed_failed(self, exc: SidecarError) -> None:
        print(f"capdesk: {exc}", file=sys.stderr)


def batch_inputs(ns: argparse.Namespace) -> list[str] | None:
    """The PATHs and the pictures listed by --files-from, or None once the usage error is said."""
    from capdesk.folders.pathlist import PathListError, read_path_list

    inputs = list(ns.paths)
    # 'batch --ray FOLDER': argparse gives FOLDER to --ray. A Ray address is 'auto' or has a port.
    if ns.ray and ns.ray not in ("local", "auto") and ":" not in ns.ray:
        inputs.append(ns.ray)
        ns.ray = "local"
    if ns.files_from:
        try:
            inputs += read_path_list(ns.files_from)
        except PathListError as exc:
            error(str(exc))
            return None
    elif not inputs:
        error("name the pictures: PATH (files or folders) or --files-from LIST")
        return None
    return inputs


def mirror_folder(ns: argparse.Namespace, inputs: list[str]) -> Path | None:
    """The ROOT that --out mirrors (its folder made ready), or None once the usage error is said."""
    from capdesk.folders.pathlist import mirror_root

    if ns.embed:
        error("--embed writes into the pictures, --out is for pictures that cannot be written: choose one")
        return None
    if not inputs:
        return Path.cwd()  # an empty list: nothing is written anywhere
    try:
        root = mirror_root(inputs)
        Path(ns.out).mkdir(parents=True, exist_ok=True)
    except ValueError as exc:
        error(str(exc))
        return None
    except OSError as exc:
        error(f"{ns.out}: cannot be used for the sidecars ({exc.strerror or exc})")
        return None
    return root
