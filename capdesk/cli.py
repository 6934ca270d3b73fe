"""``capdesk``: one entry point, one subcommand per job.

Exit status: 0 when everything succeeded, 1 when some file (or bundle) failed, 2 on
usage errors (bad options, unknown model or provider).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from capdesk import __version__

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 already; keep the message one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _beam(value: str) -> int:
    n = int(value)
    if not 1 <= n <= 20:
        raise argparse.ArgumentTypeError("beam width must be between 1 and 20")
    return n


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="capdesk", description="Describe images offline: captions, speech and alt text.")
    ap.add_argument("--version", action="version", version=f"capdesk {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("caption", help="caption images and print the captions",
                       description="Caption image files (folders are expanded to their images).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--beam", type=_beam, default=None, help="beam width (1 = greedy; default: the model's)")
    p.add_argument("--model", default=None, help="installed model name, or a bundle folder or zip")
    p.add_argument("--provider", default=None,
                   help="ONNX Runtime execution provider (cpu, cuda, directml, coreml; default: best available)")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    p.add_argument("--batch-size", type=int, default=8, help="images per encoder batch")

    p = sub.add_parser("models", help="list or verify installed model bundles",
                       description="List installed model bundles or verify their files.")
    msub = p.add_subparsers(dest="models_command", metavar="ACTION", parser_class=_Parser)
    ml = msub.add_parser("list", help="installed bundles and where they are")
    ml.add_argument("--json", action="store_true")
    mv = msub.add_parser("verify", help="check every file of a bundle against its sha256")
    mv.add_argument("name", nargs="?", help="model name or folder (default: all installed)")

    sub.add_parser("train", help="train, evaluate and export models (needs the 'train' extra)",
                   add_help=False, prefix_chars="\0")
    return ap


def cmd_caption(ns: argparse.Namespace) -> int:
    from capdesk.bundle import BundleError
    from capdesk.engine import Engine, expand_paths
    from capdesk.providers import ProviderError, short_name

    try:
        engine = Engine(ns.model, provider=ns.provider, beam=ns.beam or 3)
    except (BundleError, ProviderError) as exc:
        print(f"capdesk: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if ns.beam is None:
        engine.beam = int(engine.bundle.manifest.get("decoding", {}).get("beam", 3))
    provider = short_name(engine.provider)
    failed = 0
    listed = list(expand_paths(ns.paths, ns.recursive))
    errors = {p: e for p, e in listed if e}
    todo = [p for p, e in listed if not e]
    if not listed:
        print("capdesk: error: no images found in the given paths", file=sys.stderr)
        return EXIT_SOME_FAILED

    def emit(path: str, caption, error: str | None) -> None:
        nonlocal failed
        failed += error is not None
        if ns.json:
            rec = {"path": path, "caption": caption.text if caption else None,
                   "confidence": round(caption.confidence, 4) if caption else None,
                   "words": caption.words if caption else None,
                   "model": engine.name, "provider": provider, "error": error}
            print(json.dumps(rec, ensure_ascii=False), flush=True)
        elif error:
            print(f"{path}\tERROR: {error}", flush=True)
            print(f"capdesk: {path}: {error}", file=sys.stderr)
        else:
            print(f"{path}\t{caption.text}", flush=True)

    for p, e in errors.items():
        emit(p, None, e)
    try:
        for res in engine.caption_paths(todo, batch_size=max(1, ns.batch_size)):
            emit(res.path, res.caption, res.error)
    except KeyboardInterrupt:
        print("capdesk: interrupted", file=sys.stderr)
        return 130
    return EXIT_SOME_FAILED if failed else EXIT_OK


def cmd_models(ns: argparse.Namespace) -> int:
    from capdesk.bundle import BundleError, discover, resolve

    if ns.models_command in (None, "list"):
        bundles, problems = discover()
        if getattr(ns, "json", False):
            print(json.dumps({"models": [b.summary() for b in bundles], "problems": problems}, indent=2))
        else:
            if not bundles:
                print("no model bundles installed")
            for b in bundles:
                m = b.manifest.get("metrics", {}).get("test", {})
                fig = m.get("beam3") or {}
                perf = f"  test BLEU-4 {fig['BLEU-4']:.3f} CIDEr {fig['CIDEr']:.3f}" if "BLEU-4" in fig else ""
                print(f"{b.name}\t{b.source}\t{b.path}{perf}")
            for p in problems:
                print(f"problem: {p}", file=sys.stderr)
        return EXIT_SOME_FAILED if problems else EXIT_OK
    # verify
    if ns.name:
        try:
            targets = [resolve(ns.name)]
        except BundleError as exc:
            print(f"capdesk: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        problems: list[str] = []
    else:
        targets, problems = discover()
    bad = bool(problems)
    for p in problems:
        print(f"FAILED\t{p}")
    for b in targets:
        errs = b.verify()
        if errs:
            bad = True
            for e in errs:
                print(f"FAILED\t{b.name}\t{e}")
        else:
            print(f"OK\t{b.name}\t{b.path}\t{len(b.manifest['files'])} files verified")
    return EXIT_SOME_FAILED if bad else EXIT_OK


def cmd_train(argv: Sequence[str]) -> int:
    try:
        from training.cli import main as train_main
    except ImportError as exc:
        print(f"capdesk: error: training needs the 'train' extra (pip install 'capdesk[train]'): {exc}",
              file=sys.stderr)
        return EXIT_USAGE
    return train_main(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "train":
        return cmd_train(argv[1:])
    ns = build_parser().parse_args(argv)
    if ns.command == "caption":
        return cmd_caption(ns)
    if ns.command == "models":
        return cmd_models(ns)
    build_parser().print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
