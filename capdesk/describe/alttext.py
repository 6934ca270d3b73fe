"""Alt text from what is known about a picture, following alt-text practice (WCAG 2.2 SC 1.1.1).

The rule, in order (README, "What the alt text says"):

1. The scene caption is said as fact when the picture lies inside the domain of the model that
   wrote it and the model was confident; as "Probably ..." when the model was unsure, or when
   the caption names people and either the model was not sure enough to say so or the object
   tags name an animal the caption does not mention (a dog in the waves captioned "a man on a
   surfboard"). Tags are added to a "Probably" caption whenever they name something it does not.
2. When the caption is withheld (picture unlike every model's pictures, or no caption), the alt
   text says only what else is known about the picture: object tags ("May contain: a cat."),
   the text read in it ('Text: "..."'), or, when neither exists, that it is blank ("A blank
   white image.", "A mostly blank white image."). Otherwise it is empty.
3. The alt text never speaks about the software or the model (WCAG failure F30: text that is
   not an alternative), and never consists of the medium alone ("A photo." is placeholder text
   too). Why a picture needs a person's review goes to ``reason``, never into the alt text; an
   empty alt text is always marked for review, because empty alt marks an image as decorative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD, TRUST_FACT_THRESHOLD, TRUST_PROBABLY_THRESHOLD
from capdesk.status import SaidAs

MAX_CHARS = 150  # screen readers read alt text in one breath; long text belongs elsewhere
_FILLER = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:image|picture|photo(?:graph)?|close[- ]up photo|view)\s+(?:of|showing)\s+",
    re.IGNORECASE,
)

# Words that say a person is in the picture. Used to hedge captions that name people on weak
# evidence (training/studies/people_rate.py measures how often captions name people no human saw). "group"
# is left out (a group of cows), and "couple" counts only when it is not "a couple of" plates.
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


def _singular(w: str) -> str:
    return w[:-1] if w.endswith("s") and len(w) > 3 else w


def tags_add_to(caption: str, tag_names: list[str]) -> bool:
    """Whether the tags name something the caption does not already say."""
    said = {_singular(w) for w in words_of(caption)}
    return any(not any(_singular(w) in said for w in words_of(n)) for n in tag_names)


def word(caption: str | None, confidence: float | None, in_domain: bool | None, tags_sentence: str,
         tag_names: list[str], text: str | None, *, tags_mode: str = "auto", show_guess: bool = False,
         low_confidence: float = DEFAULT_CONFIDENCE_THRESHOLD, people_confidence: float = 0.0, domain: str = "",
         plain_fact: str = "", animal_tags: list[str] | tuple[str, ...] = (), trust: float | None = None,
         typical: bool = True) -> Wording:
    """Apply the rule above. ``tags_sentence`` is 'May contain: ...' or ''; ``animal_tags`` are the
    tag names that name animals; ``plain_fact`` is a fact computed from the pixels ('A blank white
    image.') or ''. ``trust`` (``capdesk.describe.trust``), when the model has it, decides between
    fact, "Probably" and withheld in place of the confidence alone; ``typical`` is False for a picture
    less typical of the model's photos than its fact zone allows (then "Probably" at most)."""
    cap = clean_caption(caption) if caption else ""
    parts: list[str] = []
    reason: str | None = None
    if in_domain is False or not cap:
        said_as = SaidAs.WITHHELD if cap else SaidAs.NONE
        reason = (f"the picture is unlike those the model knows ({domain or 'its training pictures'}), "
                  "so its scene caption was withheld") if cap else "the model gave no caption"
    elif trust is not None and trust < TRUST_PROBABLY_THRESHOLD:
        said_as = SaidAs.WITHHELD
        reason = (f"the caption is more likely than not to name something that is not there (trust {trust:.2f}), "
                  "so it was withheld")
    elif trust is not None and trust < TRUST_FACT_THRESHOLD:
        said_as = SaidAs.PROBABLY
        reason = f"the caption may name something that is not there (trust {trust:.2f})"
    elif (trust is not None and low_confidence != DEFAULT_CONFIDENCE_THRESHOLD and confidence is not None
          and confidence < low_confidence):
        # A threshold the user chose still holds with a trust score: the trust decides, the user may ask for more.
        said_as, reason = SaidAs.PROBABLY, f"the model was unsure (confidence {confidence:.2f})"
    elif trust is not None and not typical:
        said_as = SaidAs.PROBABLY
        reason = ("the picture is less like the model's training photos than those its captions are said "
                  "as fact for, so the caption may be wrong")
    elif trust is None and confidence is not None and confidence < low_confidence:
        said_as, reason = SaidAs.PROBABLY, f"the model was unsure (confidence {confidence:.2f})"
    elif confidence is not None and confidence < people_confidence and names_people(cap):
        said_as = SaidAs.PROBABLY
        reason = (f"the caption names people and the model was not sure enough to say so as fact "
                  f"(confidence {confidence:.2f})")
    elif names_people(cap) and (unsaid := [a for a in animal_tags if tags_add_to(cap, [a])]):
        said_as = SaidAs.PROBABLY
        reason = f"the caption names people but the object tags name an animal it does not mention ({unsaid[0]})"
    else:
        said_as = SaidAs.FACT
    withheld = said_as in (SaidAs.WITHHELD, SaidAs.NONE)
    if said_as is SaidAs.FACT or said_as is SaidAs.PROBABLY:
        parts.append(caption_as_said(cap, said_as))
    if tags_sentence and (tags_mode == "always" or (tags_mode == "auto" and said_as is not SaidAs.FACT and (
            said_as is not SaidAs.PROBABLY or tags_add_to(cap, tag_names)))):
        parts.append(tags_sentence)
    if withheld and show_guess and cap:
        parts.append(f"Guess: {cap}")
    if text:
        parts.append(quoted_text(text))
    if withheld and not parts and plain_fact:
        parts.append(plain_fact)
    alt = " ".join(p for p in parts if p)
    if not alt:
        reason = f"{reason}; nothing else was recognised, so the alt text is empty"
    return Wording(alt, said_as, said_as is not SaidAs.FACT, reason)


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
