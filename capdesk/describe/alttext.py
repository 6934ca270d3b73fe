"""The words of alt text that every part of CapDesk shares: the ``AltText`` a write puts in a picture's
sidecars, a caption cleaned for alt-text practice (WCAG 2.2 SC 1.1.1: no "a picture of", one breath
long), the words that say a person is there, and a caption in the words its standing allows. What may
be said is decided by ``capdesk.describe.policy``; the alt text is written by
``capdesk.describe.composer`` (README, "What the alt text says").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capdesk.status import SaidAs

MAX_CHARS = 150  # screen readers read alt text in one breath; long text belongs elsewhere
_FILLER = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:image|picture|photo(?:graph)?|close[- ]up photo|view)\s+(?:of|showing)\s+",
    re.IGNORECASE,
)

# Words that say a person is in the picture (the "person" category of ``capdesk.describe.objects``
# is built from them). "group" is left out (a group of cows), and "couple" counts only when it is not
# "a couple of" plates.
PEOPLE_WORDS = frozenset({
    "man", "men", "woman", "women", "person", "persons", "people", "boy", "boys", "girl", "girls", "child",
    "children", "kid", "kids", "baby", "babies", "toddler", "toddlers", "lady", "ladies", "guy", "guys",
    "gentleman", "gentlemen", "player", "players", "crowd", "family", "teenager", "teenagers", "teen",
    "teens", "skier", "skiers", "surfer", "surfers", "skateboarder", "skateboarders", "snowboarder",
    "snowboarders", "rider", "riders", "biker", "bikers", "cyclist", "cyclists", "worker", "workers", "team",
    "adult", "adults", "someone", "somebody", "spectators", "audience", "policeman", "officer", "chef",
    "tourist", "tourists", "student", "students", "athlete", "athletes", "dancer", "dancers", "batter",
    "catcher", "pitcher", "umpire", "climber", "climbers", "hiker", "hikers", "bicyclist", "bicyclists",
    "motorcyclist", "motorcyclists", "runner", "runners", "racer", "racers", "passenger", "passengers",
    "owner", "owners", "driver", "drivers", "skater", "skaters", "wrestler", "wrestlers", "pedestrian",
    "pedestrians", "photographer", "kayaker", "kayakers", "swimmer", "swimmers", "onlookers", "mother",
    "father", "daughter", "son", "brother", "sister", "human", "humans", "infant", "officers", "policemen",
    "cheerleader", "cheerleaders", "musician", "musicians", "performer", "performers", "vendor", "diver",
    "fisherman", "fishermen", "jogger", "singer", "guitarist", "drummer", "customers", "members",
})


def clean_caption(text: str) -> str:
    """'A picture of a cat on a sofa' -> 'A cat on a sofa.'"""
    t = " ".join(text.split()).strip().rstrip(".")
    t = _FILLER.sub("", t)
    if not t:
        return ""
    if len(t) > MAX_CHARS:
        t = t[:MAX_CHARS].rsplit(" ", 1)[0]
    return t[0].upper() + t[1:] + "."


def words_of(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def names_people(text: str) -> bool:
    """True when a caption says a person is there ("a man", "two children", "a group of people")."""
    w = words_of(text)
    return any(t in PEOPLE_WORDS or (t == "couple" and (i + 1 == len(w) or w[i + 1] != "of"))
               for i, t in enumerate(w))


@dataclass
class AltText:
    """What one write puts in a picture's sidecars (and the ledger remembers)."""

    text: str  # the alt text
    source: str = "machine"  # "machine" or "human"
    model: str = ""
    confidence: float | None = None
    extended: str = ""  # the longer description (IPTC ExtDescrAccessibility), optional


@dataclass
class Wording:
    """The alt text and how it came about."""

    text: str  # about the picture only; may be empty
    said_as: SaidAs  # how the caption was used: fact | probably | withheld | none (no caption)
    review: bool  # a person should check (or write) the alt text
    reason: str | None  # why, in one line; never part of the alt text


def quoted_text(text: str) -> str:
    return f'Text: "{text}"'


def caption_as_said(cap: str, said_as: SaidAs) -> str:
    """A cleaned caption in the words its standing allows: as fact, as 'Probably ...', or as a
    guess (a withheld caption is only ever said marked as one, and never in the alt text)."""
    if not cap:
        return ""
    if said_as is SaidAs.FACT:
        return cap
    if said_as is SaidAs.PROBABLY:
        return "Probably " + cap[0].lower() + cap[1:]
    return f"A guess, for a picture unlike the model's training photos: {cap[0].lower() + cap[1:]}"
