"""The extended description (IPTC ``ExtDescrAccessibility``): everything CapDesk knows about a
picture, in plain sentences, for the reader who wants more than the alt text's one breath.

It says what the model said in the same honest words as the alt text ("Probably ...", or
"A guess, for a picture unlike the model's training photos: ..." where the alt text withholds
the caption), the object tags with how likely each is, the text read, and plain facts about
the pixels (size, orientation, main colours; for a file of several pages, how many there are and
that the first is the one described). Unlike the alt text it may name the model, but
only where that says how far to trust its words.
"""

from __future__ import annotations

from capdesk.describe.alttext import caption_as_said, clean_caption, quoted_text
from capdesk.describe.pixelfacts import PictureFacts
from capdesk.status import SaidAs


def extended_description(caption: str | None, said_as: SaidAs | str | None, tags: list[tuple[str, float]],
                         text: str | None, facts: PictureFacts | None) -> str:
    parts = []
    cap = clean_caption(caption) if caption else ""
    if cap and said_as is not None and said_as != SaidAs.NONE:
        parts.append(caption_as_said(cap, SaidAs(said_as)))
    if tags:
        parts.append("Object tags: " + ", ".join(f"{name} ({round(p * 100)}% likely)" for name, p in tags) + ".")
    if text:
        parts.append(quoted_text(text).replace("Text:", "Text read in the picture:", 1))
    if facts is not None:
        parts.append(facts.sentence())
        if facts.pages > 1:
            parts.append(f"The file has {facts.pages} pages; this describes the first.")
    return " ".join(parts)
