"""Every status a picture's alt text can have, as enums shared by batch, sidecars, watch and the GUI.

Each enum's values are the exact strings that CSV/JSON reports, ``capdesk caption --json`` and
the tests have always used, and the members are strings themselves: ``Row.status == "failed"``,
``json.dumps`` and ``csv`` all see the old text, so nothing a user parses changes.
"""

from __future__ import annotations

from enum import Enum


class _Text(str, Enum):
    """A string-valued enum whose ``str()`` and f-string form are the value (Python 3.10 too)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class RowStatus(_Text):
    """What a batch (or a watched folder) did for one picture: the report's ``status`` column."""

    CAPTIONED = "captioned"  # described, and its sidecars written
    SKIPPED = "skipped"  # its sidecars were up to date
    KEPT = "kept"  # a person's (or another tool's) sidecars were left as they are
    FAILED = "failed"  # unreadable picture, model failure, or a sidecar that could not be written


class WriteStatus(_Text):
    """What became of one sidecar file in one write."""

    WRITTEN = "written"
    UNCHANGED = "unchanged"  # it already held these exact bytes
    KEPT = "kept"  # not CapDesk's, or edited since: left alone
    FAILED = "failed"


class Ownership(_Text):
    """Whose words a sidecar path holds."""

    ABSENT = "absent"
    OURS = "ours"  # written by CapDesk and unchanged since
    FOREIGN = "foreign"  # a person's or another tool's (or unknown: treated the same, never overwritten)
    BLOCKED = "blocked"  # a folder or other non-file is where the sidecar goes


class SidecarState(_Text):
    """Where a picture's sidecars stand, for the GUI's list and reports."""

    NONE = "none"
    GENERATED = "generated"  # CapDesk's words
    EDITED = "edited"  # a person's words


class SaidAs(_Text):
    """How the model's caption was used in the alt text (``said_as`` in JSON)."""

    FACT = "fact"
    PROBABLY = "probably"
    WITHHELD = "withheld"  # the picture is unlike the model's: the caption is only a guess
    NONE = "none"  # the model gave no caption


class TextStatus(_Text):
    """Text reading (``text_status`` in JSON)."""

    READ = "read"
    NONE = "none"  # read, and nothing found
    SKIPPED = "skipped"
    UNAVAILABLE = "unavailable"  # the OCR extra is not installed


def failure_line(exc: BaseException) -> str:
    """One line for a failure the user sees: the kind and the first line of the message (the kind
    alone when there is no message)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__
