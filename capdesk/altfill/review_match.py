"""Which review row is for which picture of a document as it is now: the row that names the picture's
identity (``picture_ids``), never the row that comes next in the file, so that rows sorted, filtered or
moved in a spreadsheet still each go onto their own picture.

A row is matched by its ``picture_id`` alone, and then held to the rest of what it says of the picture:
its address (``picture``), its place (``location``) and, where the review holds one, the digest of the
picture's bytes. A row that names a picture by an identity whose picture is another, or that shares
its identity with another row, is refused and named; its text goes nowhere. A review from before the
``picture_id`` column is matched as it always was: the same place and address, in order.
"""

from __future__ import annotations

from capdesk.altfill.review_file import Reviewed
from capdesk.altfill.rows import ImageRow


def place_of(row: ImageRow) -> str:
    """Where a person finds a picture, as the review's ``location`` says it (``review.location_of``)."""
    return row.location or f"line {row.line}"


class Matcher:
    """The rows of one document's review marked yes, matched to its pictures one at a time."""

    def __init__(self, chosen: list[Reviewed]) -> None:
        self.chosen = chosen
        self.used: list[Reviewed] = []
        self._by_id: dict[str, list[Reviewed]] = {}
        for r in chosen:
            if r.picture_id:
                self._by_id.setdefault(r.picture_id, []).append(r)
        self._seen: dict[tuple[str, str], int] = {}

    def pick(self, row: ImageRow, digest: str = "") -> tuple[Reviewed | None, str]:
        """(the review row for the picture ``row`` stands for, or None; why its text may not go onto that
        picture, "" when it may). ``digest``: the sha256 of the picture's bytes as the document holds them
        now ("" where the caller checks the picture itself, or it has none)."""
        same = self._by_id.get(row.picture_id) if row.picture_id else None
        if same:
            self.used += same
            return same[0], self._refusal(same, row, digest)
        key = (place_of(row), row.src)  # a review from before identities: the same place and address, in order
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        old = [c for c in self.chosen if not c.picture_id and (c.location, c.picture) == key]
        if n < len(old):
            self.used.append(old[n])
            return old[n], ""
        return None, ""

    @staticmethod
    def _refusal(same: list[Reviewed], row: ImageRow, digest: str) -> str:
        pid = row.picture_id
        if len(same) > 1:
            lines = ", ".join(str(r.line) for r in same)
            return f"lines {lines} of the review all name picture {pid!r}, so none of their texts was written"
        r = same[0]
        if r.picture != row.src or r.location != place_of(row):
            return (f"line {r.line} of the review names picture {pid!r} as {r.picture!r} at {r.location!r}, but "
                    f"that picture is {row.src!r} at {place_of(row)!r}, so its text was not written")
        if digest and r.picture_sha256 and r.picture_sha256 != digest:
            return f"picture changed since the review: {row.src} ({pid})"
        return ""

    def unmatched(self) -> list[Reviewed]:
        """The rows no picture of the document took."""
        return [r for r in self.chosen if not any(u is r for u in self.used)]


def not_found_error(r: Reviewed) -> str:
    """What is said of a row whose picture is not in the document."""
    if r.picture_id:
        return f"no picture {r.picture_id!r} in it (the review's line {r.line}), so its text was not written"
    return "no such picture at this place in it"
