"""Lists of pictures given in a file (``capdesk batch --files-from``), and the folder a mirror
tree of sidecars (``--out``) is laid out from.

A list is what ``find`` prints: one path per line, or NUL-separated (``find -print0``), so that
any file name, a newline in it included, can be listed. Names are read as bytes, so names that
are not UTF-8 survive. Relative paths are taken from the current folder, as if typed on the
command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

# A list names pictures, not their contents: a list bigger than this is a wrong file given.
MAX_LIST_BYTES = 1 << 30


class PathListError(Exception):
    """A list that cannot be used; ``str()`` names the file and the reason in one line."""


def read_path_list(source: str) -> list[str]:
    """The paths in the list file ``source`` ('-': standard input), in order, blank lines left out."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_LIST_BYTES + 1)
        else:
            with open(source, "rb") as fh:
                data = fh.read(MAX_LIST_BYTES + 1)
    except OSError as exc:
        raise PathListError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_LIST_BYTES:
        raise PathListError(f"{source}: over {MAX_LIST_BYTES >> 20} MiB; is it really a list of paths?")
    if b"\0" in data:
        parts = data.split(b"\0")
    else:
        parts = [line.removesuffix(b"\r") for line in data.split(b"\n")]
    return [os.fsdecode(p) for p in parts if p]


def mirror_root(paths: Iterable[str | os.PathLike[str]]) -> Path:
    """The deepest folder holding every input: each folder named, and the folder of each file named.

    ``batch /archive/2019 /archive/2020 --out M`` mirrors into M/2019/... and M/2020/...; one folder
    alone (``batch /archive/2019 --out M``) mirrors its contents into M itself."""
    folders = []
    for p in paths:
        a = Path(os.path.abspath(p))
        folders.append(str(a if a.is_dir() else a.parent))
    if not folders:
        raise ValueError("no inputs to mirror")
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:  # paths on different drives (Windows): nothing holds them all
        raise ValueError("the inputs share no folder, so they cannot be mirrored into one tree") from None
