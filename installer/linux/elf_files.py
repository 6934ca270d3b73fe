"""Print the ELF files (programs and shared libraries) under a folder, one absolute path a line:
the input dpkg-shlibdeps reads to work out the package's dependencies."""

from __future__ import annotations

import sys
from pathlib import Path


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path.resolve())
    return found


if __name__ == "__main__":
    for p in elf_files(Path(sys.argv[1])):
        print(p)
