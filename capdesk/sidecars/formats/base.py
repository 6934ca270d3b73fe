"""What every sidecar format says of itself: its name, how its file is named beside the picture, how
the dialogs offer it, and how an alt text becomes its bytes and is read back from them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from capdesk.limits import SIDECAR_NAMINGS
from capdesk.safe_files import read_limited

if TYPE_CHECKING:  # the command line reads the registry at every start: only what it needs is loaded
    from capdesk.describe.alttext import AltText

# "ext": photo.jpg.txt (two pictures never share it); "stem": photo.txt.
NAMINGS: tuple[str, ...] = SIDECAR_NAMINGS
# The most a sidecar file is read of: alt text is a few hundred bytes and an XMP packet with every other
# tool's properties a few kilobytes; a larger file where a sidecar goes is kept as it is, never read whole.
SIDECAR_MAX_BYTES = 4 << 20
EXAMPLE_PICTURE = Path("photo.jpg")  # the picture the naming choices are shown with


def read_sidecar(path: Path) -> bytes:
    """A sidecar's bytes, read from one descriptor: a link is not followed (in a shared folder it may
    lead to any file of the user's), a FIFO never waited on, a file over ``SIDECAR_MAX_BYTES`` not read
    (``capdesk.safe_files.RefusedFile``, an OSError, says which)."""
    return read_limited(path, SIDECAR_MAX_BYTES)[0]


@dataclass(frozen=True)
class Request:
    """What one sidecar is to hold: the (cleaned) alt text and the choices that shape it."""

    alt: AltText
    lang: str = "en"
    ext_descr: bool = False  # also the longer description, where the format has a place for it
    mirror_dc: bool = False  # also dc:description, where the format has one
    review: bool | None = None  # whether a person should check it (None: not known)
    reason: str | None = None


class SidecarFormat(ABC):
    """One kind of sidecar. Subclasses set the class attributes and write ``render`` and ``read``."""

    name: ClassVar[str]  # "txt": in settings.json and on the command line (--sidecar txt)
    extension: ClassVar[str]  # what the file name ends in after its dot: photo.txt, photo.jpg.txt
    default_naming: ClassVar[str] = "ext"  # extension naming cannot collide
    naming_notes: ClassVar[Mapping[str, str]] = {}  # why one would choose a naming, said beside its example
    label: ClassVar[str]  # its check box in the dialogs, with the shortcut: "&Text sidecars"
    detail: ClassVar[str]  # what the batch dialog's check box adds in brackets: ".txt"
    action: ClassVar[str]  # the check box's accessible name: "Write text sidecars"
    on_by_default: ClassVar[bool] = False
    # True: an existing file is updated in place and every other thing it holds is kept, so whose it is
    # depends on whose alt text it holds. False: the file is the alt text, replaced whole, and a file
    # CapDesk did not write (or that was edited) is a person's.
    merges: ClassVar[bool] = False

    @property
    def option(self) -> str:
        """The setting, SidecarOptions field and ``--NAME-name`` option that choose its naming."""
        return f"{self.name}_name"

    def path(self, image: Path, naming: str) -> Path:
        """Where the sidecar of ``image`` goes with ``naming`` (``NAMINGS``)."""
        image = Path(image)
        if naming == "ext":
            return image.with_name(f"{image.name}.{self.extension}")
        return image.with_suffix(f".{self.extension}")

    def naming_choices(self) -> list[tuple[str, str, str]]:
        """(naming, the example picture's sidecar name, note) for each naming, its default first."""
        order = [self.default_naming, *(n for n in NAMINGS if n != self.default_naming)]
        return [(n, self.path(EXAMPLE_PICTURE, n).name, self.naming_notes.get(n, "")) for n in order]

    def naming_help(self) -> str:
        """The namings in one line, as ``--help`` says them: "stem: photo.txt (default), ext: photo.jpg.txt"."""
        said = []
        for naming, example, note in self.naming_choices():
            notes = (["default"] if naming == self.default_naming else []) + ([note] if note else [])
            said.append(f"{naming}: {example}" + (f" ({'; '.join(notes)})" if notes else ""))
        return ", ".join(said)

    def owns_file(self, path: Path) -> bool:
        """Whether ``path`` is named as this format's sidecars are."""
        return Path(path).name.endswith(f".{self.extension}")

    @abstractmethod
    def render(self, req: Request, existing: str | None) -> bytes:
        """The file's bytes. ``existing``: the text of the file already there (formats that merge)."""

    @abstractmethod
    def read(self, path: Path) -> str | None:
        """The alt text the file holds, or None when it holds none it can tell; OSError or
        UnicodeDecodeError when it cannot be read at all (``read_sidecar``: a link, a FIFO or a file
        over ``SIDECAR_MAX_BYTES`` is not read)."""

    def check(self, raw: bytes) -> tuple[str | None, str | None]:
        """For a format that merges: (the file's text, None) when it can be updated, (None, why) when it
        is damaged, to be kept aside and written anew."""
        try:
            return raw.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            return None, f"not UTF-8 at byte {exc.start}"
