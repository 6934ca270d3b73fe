"""Hard-link identical files in a folder (the bundled models share one encoder.onnx).

dpkg-deb stores a hard link once and dpkg recreates it, so the package and the installed app
carry each duplicate file once. Usage: ``python dedupe.py FOLDER``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

MIN_BYTES = 1 << 20  # small duplicates are not worth the link


def dedupe(folder: Path) -> int:
    """Replace duplicates of files over 1 MiB by hard links; returns the bytes saved."""
    by_key: dict[tuple[int, str], Path] = {}
    saved = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        size = path.stat().st_size
        if size < MIN_BYTES:
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        first = by_key.setdefault((size, digest), path)
        if first is path or os.path.samefile(first, path):
            continue
        tmp = path.with_name(path.name + ".link")
        os.link(first, tmp)
        os.replace(tmp, path)
        saved += size
    return saved


if __name__ == "__main__":
    saved = dedupe(Path(sys.argv[1]))
    print(f"dedupe: {saved / 2**20:.1f} MiB of identical files hard-linked")
