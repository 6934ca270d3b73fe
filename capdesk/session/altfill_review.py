"""The window's review of alt text before it is written, Qt-free: a dry pass (``ReviewPassJob``) proposes a
text for each picture; a person accepts, edits or skips each (a ``Choice``); ``WriteAcceptedJob`` then
writes exactly the accepted texts by the road of ``capdesk alt-fill --review-in``: a review file with
``write=yes`` on the accepted rows, applied by ``apply_reviewed``. So the window keeps the review file's
promises: only alt text changes, the originals go to the backup folder, and a file changed since the
dry pass is left as it is and named."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from capdesk.altfill.documents import FEATURE_ADDED
from capdesk.altfill.review import CHANGED, location_of, write_review
from capdesk.altfill.rows import HELD, AltFillResult, FillStatus, ImageRow
from capdesk.session import messages
from capdesk.session.altfill_job import AltFillJob
from capdesk.session.core import Session
from capdesk.session.jobs import FolderJob

ACCEPTED, SKIPPED, UNDECIDED = "accepted", "skipped", "to review"
# What the review list shows: a text written or held back, or none found (a person may write one).
LISTED = (FillStatus.FILLED, FillStatus.REVIEW, FillStatus.UNDESCRIBED)


@dataclasses.dataclass
class Choice:
    """One picture in the review list: the text to write (proposed, or as the person edited it) and
    whether it is written."""

    row: ImageRow
    text: str
    state: str = UNDECIDED

    @property
    def proposed(self) -> str:
        return self.row.proposed or self.row.alt_text

    @property
    def edited(self) -> bool:
        return self.text != self.proposed

    @property
    def picture(self) -> str:
        """The picture's file name as a person reads it (a page's address decoded)."""
        src = unquote(self.row.src or "")
        return src.rstrip("/").rsplit("/", 1)[-1] or src or "picture"

    @property
    def where(self) -> str:
        return f"{Path(self.row.page).name}, {location_of(self.row)}"

    @property
    def state_said(self) -> str:
        return f"{self.state}, edited" if self.edited else self.state

    @property
    def why(self) -> str:
        """Why a person should look, in the window's words (not the command line's)."""
        r = self.row
        held = f"not written unless you accept it: {HELD[r.wording]}" if r.status == FillStatus.REVIEW \
            and r.wording in HELD else ""
        reason = r.reason if r.needs_review else ""
        said = "; ".join(x for x in (held, reason) if x)
        return said or "said as fact"


def review_choices(result: AltFillResult) -> list[Choice]:
    """Every picture the dry pass proposed a text for (or found nothing to say about), accepted when the
    chosen Write setting would write it, to review otherwise. An untagged PDF's pictures are not among them:
    nothing can be written there (the report lists them with their texts to paste)."""
    return [Choice(r, r.proposed or r.alt_text, ACCEPTED if r.status == FillStatus.FILLED else UNDECIDED)
            for r in result.images if r.status in LISTED and not r.listed_only]


def decided(result: AltFillResult, choices: list[Choice]) -> AltFillResult:
    """The dry pass's result as the person decided it: an accepted picture as filled with its text (a review
    file's ``write=yes``), every other one as held back (``write=no``). The pages' digests are the dry pass's."""
    by_row = {id(c.row): c for c in choices}

    def one(r: ImageRow) -> ImageRow:
        c = by_row.get(id(r))
        if c is None:
            return r
        if c.state == ACCEPTED and c.text.strip():
            return dataclasses.replace(r, status=FillStatus.FILLED, alt_text=c.text, proposed=c.text)
        return dataclasses.replace(r, status=FillStatus.REVIEW, alt_text="", proposed=c.text)

    # The dry pass's folders too: the review written from this writes only inside them.
    return AltFillResult(pages=result.pages, images=[one(r) for r in result.images], roots=result.roots,
                         picture_roots=result.picture_roots)


def review_ready(choices: list[Choice]) -> str:
    accepted = sum(1 for c in choices if c.state == ACCEPTED)
    return (f"Alt text to review: {messages.plural(len(choices), 'picture')}, {accepted} accepted as proposed. "
            "Nothing is written until you choose Write accepted")


class ReviewPassJob(AltFillJob):
    """The dry pass before the review list: the chosen Write setting decides what starts accepted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "dry_run": True})
        self.choices: list[Choice] = []

    def started_text(self) -> str:
        return f"Describing the pictures in {self.folder} for your review; nothing is written yet"

    def _outcome(self) -> str:
        from capdesk.altfill.pdf_untagged import untagged_said

        self.choices = review_choices(self.result)
        if self.result.interrupted or not self.choices:
            return messages.altfill_outcome(messages.altfill_summary(self.result) + ", nothing to review"
                                            + untagged_said(self.result), self.result.interrupted, True, self.report)
        return review_ready(self.choices) + untagged_said(self.result)


def left_as_they_were(result: AltFillResult) -> list[str]:
    """The files not written because they changed since the dry pass."""
    return [Path(p.page).name for p in result.pages if p.status == "failed" and p.error == CHANGED]


def books_marked(result: AltFillResult) -> str:
    """What became of the books' accessibility details, asked to be marked: which now say that every picture
    has a text alternative, and which do not, since some picture still has none ("" for no book)."""
    books = [p for p in result.pages if p.kind == "epub" and p.status != "failed"]
    marked = [Path(p.page).name for p in books if p.note and FEATURE_ADDED in p.note]
    unmarked = [Path(p.page).name for p in books if not (p.note and FEATURE_ADDED in p.note)]
    said = ""
    if marked:
        said += (f"; {messages.join_names(marked)} now {'says' if len(marked) == 1 else 'say'} in "
                 f"{'its' if len(marked) == 1 else 'their'} accessibility details that every picture has a text "
                 "alternative")
    if unmarked:
        said += (f"; {messages.join_names(unmarked)} not marked as described in "
                 f"{'its' if len(unmarked) == 1 else 'their'} accessibility details: not every picture has alt text")
    return said


class WriteAcceptedJob(FolderJob):
    """The accepted texts written, through a review file made for the purpose and removed afterwards."""

    STOPPING = "Writing the accepted alt text; it stops when it is written…"

    def __init__(self, session: Session, result: AltFillResult, choices: list[Choice], report: str = "",
                 on_finished: Callable[[Any, str], None] | None = None, epub_metadata: bool = False) -> None:
        super().__init__(session, Path(result.pages[0].page) if result.pages else Path("."), report, None,
                         on_finished)
        self.epub_metadata = epub_metadata  # books whose every picture then has a text alternative say so
        self.decided = decided(result, choices)
        self.accepted = sum(1 for r in self.decided.images if r.status == FillStatus.FILLED)

    def can_start(self) -> bool:
        return self.accepted > 0

    def started_text(self) -> str:
        return f"Writing {messages.plural(self.accepted, 'accepted alt text')}"

    def _milestone(self, done: int, total: int, said_at: int) -> str | None:
        return None

    def _outcome(self) -> str:
        summary = messages.altfill_summary(self.result)
        left = left_as_they_were(self.result)
        if left:
            summary += f"; left as {'it was' if len(left) == 1 else 'they were'}, changed since the review: " \
                       + messages.join_names(left)
        if self.epub_metadata:
            summary += books_marked(self.result)
        return messages.altfill_outcome(summary, False, False, self.report)

    def _failed(self, error: str) -> str:
        return messages.altfill_failed(error)

    def _work(self) -> tuple[Any, str]:
        from capdesk.altfill.report import write_report
        from capdesk.session.altfill_run import apply_reviewed

        with tempfile.TemporaryDirectory(prefix="capdesk-review-") as tmp:
            review = Path(tmp) / "review.csv"
            write_review(self.decided, review)
            result, _backups = apply_reviewed(review, epub_metadata=self.epub_metadata)
        if self.report:
            Path(self.report).parent.mkdir(parents=True, exist_ok=True)
            write_report(result, Path(self.report))
        return result, ""
