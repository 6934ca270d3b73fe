"""Which pictures a page may have described: the local files its addresses name, and only those
inside the folders the user gave.

A page is someone else's text as much as the user's: ``<img src="../../private/shot.png">``, an
absolute path, a ``file:`` URL or a link in the site pointing out of it would otherwise have a
picture anywhere on the disk described, and its words (or the text read in it) published in the
page. A picture whose real path (links resolved) lies outside every folder given (the folders
named, the folder of each page named, and each ``--allow-root``) is left alone and listed as
skipped, with one reason whether or not such a file exists: the report never tells what is on the
disk outside the site.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlsplit

REMOTE = "a remote image: skipped, since nothing is fetched"
OUTSIDE = ("outside the folders given: skipped, since CapDesk describes no picture outside them "
           "(--allow-root DIR adds a folder)")


class Roots:
    """The folders pictures may come from: as given, and by their real paths."""

    def __init__(self, folders: Iterable[str | os.PathLike[str]] = ()) -> None:
        self.given: list[str] = []
        self.real: list[str] = []
        for f in folders:
            self.add(f)

    def add(self, folder: str | os.PathLike[str]) -> None:
        for kept, p in ((self.given, os.path.abspath(folder)), (self.real, os.path.realpath(folder))):
            if p not in kept:
                kept.append(p)

    def allows(self, path: str | os.PathLike[str]) -> bool:
        """Whether a picture at ``path`` may be read: inside the folders by its text (``..`` taken
        away, nothing looked up, so nothing outside is ever looked at), and still inside once every
        link on the way is resolved."""
        return self.holds_as_written(path) and self.holds(path)

    def holds(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path``, every link on the way resolved, lies in one of the folders."""
        return any(_under(os.path.realpath(path), r) for r in self.real)

    def holds_as_written(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` lies in one of the folders by its text alone (nothing is looked up)."""
        p = os.path.abspath(path)
        return any(_under(p, r) for r in self.given + self.real)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resolve_src(src: str, page: Path, root: Path, roots: Roots | None = None) -> tuple[Path | None, str | None]:
    """The local file an image address names, or (None, why it is not one). Whether that file may
    be read is ``Roots.holds``'s question, asked by the caller."""
    s = src.strip()
    if not s:
        return None, "no image address (src)"
    parts = urlsplit(s)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https") or (not scheme and s.startswith("//")):
        return None, REMOTE
    if scheme == "data":
        return None, "an image inside the page (data: URL): skipped"
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            return None, f"a file on another machine ({parts.netloc}): skipped"
        return Path(os.fsdecode(unquote_to_bytes(parts.path))), None
    if scheme:
        return None, f"not a local file ({scheme}:): skipped"
    name = os.fsdecode(unquote_to_bytes(parts.path))
    if not name:
        return None, "no file name in the address"
    if name.startswith("/"):
        # From the site's root, as a web server reads it; an absolute path into one of the folders
        # given is read as written. Whether a path outside them exists is never looked at.
        in_site = root / name.lstrip("/")
        if not os.path.lexists(in_site) and (roots or Roots([root])).holds_as_written(name):
            return Path(name), None
        return in_site, None
    return page.parent / name, None
