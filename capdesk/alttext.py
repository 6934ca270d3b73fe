"""Alt text from a caption, following alt-text practice: say what is there, briefly, without
"image of", and say when the model was unsure."""

from __future__ import annotations

import re

MAX_CHARS = 150  # screen readers read alt text in one breath; long text belongs elsewhere
_FILLER = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:image|picture|photo(?:graph)?|close[- ]up photo|view)\s+(?:of|showing)\s+",
    re.IGNORECASE,
)


def clean_caption(text: str) -> str:
    """'A picture of a cat on a sofa' -> 'A cat on a sofa.'"""
    t = " ".join(text.split()).strip().rstrip(".")
    t = _FILLER.sub("", t)
    if not t:
        return ""
    if len(t) > MAX_CHARS:
        t = t[:MAX_CHARS].rsplit(" ", 1)[0]
    return t[0].upper() + t[1:] + "."


def needs_review(confidence: float | None, threshold: float) -> bool:
    return confidence is None or confidence < threshold
