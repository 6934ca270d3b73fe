"""``capdesk train`` / ``python -m training``: prepare, train, evaluate, export, finetune, release, shrink.

Each command is one row of ``COMMANDS``: its options and what runs it, or the module whose own
``main(argv)`` reads the rest of the line. Nothing imports PyTorch until a command runs (the parser of
``prepare`` and ``fit`` is built from ``TrainConfig``, which does).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from training.errors import UsageError
from training.options import dataclass_options


@dataclasses.dataclass(frozen=True)
class Command:
    """One training command: ``args`` adds its options to this parser and ``run`` runs it, or ``module``
    names the module whose ``main(argv)`` parses the rest of the line itself."""

    name: str
    help: str
    args: Callable[[argparse.ArgumentParser], None] | None = None
    run: Callable[[argparse.Namespace], int] | None = None
    module: str = ""
    aliases: tuple[str, ...] = ()


def _config_args(p: argparse.ArgumentParser) -> None:
    from training.train import TrainConfig

    dataclass_options(p, TrainConfig, skip=("data", "extra"))


def _config(ns: argparse.Namespace):
    from training.train import TrainConfig

    kw = {f.name: getattr(ns, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(ns, f.name)}
    return TrainConfig(**kw)


def _prepare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="data set: folder, Karpathy/COCO JSON, CSV or Flickr8k token file")
    _config_args(p)


def _fit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data")
    _config_args(p)


def _evaluate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle", help="model bundle folder")
    p.add_argument("data", help="data set with a test split")
    p.add_argument("--split", default="test")
    p.add_argument("--image-root", default=None, help="where the data set's images live")
    p.add_argument("--beams", default="1,3,5")
    p.add_argument("--cache", default="")
    p.add_argument("--sheet", help="write a qualitative sheet (PNG) of a few images")
    p.add_argument("--json", dest="json_out", help="write the metrics to this JSON file")
    p.add_argument("--meteor", action="store_true", help="also METEOR (needs java)")
    p.add_argument("--said-as", action="store_true",
                   help="also describe each photo as the app does and report, for the captions said as fact, "
                        "as 'Probably' and withheld, their shares and how many name an absent object (CHAIRs)")


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="training run folder (holds checkpoint_best.pt)")
    p.add_argument("bundle", help="bundle folder to write")
    p.add_argument("--name", required=True)
    p.add_argument("--card", help="JSON with extra manifest fields (data, licence, metrics)")


def _prepare(ns: argparse.Namespace) -> int:
    return _from_features(ns, "prepare")


def _fit(ns: argparse.Namespace) -> int:
    return _from_features(ns, "fit")


def _from_features(ns: argparse.Namespace, command: str) -> int:
    from training import train as tr

    cfg = _config(ns)
    cfg.data = ns.data
    tr.setup_logging(Path(cfg.out))
    try:
        if command == "prepare":
            ds, cache = tr.prepare(cfg)
            print(json.dumps({"data": ds.summary(), "cache": str(cache.folder)}, indent=2))
        else:
            tr.train(cfg)
    except (UsageError, FileNotFoundError) as exc:  # say what cannot be used, without a traceback
        print(f"capdesk train {command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _evaluate(ns: argparse.Namespace) -> int:
    from training.evaluate import evaluate_bundle

    res = evaluate_bundle(Path(ns.bundle), Path(ns.data), ns.split,
                          [int(b) for b in ns.beams.split(",")], cache=ns.cache,
                          sheet=Path(ns.sheet) if ns.sheet else None, meteor=ns.meteor,
                          image_root=Path(ns.image_root) if ns.image_root else None, said_as=ns.said_as)
    text = json.dumps(res, indent=2)
    print(text)
    if ns.json_out:
        Path(ns.json_out).write_text(text)
    return 0


def _export(ns: argparse.Namespace) -> int:
    from training.export import export_run

    extra = json.loads(Path(ns.card).read_text()) if ns.card else {}
    print(export_run(Path(ns.run), Path(ns.bundle), ns.name, extra))
    return 0


COMMANDS: tuple[Command, ...] = (
    Command("prepare", "read a data set and cache its encoder features", _prepare_args, _prepare),
    Command("fit", "train a decoder from cached features (resumes if interrupted)", _fit_args, _fit,
            aliases=("train",)),
    Command("evaluate", "test-split metrics of a bundle at several beam widths", _evaluate_args, _evaluate),
    Command("export", "export a trained run into a model bundle", _export_args, _export),
    Command("finetune", "teach an installed model your own images and captions; installs a new model",
            module="training.finetune"),
    Command("release", "export + tune decoding on val + test metrics + attention sheet, into a bundle",
            module="training.release"),
    Command("scst", "self-critical training after fit: sampled captions rewarded by CIDEr-D", module="training.scst"),
    Command("ensemble", "several finished runs decoding as one model (the mean of their word probabilities)",
            module="training.ensemble"),
    Command("ground", "concept head, grounded beam and trust score for a bundle, chosen on val, measured on test",
            module="training.grounding"),
    Command("shrink", "float16 encoder and int8 decoder weights: a bundle under half the size, decoding faster",
            module="training.shrink"),
)


def register(sub, command: Command) -> None:
    """Add ``command`` to the subcommands ``sub``; one with a parser of its own is listed only (its
    module reads the rest of the line before this parser would)."""
    if command.module:
        sub.add_parser(command.name, add_help=False, prefix_chars="\0", help=command.help)
        return
    p = sub.add_parser(command.name, aliases=list(command.aliases), help=command.help)
    command.args(p)
    p.set_defaults(handler=command.run)  # (not 'run': export takes a run folder by that name)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="capdesk train", description="Train, evaluate and export caption models.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for command in COMMANDS:
        register(sub, command)
    return ap


PIP_TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def missing_dependency(exc: ModuleNotFoundError) -> str:
    """One line saying what to install when a training dependency (PyTorch first) is absent."""
    if getattr(sys, "frozen", False):  # the installed app: pip cannot add PyTorch to it
        from capdesk.training_hint import training_missing

        return training_missing(exc)
    name = (exc.name or str(exc)).split(".")[0]
    if name == "torch":
        return (f"training needs PyTorch, which is not installed; install it (the CPU build: {PIP_TORCH_CPU}), "
                "then the 'train' extra: pip install 'capdesk[train]'")
    return f"training needs the 'train' extra (pip install 'capdesk[train]'): no module named {name!r}"


def main(argv: list[str] | None = None) -> int:
    """Run one training command; a missing dependency gets one line, not a traceback (even for --help,
    which lists the training options PyTorch defines)."""
    try:
        return _main(argv)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("training", "capdesk"):
            raise  # a broken checkout, not a missing install: the traceback is what helps
        print(f"capdesk train: error: {missing_dependency(exc)}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own = next((c for c in COMMANDS if c.module and argv[:1] == [c.name]), None)
    if own is not None:
        return importlib.import_module(own.module).main(argv[1:])
    ns = build_parser().parse_args(argv)
    return ns.handler(ns)


if __name__ == "__main__":
    sys.exit(main())
