"""Command-line options made from settings dataclasses (``capdesk train fit``, ``capdesk train scst``)."""

from __future__ import annotations

import argparse
import dataclasses


def dataclass_options(p: argparse.ArgumentParser, cls: type, skip: tuple[str, ...] = (),
                      required: tuple[str, ...] = ()) -> None:
    """One ``--option`` per field of a settings dataclass, its default and type from the field."""
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        if isinstance(default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            p.add_argument(flag, type=type(default), default=default, required=f.name in required)
