"""The extended description (IPTC ``ExtDescrAccessibility``) of a caption on its own, for callers that
hold only a caption and its standing; ``capdesk.describe.composer.long_description`` writes it, as it
writes every description.

It says what the model said in the same honest words as the alt text ("Probably ...", or
"A guess, for a picture unlike the model's training photos: ..." where the alt text withholds
the caption), the object tags with how likely each is, the text read, and plain facts about
the pixels.
"""

from __future__ import annotations

from capdesk.describe.alttext import clean_caption
from capdesk.describe.composer import long_description
from capdesk.describe.pixelfacts import PictureFacts
from capdesk.describe.policy import Decision
from capdesk.status import SaidAs


def extended_description(caption: str | None, said_as: SaidAs | str | None, tags: list[tuple[str, float]],
                         text: str | None, facts: PictureFacts | None) -> str:
    cap = clean_caption(caption) if caption else ""
    standing = SaidAs(said_as) if said_as is not None else SaidAs.NONE
    said = standing in (SaidAs.FACT, SaidAs.PROBABLY)
    d = Decision(standing, cap if said else "", "" if said else cap, text=text)
    return long_description(d, tags, [], facts)
