"""What to say when training cannot start in this install (the CLI and the window say the same)."""

from __future__ import annotations

import sys

PIP_TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
# Pictures with captions a fine-tune needs at least (below this a model learns the captions by heart,
# not the pictures); here so that the window says it before teaching starts, without importing PyTorch.
MIN_TEACH_PICTURES = 20


def training_missing(exc: ImportError) -> str:
    """Why training cannot run here, and what to do about it."""
    if getattr(sys, "frozen", False):  # the installed app (PyInstaller) never carries PyTorch
        return ("this installed CapDesk cannot train models (PyTorch is not part of it); install CapDesk "
                "with pip to train: pip install 'capdesk[train]'. Models trained there can be imported "
                "here with Tools > Models… > Import folder.")
    return (f"training needs PyTorch and the 'train' extra: {exc}. Install the CPU build of PyTorch first "
            f"({PIP_TORCH_CPU}; plain pip would fetch a build for NVIDIA GPUs of several GB), then "
            "pip install 'capdesk[train]'")


def training_unavailable() -> str | None:
    """Why training cannot start in this install, found without importing PyTorch (seconds), or None."""
    import importlib.util

    for module in ("torch", "training"):
        if getattr(sys, "frozen", False) or importlib.util.find_spec(module) is None:
            return training_missing(ImportError(f"No module named '{module}'"))
    return None
