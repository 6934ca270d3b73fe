"""``capdesk batch`` and ``capdesk watch``: the two commands that write alt-text sidecars for
folders (the parser and the other commands are in ``capdesk.cli``)."""

from __future__ import annotations

import argparse
import json
import sys

from capdesk.cli import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, _open_engine, _sidecar_options


def cmd_batch(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from capdesk.batch import DEFAULT_REVIEW_THRESHOLD, run_batch, write_report
    from capdesk.sidecars import SidecarWriter

    try:
        opts = _sidecar_options(ns)
    except ValueError as exc:
        print(f"capdesk: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if ns.report and Path(ns.report).suffix.lower() not in (".csv", ".json", ".html", ".htm"):
        print("capdesk: error: --report must end in .csv, .json or .html", file=sys.stderr)
        return EXIT_USAGE
    engine, err = _open_engine(ns)
    if err:
        print(f"capdesk: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if ns.embed and "xmp" not in opts.formats:
        print("capdesk: error: --embed copies the XMP sidecar into the image: add xmp to --sidecar", file=sys.stderr)
        return EXIT_USAGE
    writer = SidecarWriter(opts)
    if writer.ledger.error:  # one line, never a traceback: nothing is written without the ledger
        print(f"capdesk: error: {writer.ledger.error}", file=sys.stderr)
        return EXIT_USAGE
    bar = None
    if not ns.quiet:
        from tqdm import tqdm

        bar = tqdm(unit="img", desc="alt text", file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int, row) -> None:
        if bar is not None:
            bar.total = total
            bar.update(1)
        if row.status == "failed":
            msg = f"capdesk: {row.path}: {row.error}"
            (bar.write(msg, file=sys.stderr) if bar is not None else print(msg, file=sys.stderr))
        elif row.status == "captioned":
            line = f"{row.path}\t{row.alt_text}" + (f"\t(needs review: {row.reason})" if row.needs_review else "")
            (bar.write(line, file=sys.stdout) if bar is not None else print(line, flush=True))
        if getattr(row, "note", None):
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
        result = run_batch(ns.paths, engine, writer, recursive=ns.recursive, beam=ns.beam,
                           threshold=DEFAULT_REVIEW_THRESHOLD if ns.threshold is None else ns.threshold,
                           progress=progress, cancelled=cancel.is_set)
    finally:
        signal.signal(signal.SIGINT, previous)
    if ns.embed:
        from capdesk.sidecars import SidecarError, embed_in_image

        for row in result.rows:
            if row.status != "captioned":
                continue
            xmp = writer.paths(Path(row.path))["xmp"]
            try:
                embed_in_image(Path(row.path), xmp)
            except SidecarError as exc:
                row.status, row.error = "failed", f"embedding: {exc}"
                print(f"capdesk: {exc}", file=sys.stderr)
    if bar is not None:
        bar.close()
    if ns.report:
        write_report(result, Path(ns.report))
    counts = result.counts()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no images"
    print(f"capdesk: {summary} in {result.seconds:.1f} s" + (" (interrupted)" if result.interrupted else ""),
          file=sys.stderr)
    if result.interrupted:
        return 130
    return EXIT_SOME_FAILED if result.failed else EXIT_OK


def cmd_watch(ns: argparse.Namespace) -> int:
    import signal
    import threading
    from pathlib import Path

    from capdesk.batch import DEFAULT_REVIEW_THRESHOLD, run_batch
    from capdesk.sidecars import SidecarWriter
    from capdesk.watch import FolderWatcher

    try:
        opts = _sidecar_options(ns)
    except ValueError as exc:
        print(f"capdesk: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    missing = [p for p in ns.paths if not Path(p).is_dir()]
    if missing:
        print(f"capdesk: error: {missing[0]}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    engine, err = _open_engine(ns)
    if err:
        print(f"capdesk: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    writer = SidecarWriter(opts)
    if writer.ledger.error:  # one line, never a traceback: nothing is written without the ledger
        print(f"capdesk: error: {writer.ledger.error}", file=sys.stderr)
        return EXIT_USAGE
    speaker = None
    if ns.speak:
        from capdesk.speech import Speaker

        speaker = Speaker()
        if speaker.error:
            print(f"capdesk: warning: {speaker.error}", file=sys.stderr)
            speaker = None

    def handle(paths: list) -> None:
        result = run_batch(paths, engine, writer, beam=ns.beam, threshold=DEFAULT_REVIEW_THRESHOLD)
        for row in result.rows:
            if ns.json:
                from dataclasses import asdict

                print(json.dumps(asdict(row), ensure_ascii=False), flush=True)
            elif row.status == "failed":
                print(f"{row.path}\tERROR: {row.error}", flush=True)
            elif row.status == "captioned":
                print(f"{row.path}\t{row.alt_text}", flush=True)
                if row.needs_review:
                    print(f"capdesk: {row.path}: needs review: {row.reason}", file=sys.stderr, flush=True)
            if row.note and not ns.json:
                print(f"capdesk: {row.path}: {row.note}", file=sys.stderr, flush=True)
            if speaker and row.status == "captioned":
                from capdesk.speech import Priority

                speaker.say(row.alt_text, Priority.NORMAL)  # new pictures wait their turn

    stop = threading.Event()
    # Set both explicitly: a process started with SIGINT ignored (nohup, '&' in a script, a service
    # manager) keeps ignoring it otherwise, and SIGTERM is what service managers and kill send.
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher = FolderWatcher([Path(p) for p in ns.paths], handle, recursive=ns.recursive, writer=writer)
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
    return EXIT_OK
