"""What to say when training cannot start in this install (the CLI and the window say the same)."""

from __future__ import annotations

import sys


def training_missing(exc: ImportError) -> str:
    """Why training cannot run here, and what to do about it."""
    if getattr(sys, "frozen", False):  # the installed app (PyInstaller) never carries PyTorch
        return ("this installed CapDesk cannot train models (PyTorch is not part of it); install CapDesk "
                "with pip to train: pip install 'capdesk[train]'. Models trained there can be imported "
                "here with Tools > Models… > Import folder.")
    return f"training needs the 'train' extra (pip install 'capdesk[train]'): {exc}"
