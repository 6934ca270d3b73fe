"""``capdesk batch`` and ``capdesk watch``: the two commands that write alt-text sidecars for
folders (the parser and the other commands are in ``capdesk.cli.main``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from capdesk.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    error,
    open_engine,
    open_writer,
    sidecar_options,
    speaker_or_say,
)
from capdesk.status import RowStatus

RAY_WRITERS = 4


def cmd_batch(ns: argparse.Namespace) -> int:
    from capdesk.folders.batch import run_batch, write_report

    inputs = batch_inputs(ns)
    if inputs is None:
        return EXIT_USAGE
    out_root = None
    if ns.out:
        out_root = mirror_folder(ns, inputs)
        if out_root is None:
            return EXIT_USAGE
    opts = sidecar_options(ns, out_root)
    if opts is None:
        return EXIT_USAGE
    if ns.report and Path(ns.report).suffix.lower() not in (".csv", ".json", ".html", ".htm"):
        error("--report must end in .csv, .json or .html")
        return EXIT_USAGE
    if ns.embed and "xmp" not in opts.formats:
        error("--embed copies the XMP sidecar into the image: add xmp to --sidecar")
        return EXIT_USAGE
    if not ns.ray and (ns.ray_workers is not None or ns.ray_gpus):
        error("--ray-workers and --ray-gpus say how to use Ray: add --ray")
        return EXIT_USAGE
    # On Ray this process only chooses the models (the workers describe): it needs no GPU of its own.
    engine = open_engine(argparse.Namespace(**{**vars(ns), "provider": "cpu"}) if ns.ray else ns)
    if engine is None:
        return EXIT_USAGE
    writer = open_writer(opts)
    if writer is None:
        return EXIT_USAGE
    ray_run = None
    rows_out = sys.stdout  # path<TAB>alt text, one line per described picture
    if ns.ray:
        from capdesk.folders.ray_batch import RayPlan, RayRun, RaySetupError

        plan = RayPlan(address=None if ns.ray == "local" else ns.ray, workers=ns.ray_workers, gpus=ns.ray_gpus,
                       provider=ns.provider)
        ray_run = RayRun(engine, plan, beam=ns.beam)
        # Ray prints its own notices (a worker that died and was restarted ...) on stdout. They go to
        # stderr, so that stdout stays one line per described picture, as scripts read it.
        sys.stdout = sys.stderr
        try:
            print(f"capdesk: {ray_run.start()}", file=sys.stderr, flush=True)
        except RaySetupError as exc:
            sys.stdout = rows_out
            error(str(exc))
            return EXIT_USAGE
    bar = None
    if not ns.quiet:
        from tqdm import tqdm

        bar = tqdm(unit="img", desc="alt text", file=sys.stderr, dynamic_ncols=True)
    blocked: set[str] = set()  # the errors of folders already said in one line

    def on_blocked(folder: Path, why: str, row_error: str) -> None:
        blocked.add(row_error)
        hint = "" if ns.out else "; --out DIR writes the sidecars into another folder instead"
        msg = f"capdesk: error: {folder}: sidecars cannot be written in this folder ({why}); nothing in it is " \
              f"described{hint}"
        (bar.write(msg, file=sys.stderr) if bar is not None else print(msg, file=sys.stderr, flush=True))

    def progress(done: int, total: int, row) -> None:
        if bar is not None:
            bar.total = total
            bar.update(1)
        if row.status == RowStatus.FAILED and row.error in blocked:
            pass  # its folder was said once
        elif row.status == RowStatus.FAILED:
            msg = f"capdesk: {row.path}: {row.error}"
            (bar.write(msg, file=sys.stderr) if bar is not None else print(msg, file=sys.stderr))
        elif row.status == RowStatus.CAPTIONED:
            line = f"{row.path}\t{row.alt_text}" + (f"\t(needs review: {row.reason})" if row.needs_review else "")
            (bar.write(line, file=rows_out) if bar is not None else print(line, file=rows_out, flush=True))
        if row.note:
            msg = f"capdesk: {row.path}: {row.note}"
            (bar.write(msg, file=sys.stderr) if bar is not None else print(msg, file=sys.stderr))

    import signal
    import threading

    cancel = threading.Event()

    def on_sigint(signum, frame) -> None:
        if cancel.is_set():  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        cancel.set()
        print("capdesk: stopping after the current image (Ctrl-C again to stop at once)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        # --threshold is in the describer's options: one rule flags new and skipped pictures alike.
        result = run_batch(inputs, engine, writer, recursive=ns.recursive, beam=ns.beam,
                           progress=progress, cancelled=cancel.is_set,
                           describe=ray_run.stream if ray_run is not None else None,
                           # Many workers feed this one process: its disk waits overlap (a network
                           # file system's round trips above all) instead of queueing behind each other.
                           writers=RAY_WRITERS if ray_run is not None else 1, on_blocked=on_blocked)
    finally:
        signal.signal(signal.SIGINT, previous)
        if ray_run is not None:
            ray_run.close()
            sys.stdout = rows_out
    if ns.embed:
        from capdesk.sidecars.writer import SidecarError, embed_in_image, image_signature

        for row in result.rows:
            if row.status != RowStatus.CAPTIONED:
                continue
            image = Path(row.path)
            xmp = writer.paths(image)["xmp"]
            before = image_signature(image)
            try:
                embed_in_image(image, xmp)
            except SidecarError as exc:
                row.status, row.error = RowStatus.FAILED, f"embedding: {exc}"
                print(f"capdesk: {exc}", file=sys.stderr)
            else:
                # The picture changed only by taking in its own alt text: the next run skips it.
                writer.follow_embedding(image, before)
    if bar is not None:
        bar.close()
    if ns.report:
        write_report(result, Path(ns.report))
    # Of the alt texts written, how many are empty and how many need review: '3 captioned' alone hides them.
    print(f"capdesk: {result.counts_words()} in {result.seconds:.1f} s{result.stopped_note()}", file=sys.stderr)
    if result.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_SOME_FAILED if result.failed else EXIT_OK


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


def cmd_watch(ns: argparse.Namespace) -> int:
    import signal
    import threading
    from pathlib import Path

    from capdesk.folders.batch import run_batch
    from capdesk.folders.watch import FolderWatcher

    opts = sidecar_options(ns)
    if opts is None:
        return EXIT_USAGE
    missing = [p for p in ns.paths if not Path(p).is_dir()]
    if missing:
        error(f"{missing[0]}: not a folder")
        return EXIT_USAGE
    engine = open_engine(ns)
    if engine is None:
        return EXIT_USAGE
    writer = open_writer(opts)
    if writer is None:
        return EXIT_USAGE
    speaker = speaker_or_say("warning")[0] if ns.speak else None
    stop = threading.Event()
    reader_gone = threading.Event()  # stdout's reader went away (capdesk watch ... | head -1)
    waiting: set[Path] = set()  # files said to be waited for, until they are handled

    def on_waiting(path: Path, reason: str) -> None:
        if path not in waiting:
            waiting.add(path)
            print(f"capdesk: {path}: waiting until it is completely written and readable ({reason}); "
                  f"after {watcher.give_up:.0f} s without a change it is reported as it is", file=sys.stderr,
                  flush=True)

    def handle(paths: list) -> None:
        waiting.difference_update(paths)
        try:
            show(run_batch(paths, engine, writer, beam=ns.beam))
        except BrokenPipeError:
            reader_gone.set()
            stop.set()

    def show(result) -> None:
        for row in result.rows:
            if ns.json:
                from dataclasses import asdict

                print(json.dumps(asdict(row), ensure_ascii=False), flush=True)
            elif row.status == RowStatus.FAILED:
                print(f"{row.path}\tERROR: {row.error}", flush=True)
            elif row.status == RowStatus.CAPTIONED:
                print(f"{row.path}\t{row.alt_text}", flush=True)
                if row.needs_review:
                    print(f"capdesk: {row.path}: needs review: {row.reason}", file=sys.stderr, flush=True)
            if row.note and not ns.json:
                print(f"capdesk: {row.path}: {row.note}", file=sys.stderr, flush=True)
            if speaker and row.status == RowStatus.CAPTIONED:
                from capdesk.speech import Priority

                speaker.say(row.alt_text, Priority.NORMAL)  # new pictures wait their turn

    # Set both explicitly: a process started with SIGINT ignored (nohup, '&' in a script, a service
    # manager) keeps ignoring it otherwise, and SIGTERM is what service managers and kill send.
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher = FolderWatcher([Path(p) for p in ns.paths], handle, recursive=ns.recursive, writer=writer,
                            on_waiting=on_waiting)
    watcher.start()
    try:
        # The readiness line: from here on a new image is seen (tests and service scripts wait for it).
        print(f"capdesk: watching {', '.join(ns.paths)} with model {engine.name} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
        if speaker:
            speaker.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("capdesk: stopped watching", file=sys.stderr, flush=True)
    if reader_gone.is_set():
        raise BrokenPipeError  # nobody reads the captions: main() ends quietly (141), as for every command
    return EXIT_OK
