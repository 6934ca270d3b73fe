"""The part of a guessed caption the alt text says: its subject and where it is, not what it does.

Read by eye (``training/studies/val_by_eye.csv``, 500 val alt texts, one rubric), the caption model is
surest of who is there and where, and least sure of what they do and what they wear: of the 146 captions
said as "Probably ...", 71 were wrong in their main thing and 18 in a detail, and the part most wrong was
what they do in 34, clothing in 7, a thing held in 4, against the place or scene in 8. On ordinary pictures
from outside Flickr and COCO it is the same: "Probably a person with glasses is looking at the camera." (no
glasses, he looks away), "Probably two people in a black jacket are holding a cell phone." (no phone). A
guess that says only its subject and place ("Probably a person.", "Probably a black dog in a wooded area.")
is a guess a listener can trust; the whole sentence goes to the long description, marked "Perhaps".

``core`` takes the words before the caption's first verb, preposition or clause (its subject: "a brown and
white dog", "a group of people", "a black dog and a brown dog"), without the clothes said in them, then the
first place the sentence puts it in ("on the beach"; "through the grass" -> "in the grass"); what the subject
does with a thing the detector sees is kept, read from the caption's named things
(``capdesk.describe.sentence``).
"""

from __future__ import annotations

from capdesk.describe.captionfix import BARE_VERBS, CLOTHES, COLOURS, LONG_PREPOSITIONS, base_verb
from capdesk.describe.mending import PLACES
from capdesk.describe.sentence import parse

# Where a caption puts its subject: the concept head's places and the settings the captions say most.
PLACE_NOUNS = PLACES | frozenset({
    "beach", "woods", "meadow", "pond", "hillside", "mountains", "hills", "rocks", "waves", "surf", "leaves",
    "dirt", "fields", "crowd", "stairs", "steps", "pavement", "parking", "lot", "living", "bedroom", "bed",
    "couch", "sofa", "table", "bench", "boat", "area", "yard", "backyard", "woodland", "jungle", "countryside",
    "lake", "stream", "creek", "puddle", "fountain", "clouds", "sunset",
    "arena", "ring", "pitch", "course", "skatepark", "hallway", "hall", "church", "station", "zoo", "farm",
    "pasture", "barn", "tracks", "runway", "harbor", "harbour", "pier", "coast", "cliffs", "canyon", "valley",
    "shoreline", "sidewalks", "streets", "roads", "buildings", "trees", "flowers", "plants", "bushes",
    "ground", "rug", "carpet", "blanket", "chair", "desk", "shelf", "counter", "plate", "tray", "pillow",
})
# Static places are said as the caption says them; motion through a place is said as being in it.
_STATIC = ("on", "in", "at", "near", "by", "under", "beside", "inside", "outside", "behind")
_MOVING = {"through": "in", "across": "on", "along": "along", "into": "in", "down": "on", "up": "on",
           "over": "over", "around": "in", "toward": "near", "towards": "near", "onto": "on", "out": "in"}
# A surface is stood "on", a thing stands "in" the rest ("running down a street" -> "on a street").
_ON = frozenset({"beach", "street", "road", "sidewalk", "path", "trail", "track", "bridge", "dock", "platform",
                 "stage", "rock", "rocks", "hill", "hillside", "mountain", "slope", "shore", "floor", "court", "ramp",
                 "ice", "lawn", "pavement", "pier", "steps", "stairs", "bench", "couch", "sofa", "bed", "table",
                 "boat", "runway", "tracks"})
_DETERMINERS = frozenset({"a", "an", "the", "some", "two", "three", "four", "five", "several", "many", "his",
                          "her", "their", "its", "this"})
# What ends the subject's phrase besides a verb or a preposition.
_ENDS_SUBJECT = frozenset({"is", "are", "that", "who", "which", "with", "while", "as", "wearing", "for", "to",
                           "from"})
# Words in "-ing" that are things, not what someone does.
_ING_NOUNS = frozenset({"building", "buildings", "clothing", "ceiling", "painting", "wedding", "king", "ring",
                        "thing", "things", "string", "evening", "morning", "swing", "wing", "spring", "sling",
                        "icing", "pudding", "something", "nothing", "railing", "parking", "ping", "sibling",
                        "siblings", "duckling", "ducklings", "darling", "stocking", "stockings"})
_NUMBERS = frozenset({"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"})
_DOUBLED = frozenset({"run", "sit", "swim", "dig", "hit", "get", "put", "cut", "stop", "shop", "jog", "skip", "grab"})
_NIGHT = ("at", "night")  # when, not what they do: kept ("a boat in the water at night")
# Words between the preposition and its place noun ("on a grassy hill", "in the tall grass").
_PLACE_REACH = 4
# What may follow a place noun: "on a dirt bike" is no place.
_AFTER_PLACE = frozenset({"and", "with", "while", "is", "are", "as", "that", "of", "in", "on", "at", "near", "by",
                          "under", "behind", "beside", "next", "during", "for", "to", "from", "through"})
# Where these come before a place, the place is an object's ("a dog with a ball in its mouth", "holding a
# drink in his hand"), not the subject's.
_NOT_THE_SUBJECTS = frozenset({"mouth", "hand", "hands", "arms", "lap"})


def core(words: list[str], held: frozenset[str] = frozenset(), counted: bool = False) -> list[str] | None:
    """The guessed caption's subject and place ("a black dog in a wooded area"), or None where it has no
    words before its first verb or preposition. What the subject does is kept where it is done with a thing
    the detector sees (``held``: its categories): "a child riding a bicycle or motorcycle on the street". Its
    number goes unless the detector confirmed it (``counted``): "two people on the beach" -> "people on the
    beach" (on val, a third of the numbers said as guesses were wrong)."""
    if words[:4] == ["a", "close", "up", "of"]:
        words = words[4:]  # "a close up of a pizza": a pizza
    if words[:1] in (["there"], ["it"], ["this"]) and words[1:2] in (["is"], ["are"]):
        words = words[2:]  # "there is a yellow sign"; the aerial model's "it is a piece of green meadow"
    subject = _subject(words)
    if not counted and len(subject) > 1 and subject[0] in _NUMBERS:
        subject = subject[1:]
    if not subject or not any(w not in _DETERMINERS and w != "and" and not _adjective(w) for w in subject):
        return None
    night = ["at", "night"] if _NIGHT in zip(words, words[1:]) else []
    done, end = doing(words, len(subject), held)
    return subject + done + place(words, end) + night


def doing(words: list[str], after: int, held: frozenset[str]) -> tuple[list[str], int]:
    """'riding a bicycle or motorcycle' ('with two buses'), and where it ends, from the verb (or "with") after
    word ``after`` when its object is a thing the detector sees (in ``held``); ([], ``after``) otherwise."""
    k = after + 1 if words[after:after + 1] in (["is"], ["are"]) else after
    if not held or k >= len(words):
        return [], after
    w = words[k]
    base = base_verb(w)
    if not (w.endswith("ing") and w not in _ING_NOUNS) and base is None and w != "with":
        return [], after
    end = k + 1
    while end < len(words) and words[end] not in _STATIC and words[end] not in _MOVING \
            and words[end] not in _ENDS_SUBJECT and _long_at(words, end) is None:
        end += 1
    named = {m.category for m in parse(words).mentions if k < m.start and m.end <= end}
    if not named & held:
        return [], after
    verb = w if base is None else _ing(base)  # "with" stays: "a city street with buses"
    return [verb, *words[k + 1:end]], end


def _ing(base: str) -> str:
    """'run' -> 'running', 'ride' -> 'riding', 'lie' -> 'lying'."""
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and base not in ("see", "be"):
        return base[:-1] + "ing"
    if base in _DOUBLED:
        return base + base[-1] + "ing"
    return base + "ing"


def _subject(words: list[str]) -> list[str]:
    """The words that open the sentence up to its first verb, preposition or clause: "a brown and white dog",
    "two baseball players", "a black dog and a brown dog" (two things stay two), "a group of people"."""
    for k, w in enumerate(words):
        if w == "and" and k + 1 < len(words) and words[k + 1] in _DETERMINERS:
            continue
        if (w in _ENDS_SUBJECT or w in _STATIC or w in _MOVING or (w.endswith("ing") and w not in _ING_NOUNS)
                or (k > 0 and words[k - 1] not in _DETERMINERS and not _adjective(words[k - 1])
                    and (w in BARE_VERBS or (w.endswith("s") and base_verb(w) is not None)
                         or (w.endswith("ed") and w not in COLOURS and len(w) > 4)))):  # "a bus parked on"
            return [x for x in words[:k] if x not in CLOTHES]
    return [x for x in words if x not in CLOTHES]


def place(words: list[str], after: int) -> list[str]:
    """The first place from word ``after`` (the subject's end) on, as 'in the grass' / 'on a beach'; [] where
    none is said."""
    k = after
    while k < len(words):
        w = words[k]
        long = _long_at(words, k)
        prep_len = len(long) if long else 1
        if long or w in _STATIC or w in _MOVING:
            noun = _place_noun(words, k + prep_len)
            if noun is not None:
                if any(x in _NOT_THE_SUBJECTS for x in words[k + prep_len:noun + 1]):
                    return []
                prep = list(long) if long else [w if w in _STATIC else _MOVING[w]]
                if not long and w in _MOVING and _MOVING[w] in ("in", "on"):
                    prep = ["on" if words[noun] in _ON else "in"]
                obj = words[k + prep_len:noun + 1]
                if obj[:1] == ["of"]:  # "outside of a building": outside a building
                    obj = obj[1:]
                elif obj and (obj[0] in _STATIC or obj[0] in _MOVING or _long_at(words, k + prep_len)):
                    k += 1  # "laying down on a course": "down" is no preposition here, "on" is
                    continue
                if obj and obj[0] not in _DETERMINERS and not _mass(words[noun]):
                    obj = ["a", *obj] if words[noun][-1:] != "s" else obj
                return prep + obj
        k += 1
    return []


def _long_at(words: list[str], k: int) -> tuple[str, ...] | None:
    """The long preposition ("in front of", "next to") that begins at word ``k``, if any."""
    return next((p for p in LONG_PREPOSITIONS if tuple(words[k:k + len(p)]) == p), None)


def _place_noun(words: list[str], at: int) -> int | None:
    for j in range(at, min(at + _PLACE_REACH, len(words))):
        if words[j] in PLACE_NOUNS:
            # "on a grass field": the phrase's last place word; "on a dirt bike" is no place
            while j + 1 < len(words) and words[j + 1] in PLACE_NOUNS:
                j += 1
            return j if j + 1 == len(words) or words[j + 1] in _AFTER_PLACE else None
        if words[j] in ("and", "with", "while", "is", "are", "as"):
            return None
    return None


def _adjective(word: str) -> bool:
    return word in COLOURS or word in ("young", "little", "small", "large", "big", "old", "other", "another")


def _mass(noun: str) -> bool:
    return noun in {"grass", "snow", "water", "sand", "mud", "dirt", "ice", "air", "surf", "traffic"}


def guessed(caption: str, held: frozenset[str] = frozenset(), counted: bool = False) -> str | None:
    """The alt text's guess for a whole caption ('A black dog in a wooded area.'), None where it has no
    subject to say."""
    words = caption.lower().rstrip(".").split()
    c = core(words, held, counted)
    if not c:
        return None
    text = " ".join(c)
    return text[0].upper() + text[1:] + "."
