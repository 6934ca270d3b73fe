"""What a dry run says: what WOULD be written, never that something is. A document's note that every
picture has a text alternative is true only once the texts are written; in a dry run it says that they
would have one."""

from __future__ import annotations

from capdesk.altfill.documents import ALL_ALT, FEATURE_ADDED
from capdesk.altfill.rows import AltFillResult, FillStatus

WOULD_ALL_ALT = "once written, every picture would have a text alternative (alt text, or marked decorative)"
WOULD_FEATURE = "; the package would then say so (schema:accessibilityFeature alternativeText)"


def as_dry_run(result: AltFillResult) -> AltFillResult:
    """The result with each document's notes said as a dry run's (in place); the result."""
    if result.dry_run:
        for p in result.pages:
            if p.note:
                p.note = p.note.replace(ALL_ALT, WOULD_ALL_ALT).replace(FEATURE_ADDED, WOULD_FEATURE)
    return result


def would_write(result: AltFillResult) -> str:
    """'dry run: 12 pictures would get alt text; nothing was written'."""
    n = sum(1 for r in result.images if r.status == FillStatus.FILLED)
    return f"dry run: {n} picture{'' if n == 1 else 's'} would get alt text; nothing was written"
