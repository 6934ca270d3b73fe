"""What every kind of file alt-fill writes into says of itself and does: which files it takes, how it
reads one and finds its pictures (each with its identity and the text around it), how a picture is
given its text, and how the changed file is checked to read back and written.

A fill goes through these steps for every file alike (``capdesk.altfill.fill``): ``scan``, ``plan``
(rows reported, pictures to describe), ``fill`` once each picture is described, ``write`` (which checks
the new bytes as ``verify`` does before anything is replaced). A review round goes ``scan``,
``fill_reviewed``, ``write``; ``pictures`` says what a file holds now.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from capdesk.altfill.options import AltFillOptions, Writing
from capdesk.altfill.places import Roots
from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.rows import AltFillResult, ImageRow
from capdesk.describe.describer import Described
from capdesk.imageio import FoundPath

if TYPE_CHECKING:  # the store is the documents' (PDFs use it too); planning only carries it
    from capdesk.altfill.documents import PictureStore


class Seen(NamedTuple):
    """One picture a file holds now: its identity (what a review row names it by), where a person finds
    it, the address or name it is shown by, its alt text ("" for none, or a file name standing for one)
    and the text around it."""

    picture_id: str
    location: str
    src: str
    alt: str
    context: str


class Wanted(NamedTuple):
    """A picture to be given a text once described: the format's own handle on it, its report row, and
    the key of the file it is described from."""

    item: Any
    row: ImageRow
    key: str


@dataclass
class Planning:
    """What planning a run's files shares: the options, the folders pictures may come from, the store of
    pictures copied out of documents, the report, and the files to describe (by key)."""

    options: AltFillOptions
    roots: Roots
    store: PictureStore
    result: AltFillResult
    files: dict[str, Path | FoundPath]


class DocumentFormat(ABC):
    """One family of files. Subclasses set the class attributes and write the steps."""

    name: ClassVar[str]  # "page", "zip", "pdf"
    label: ClassVar[str]  # what a person calls them: "web page (HTML, Markdown)"
    suffixes: ClassVar[Mapping[str, str]]  # ".html" -> "html": the file names it takes, and the kind each is
    # The order changed files are written and their diffs said in: pages first, as they always were.
    write_order: ClassVar[int] = 1
    previews: ClassVar[bool] = True  # whether its pictures are kept, small, for an HTML report

    def takes(self, path: str | os.PathLike[str]) -> bool:
        return Path(path).suffix.lower() in self.suffixes

    def kind(self, path: str | os.PathLike[str]) -> str:
        """What the report calls a file of it (``PageRow.kind``)."""
        return self.suffixes[Path(path).suffix.lower()]

    @abstractmethod
    def max_bytes(self) -> int:
        """The most bytes one of its files is read of (``file_checks``)."""

    @abstractmethod
    def scan(self, path: Path, options: AltFillOptions | None = None,
             cancelled: Callable[[], bool] | None = None) -> Any:
        """The file read once and its pictures found; one that cannot be read has its row's error.
        ``ScanCancelled`` when ``cancelled()`` turns true during a long search."""

    @abstractmethod
    def pictures(self, doc: Any) -> list[Seen]:
        """Each picture the scanned file holds, in its order."""

    @abstractmethod
    def plan(self, doc: Any, planning: Planning, root: Path) -> list[Wanted]:
        """Its rows added to the report, its pictures to describe to ``planning.files``; the pictures to
        give a text once described. ``root`` is the folder a page's addresses start from."""

    @abstractmethod
    def fill(self, doc: Any, wanted: Wanted, described: Described | None, write: str) -> None:
        """The picture given the text ``write`` lets in (or its row says why not)."""

    @abstractmethod
    def fill_reviewed(self, doc: Any, chosen: list[Reviewed], result: AltFillResult) -> None:
        """Each picture given the text its review row marks yes, where it may go."""

    @abstractmethod
    def verify(self, doc: Any, data: bytes) -> str:
        """Why ``data``, the file as it would be written, does not read back as the file with only its alt
        text changed; "" when it does."""

    @abstractmethod
    def write(self, doc: Any, result: AltFillResult, writing: Writing) -> None:
        """The file written with the texts given (nothing when none was), once ``verify`` passes; its row
        and its pictures' rows say what came of it."""
