"""Markdown gallery lines: how long alt-fill takes to find the images of one line of N images.

The search is linear (each image is parsed on the text up to the next one); this prints the
seconds for growing N so that a return of the quadratic search shows at once.

    python bench/altfill_md_line.py [N ...]      (default: 1000 2000 4000 8000)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from capdesk.altfill.md_images import find_markdown_images  # noqa: E402


def main(sizes: list[int]) -> None:
    for n in sizes:
        line = " ".join(f"![](photos/p{i:05d}.jpg)" for i in range(n)) + "\n"
        t0 = time.perf_counter()
        found = find_markdown_images(line)
        took = time.perf_counter() - t0
        placed = sum(f.at >= 0 for f in found)
        print(f"{n:>6} images on one line: {took:6.2f} s ({placed} placed, {took / n * 1e6:.0f} us each)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 2000, 4000, 8000])
