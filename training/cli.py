"""``capdesk train`` / ``python -m training``: prepare, train, evaluate, export, finetune, release, shrink."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from training.errors import UsageError
from training.options import dataclass_options


def _config_args(p: argparse.ArgumentParser) -> None:
    from training.train import TrainConfig

    dataclass_options(p, TrainConfig, skip=("data", "extra"))


def _config(ns: argparse.Namespace):
    from training.train import TrainConfig

    kw = {f.name: getattr(ns, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(ns, f.name)}
    return TrainConfig(**kw)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="capdesk train", description="Train, evaluate and export caption models.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("prepare", help="read a data set and cache its encoder features")
    p.add_argument("data", help="data set: folder, Karpathy/COCO JSON, CSV or Flickr8k token file")
    _config_args(p)

    p = sub.add_parser("fit", aliases=["train"],
                       help="train a decoder from cached features (resumes if interrupted)")
    p.add_argument("data")
    _config_args(p)

    p = sub.add_parser("evaluate", help="test-split metrics of a bundle at several beam widths")
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

    p = sub.add_parser("export", help="export a trained run into a model bundle")
    p.add_argument("run", help="training run folder (holds checkpoint_best.pt)")
    p.add_argument("bundle", help="bundle folder to write")
    p.add_argument("--name", required=True)
    p.add_argument("--card", help="JSON with extra manifest fields (data, licence, metrics)")

    sub.add_parser("finetune", add_help=False, prefix_chars="\0",
                   help="teach an installed model your own images and captions; installs a new model")
    sub.add_parser("release", add_help=False, prefix_chars="\0",
                   help="export + tune decoding on val + test metrics + attention sheet, into a bundle")
    sub.add_parser("scst", add_help=False, prefix_chars="\0",
                   help="self-critical training after fit: sampled captions rewarded by CIDEr-D")
    sub.add_parser("ensemble", add_help=False, prefix_chars="\0",
                   help="several finished runs decoding as one model (the mean of their word probabilities)")
    sub.add_parser("ground", add_help=False, prefix_chars="\0",
                   help="concept head, grounded beam and trust score for a bundle, chosen on val, measured on test")
    sub.add_parser("shrink", add_help=False, prefix_chars="\0",
                   help="float16 encoder and int8 decoder weights: a bundle under half the size, decoding faster")
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
    if argv and argv[0] == "release":
        from training.release import main as release_main

        return release_main(argv[1:])
    if argv and argv[0] == "shrink":
        from training.shrink import main as shrink_main

        return shrink_main(argv[1:])
    if argv and argv[0] == "ensemble":
        from training.ensemble import main as ensemble_main

        return ensemble_main(argv[1:])
    if argv and argv[0] == "scst":
        from training.scst import main as scst_main

        return scst_main(argv[1:])
    if argv and argv[0] == "ground":
        from training.grounding import main as ground_main

        return ground_main(argv[1:])
    if argv and argv[0] == "finetune":
        from training.finetune import main as finetune_main

        return finetune_main(argv[1:])
    ns = build_parser().parse_args(argv)
    if ns.cmd == "train":
        ns.cmd = "fit"
    if ns.cmd in ("prepare", "fit"):
        from training import train as tr

        cfg = _config(ns)
        cfg.data = ns.data
        tr.setup_logging(Path(cfg.out))
        try:
            if ns.cmd == "prepare":
                ds, cache = tr.prepare(cfg)
                print(json.dumps({"data": ds.summary(), "cache": str(cache.folder)}, indent=2))
            else:
                tr.train(cfg)
        except (UsageError, FileNotFoundError) as exc:  # say what cannot be used, without a traceback
            print(f"capdesk train {ns.cmd}: error: {exc}", file=sys.stderr)
            return 2
        return 0
    if ns.cmd == "evaluate":
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
    if ns.cmd == "export":
        from training.export import export_run

        extra = json.loads(Path(ns.card).read_text()) if ns.card else {}
        print(export_run(Path(ns.run), Path(ns.bundle), ns.name, extra))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
