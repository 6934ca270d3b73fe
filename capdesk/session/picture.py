"""What the session holds about each picture, and what it tells its listeners (no Qt here).

``PictureStatus`` is where a picture's alt text stands, in words that are shown and spoken
("alt text written by CapDesk", never "none"); ``Message`` is one thing to tell the user, with
where it goes; ``Notifier`` is the plain callback list the session's listeners connect to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from PIL import Image

from capdesk.describe.describer import Described
from capdesk.sidecars.ledger import recorded_review
from capdesk.status import SaidAs


class PictureStatus(Enum):
    """Where a picture's alt text stands; the value is what is shown and spoken."""

    NEW = "no alt text yet"
    DESCRIBING = "captioning"
    DESCRIBED = "described, not saved"
    NEEDS_REVIEW = "described, needs review"
    FAILED = "failed"
    SAVED = "alt text saved"
    WRITTEN = "alt text written by CapDesk"
    WRITTEN_REVIEW = "alt text written by CapDesk, needs review"
    WRITTEN_EMPTY = "empty alt text written by CapDesk, needs review"
    EDITED = "alt text written or edited by a person"


UNSAVED_EDIT = "edited, not saved"


class Kind(Enum):
    STATUS = "status"  # shown only: progress chatter a screen reader user does not need to hear
    RESULT = "result"  # the outcome of something asked for: shown, and given to a screen reader
    DESCRIPTION = "description"  # a picture's description: to the screen reader or the voice, per settings


@dataclass
class Message:
    text: str
    kind: Kind = Kind.RESULT
    to_screen_reader: bool = False
    revisit: bool = False  # a description heard again on returning to a picture
    key: str | None = None  # the picture it is about


@dataclass(eq=False)
class Picture:
    """One picture in the list: a file, or pixels from the clipboard."""

    key: str
    path: Path | None = None
    image: Image.Image | None = None  # a clipboard picture's pixels (it has no file)
    preview: Image.Image | None = None
    described: Described | None = None
    status: PictureStatus = PictureStatus.NEW
    error: str = ""
    source: str = "file"  # file | clipboard | watched
    text: str = ""  # the alt text last written for it when it was not described here (a watched folder)
    draft: str = ""  # the person's unsaved words in the alt text box, kept while they look at other pictures
    # A person's words in its sidecars (read when the list was made, or saved here): what the picture's
    # alt text is, whatever the model says; None when its sidecars hold none of a person's.
    person_text: str | None = None

    @property
    def name(self) -> str:
        return self.path.name if self.path is not None else self.key

    @property
    def label(self) -> str:
        """The list entry: name and status, in words."""
        status = f"{self.status.value}: {self.error}" if self.status is PictureStatus.FAILED else self.status.value
        if self.draft:  # what is on disk is no longer what the person means
            status = f"{UNSAVED_EDIT} (before: {status})"
        return f"{self.name}, {status}"

    @property
    def alt_text(self) -> str:
        if self.person_text is not None:
            return self.person_text
        return self.described.description if self.described is not None else self.text

    @property
    def reason(self) -> str | None:
        return self.described.reason if self.described is not None else None

    @property
    def withheld(self) -> bool:
        """The model's caption was not said as fact: its words are no description of the picture."""
        d = self.described
        if d is None or d.caption is None:
            return True
        if d.said_as is None:  # a description from before the wording rule: the gate alone decides
            return d.in_domain is False
        return d.said_as in (SaidAs.WITHHELD, SaidAs.NONE)


class Notifier:
    """A list of callbacks, called in order with the same arguments."""

    def __init__(self) -> None:
        self._fns: list[Callable[..., Any]] = []

    def connect(self, fn: Callable[..., Any]) -> None:
        self._fns.append(fn)

    def clear(self) -> None:
        self._fns.clear()

    def emit(self, *args: Any) -> None:
        for fn in list(self._fns):
            fn(*args)


def person_words(writer, path: Path) -> str | None:
    """The words a person saved in the picture's sidecars (the first chosen format that holds some), or
    None where there are none to read."""
    from capdesk.sidecars.formats import read_back

    for sidecar in writer.paths(path).values():
        try:
            text = read_back(sidecar)
        except (OSError, ValueError):
            continue
        if text is not None and text.strip():
            return " ".join(text.split())
    return None


def status_on_disk(writer, path: Path) -> PictureStatus | None:
    """What the picture's sidecars say: written by CapDesk (empty, or needing review, as the ledger
    kept it), by a person, or (None) nothing there."""
    st = writer.status(path)
    st = str(getattr(st, "value", st))  # a plain string or a string-valued enum
    if st != "generated":
        return {"edited": PictureStatus.EDITED}.get(st)
    rec = writer.own_record(path)
    if rec is None or recorded_review(rec) is None:
        return PictureStatus.WRITTEN
    return PictureStatus.WRITTEN_EMPTY if not (rec.get("alt_text") or "").strip() else PictureStatus.WRITTEN_REVIEW
