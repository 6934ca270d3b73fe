"""How a page or document is read, whatever its format: from one descriptor opened without waiting
(a FIFO named page.html never holds the run up), only when it is a regular file, never past the size
ceiling of its kind. Every format (``formats``), the review's check of a file's digest and the review
file itself read through here, so that the rules are the same for all of them. (A picture is read by
the rules of ``capdesk.imageio``.)
"""

from __future__ import annotations

import os

from capdesk.safe_files import read_limited

MAX_PAGE_BYTES = 64 * 1024 * 1024  # a page is rarely past a megabyte; this is no page
# A document (EPUB, Office, PDF) is read whole into memory: a book of photographs is a few hundred MB.
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024


def read_bounded(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them. A link there is followed
    unless ``follow`` is False (a page linked into a site is its target). ``capdesk.safe_files.RefusedFile``
    (an OSError whose ``strerror`` says why in words) for a folder, a FIFO, a device or a file past
    ``limit``, even one that grows while it is read; OSError as ``open`` raises it."""
    return read_limited(path, limit, follow=follow)[0]
