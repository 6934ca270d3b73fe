"""The objects a caption names: COCO's 80 object categories, each with the words people use for it.

Used three ways, always with the same lists: to measure hallucination (CHAIR, Rohrbach et al. 2018:
an object a caption names that no human caption of the photo names), to ground the beam search
(an object word the picture's concepts do not support costs the caption), and to judge trust (the
concepts' support for each object the caption names). The lists follow the categories of the COCO
detection task; the words are this project's own, chosen from the everyday training captions.

Words that are mostly something else in captions are left out on purpose: "orange" (a colour far more
often than a fruit), "glass" (windows), "board", "plant" (a power plant), "ski" (a ski slope).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from capdesk.describe.alttext import PEOPLE_WORDS

# Category -> the word a person would say for it, when the category's name is not that word.
SAID_AS = {"dining table": "table", "sports ball": "ball", "potted plant": "potted plant",
           "cell phone": "phone", "tv": "television", "hair drier": "hair dryer", "skis": "skis"}

OBJECTS: dict[str, tuple[str, ...]] = {
    "person": tuple(sorted(PEOPLE_WORDS - {"team", "family", "crowd", "audience", "members", "customers"}))
    + ("crowd", "family", "team", "audience", "bride", "groom", "cowboy", "soldier", "soldiers", "astronaut",
       "astronauts", "doctor", "nurse", "waiter", "waitress", "fireman", "firefighter", "policewoman",
       "businessman", "boyfriend", "girlfriend", "grandmother", "grandfather", "mom", "dad", "toddler"),
    "bicycle": ("bicycle", "bike", "cycle"),
    "car": ("car", "automobile", "sedan", "suv", "jeep", "taxi", "cab", "minivan", "van", "limo", "limousine",
            "convertible", "hatchback"),
    "motorcycle": ("motorcycle", "motorbike", "motor bike", "scooter", "moped", "dirt bike", "dirtbike"),
    "airplane": ("airplane", "plane", "aeroplane", "jet", "aircraft", "airliner", "jetliner"),
    "bus": ("bus", "buses", "trolley"),
    "train": ("train", "locomotive", "tram", "subway", "railcar"),
    "truck": ("truck", "pickup", "lorry", "firetruck", "fire truck", "tractor"),
    "boat": ("boat", "ship", "canoe", "kayak", "sailboat", "yacht", "raft", "ferry", "rowboat", "speedboat"),
    "traffic light": ("traffic light", "stop light", "stoplight", "traffic signal"),
    "fire hydrant": ("fire hydrant", "hydrant"),
    "stop sign": ("stop sign",),
    "parking meter": ("parking meter",),
    "bench": ("bench",),
    "bird": ("bird", "duck", "seagull", "gull", "pigeon", "parrot", "goose", "geese", "swan", "eagle", "hawk",
             "owl", "penguin", "flamingo", "crow", "sparrow", "pelican", "heron", "rooster", "hen", "chick"),
    "cat": ("cat", "kitten", "kitty"),
    "dog": ("dog", "puppy", "pup", "poodle", "terrier", "retriever", "labrador", "collie", "beagle", "dachshund",
            "pug", "husky", "greyhound", "bulldog", "chihuahua", "dalmatian", "spaniel", "rottweiler", "hound",
            "pitbull", "doberman", "german shepherd", "sheepdog", "mutt", "corgi"),
    "horse": ("horse", "pony", "foal", "stallion", "mare", "colt"),
    "sheep": ("sheep", "lamb", "ram"),
    "cow": ("cow", "cattle", "bull", "calf", "ox", "oxen", "steer", "longhorn"),
    "elephant": ("elephant",),
    "bear": ("bear", "grizzly", "polar bear"),
    "zebra": ("zebra",),
    "giraffe": ("giraffe",),
    "backpack": ("backpack", "back pack", "rucksack", "knapsack"),
    "umbrella": ("umbrella", "parasol"),
    "handbag": ("handbag", "purse", "hand bag"),
    "tie": ("tie", "necktie", "bow tie"),
    "suitcase": ("suitcase", "luggage", "suit case"),
    "frisbee": ("frisbee",),
    "skis": ("skis",),
    "snowboard": ("snowboard",),
    "sports ball": ("ball", "football", "soccer ball", "basketball", "baseball", "volleyball", "tennis ball",
                    "softball", "beach ball"),
    "kite": ("kite",),
    "baseball bat": ("baseball bat", "bat"),
    "baseball glove": ("baseball glove", "glove", "mitt"),
    "skateboard": ("skateboard", "skate board"),
    "surfboard": ("surfboard", "surf board"),
    "tennis racket": ("tennis racket", "racket", "racquet"),
    "bottle": ("bottle",),
    "wine glass": ("wine glass",),
    "cup": ("cup", "mug"),
    "fork": ("fork",),
    "knife": ("knife", "knives"),
    "spoon": ("spoon",),
    "bowl": ("bowl",),
    "banana": ("banana",),
    "apple": ("apple",),
    "sandwich": ("sandwich", "burger", "hamburger", "sub"),
    "orange": ("oranges",),
    "broccoli": ("broccoli",),
    "carrot": ("carrot",),
    "hot dog": ("hot dog", "hotdog"),
    "pizza": ("pizza",),
    "donut": ("donut", "doughnut"),
    "cake": ("cake", "cupcake"),
    "chair": ("chair", "stool"),
    "couch": ("couch", "sofa"),
    "potted plant": ("potted plant", "houseplant", "flowerpot", "flower pot"),
    "bed": ("bed",),
    "dining table": ("table", "dining table"),
    "toilet": ("toilet", "urinal"),
    "tv": ("tv", "television"),
    "laptop": ("laptop", "computer"),
    "mouse": ("mouse",),
    "remote": ("remote", "remote control"),
    "keyboard": ("keyboard",),
    "cell phone": ("phone", "cellphone", "cell phone", "smartphone"),
    "microwave": ("microwave",),
    "oven": ("oven", "stove"),
    "toaster": ("toaster",),
    "sink": ("sink",),
    "refrigerator": ("refrigerator", "fridge"),
    "book": ("book",),
    "clock": ("clock",),
    "vase": ("vase",),
    "scissors": ("scissors",),
    "teddy bear": ("teddy bear", "teddy", "stuffed animal"),
    "hair drier": ("hair drier", "hair dryer", "hairdryer", "blow dryer"),
    "toothbrush": ("toothbrush",),
}

# A sport's name before these words is not a ball ("a baseball player", "a football field").
_NOT_A_BALL_AFTER = frozenset({"player", "players", "field", "game", "games", "team", "uniform", "uniforms",
                               "cap", "hat", "bat", "glove", "court", "pitch", "stadium", "jersey", "match",
                               "net", "goal", "helmet", "practice", "player's", "league", "coach", "fans"})
_SPORTS = frozenset({"football", "basketball", "baseball", "volleyball", "softball"})
# Words in these phrases belong to the phrase, not to a category of their own.
_NOT_OBJECTS = ("hot dog", "teddy bear", "dog house", "doghouse", "bat mitzvah", "tie dye", "cab driver",
                "bus stop", "train station", "train tracks", "horse drawn", "cat walk", "catwalk",
                "bird house", "birdhouse", "chair lift", "chairlift", "ski lift", "table cloth", "tablecloth")


def _plural(w: str) -> set[str]:
    if w.endswith(("s", "sh", "ch", "x", "z")):
        return {w + "es"}
    if w.endswith("y") and w[-2:-1] not in "aeiou":
        return {w[:-1] + "ies"}
    if w.endswith("fe"):
        return {w[:-2] + "ves"}
    return {w + "s"}


def _index() -> tuple[dict[tuple[str, ...], str], int]:
    phrases: dict[tuple[str, ...], str] = {}
    for cat, words in OBJECTS.items():
        for w in words:
            parts = w.split()
            for form in {parts[-1]} | _plural(parts[-1]):
                phrases.setdefault(tuple(parts[:-1] + [form]), cat)
    for p in _NOT_OBJECTS:
        phrases.setdefault(tuple(p.split()), "")
        phrases.setdefault(tuple(p.split()[:-1]) + tuple(_plural(p.split()[-1])), "")
    return phrases, max(len(k) for k in phrases)


PHRASES, _LONGEST = _index()
# One word -> its category (the beam's grounding reads single words; phrases are for measuring).
WORD_CATEGORY = {k[0]: v for k, v in PHRASES.items() if len(k) == 1 and v}


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())


def phrase_hits(w: list[str]) -> Iterator[tuple[int, int, str]]:
    """(start, length, category) of each known phrase in the words ``w``, longest first, left to right, never
    overlapping; the category is "" for a phrase known to name no object."""
    i = 0
    while i < len(w):
        for n in range(min(_LONGEST, len(w) - i), 0, -1):
            cat = PHRASES.get(tuple(w[i:i + n]))
            if cat is not None:
                yield i, n, cat
                i += n - 1
                break
        i += 1


def mentions(text: str) -> list[str]:
    """The categories a text names, in order, each once ("A man and his dog" -> ["person", "dog"])."""
    w = tokens(text)
    return mentions_of(w, phrase_hits(w))


def mentions_of(w: list[str] | tuple[str, ...], hits: Iterable[tuple[int, int, str]]) -> list[str]:
    """``mentions`` of the words ``w`` whose phrases (``phrase_hits``) are found already."""
    out: list[str] = []
    for i, n, cat in hits:
        if cat == "sports ball" and n == 1 and w[i] in _SPORTS and i + 1 < len(w) and w[i + 1] in _NOT_A_BALL_AFTER:
            cat = ""
        if cat and cat not in out:
            out.append(cat)
    return out


def said_name(category: str) -> str:
    """The word a person would use for a category ("dining table" -> "table")."""
    return SAID_AS.get(category, category)
