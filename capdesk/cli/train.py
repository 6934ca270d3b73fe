"""``capdesk train``: training's own command line (``training.cli``), which reads the rest of the line
itself; where PyTorch or the training package is missing, what installing them gives and how."""

from __future__ import annotations

from collections.abc import Sequence

from capdesk.cli.common import EXIT_OK, EXIT_USAGE, error
from capdesk.training_hint import training_missing

NAME = "train"

# `capdesk train --help` where PyTorch is missing: the commands are listed all the same (training's
# own parser cannot be built without PyTorch), so that a user sees what installing it would give.
# tests/journeys/test_first_day.py checks that this list is training's own (``training.cli.COMMANDS``).
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


def register(sub) -> None:
    """List the command in the main parser's help. It runs through ``cmd_train``, which gets the rest of
    the line before the main parser sees it; so no ``run`` is set here."""
    sub.add_parser(NAME, help="train, evaluate and export models (needs the 'train' extra)",
                   add_help=False, prefix_chars="\0")


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
