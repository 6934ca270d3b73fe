"""The words people use for what the detector and the ImageNet tags see, with their numbers.

ImageNet's classes are fine-grained and oddly named ("common sorrel horse", "tabby cat", "fire truck",
"coffee mug"); a listener wants "a horse", "a cat", "a fire truck", "a mug". Fine-grained groups (dog
breeds, cats, birds) are already merged by ``capdesk.describe.tags``; this maps the rest of the classes
a photo commonly shows to a plain name, and every plain name to the COCO category it belongs to
(``capdesk.describe.objects``), so that a tag can support, contradict or replace a caption's noun.
"""

from __future__ import annotations

import re

from capdesk.describe.objects import OBJECTS, mentions, said_name

# ImageNet class -> the word a person would say. Classes not listed keep their own name, shortened
# at a parenthesis ("ram (adult male sheep)" -> "ram").
PLAIN = {
    "common sorrel horse": "horse", "ox": "cow", "water buffalo": "buffalo", "arabian camel": "camel",
    "Asian elephant": "elephant", "African bush elephant": "elephant", "brown bear": "bear",
    "American black bear": "bear", "polar bear": "polar bear", "sloth bear": "bear", "ram (adult male sheep)":
    "sheep", "bighorn sheep": "sheep", "fox squirrel": "squirrel", "red fox": "fox", "kit fox": "fox",
    "Arctic fox": "fox", "grey fox": "fox", "guinea pig": "guinea pig",
    "station wagon": "car", "taxicab": "taxi", "jeep": "car", "limousine": "car", "minivan": "van",
    "sports car": "sports car", "race car": "race car", "convertible": "car", "police van": "police van",
    "moving van": "van", "pickup truck": "pickup truck", "tow truck": "tow truck", "garbage truck":
    "garbage truck", "semi-trailer truck": "truck", "fire truck": "fire truck", "school bus": "school bus",
    "minibus": "minibus", "trolleybus": "bus", "tram": "tram", "high-speed train": "train",
    "electric locomotive": "train", "steam locomotive": "steam train", "freight car": "train",
    "railroad car": "train", "mountain bike": "bicycle", "tandem bicycle": "tandem bicycle",
    "motor scooter": "scooter", "moped": "moped", "airliner": "airplane", "container ship": "ship",
    "ocean liner": "ship", "fireboat": "boat", "lifeboat": "boat", "motorboat": "motorboat",
    "speedboat": "speedboat", "yawl (boat)": "sailboat", "schooner": "sailboat", "catamaran": "catamaran",
    "trimaran": "sailboat", "canoe": "canoe", "gondola": "gondola", "coffee mug": "mug", "tea cup": "cup",
    "espresso": "cup of coffee", "analog clock": "clock", "wall clock": "clock", "digital clock": "clock",
    "laptop computer": "laptop", "computer keyboard": "keyboard", "typewriter keyboard": "keyboard",
    "CRT monitor": "monitor", "suspension bridge": "suspension bridge", "through arch bridge": "bridge",
    # the group holds the apes (gorilla, chimpanzee, gibbon) as well as the monkeys: "a monkey" for a gorilla
    # is wrong to a listener
    "monkey or ape": "monkey or an ape", "teddy bear": "teddy bear", "cardboard box / carton": "cardboard box",
    # Common subjects (capdesk.describe.subjects): the words people use for flowers, reptiles, machines,
    # instruments, halls and food.
    "yellow lady's slipper": "orchid", "rapeseed": "rapeseed flower", "Nile crocodile": "crocodile",
    "American alligator": "alligator", "Alpine ibex": "ibex", "cornet trumpet": "trumpet",
    "marimba xylophone": "xylophone", "bell or wind chime": "wind chime", "pipe organ": "organ",
    "vaulted or arched ceiling": "vaulted hall", "fruiting spike of a cereal plant": "ear of grain",
    "corn": "ear of corn",
    "solar thermal collector": "solar panel", "construction crane": "crane", "Granny Smith apple": "apple",
    "agaric": "mushroom", "bolete": "mushroom", "gyromitra": "mushroom", "stinkhorn mushroom": "mushroom",
    "earth star fungus": "mushroom", "hen of the woods mushroom": "mushroom", "coral fungus": "mushroom",
    "lakeshore": "lake shore", "promontory": "headland", "sandbar": "sandbank",
}
# Irregular plurals of the words said with a number ("two people", "three men").
IRREGULAR = {"person": "people", "man": "men", "woman": "women", "child": "children", "sheep": "sheep",
             "fish": "fish", "mouse": "mice", "goose": "geese", "deer": "deer", "ox": "oxen", "bus": "buses",
             "knife": "knives", "giraffe": "giraffes", "skis": "skis", "people": "people"}
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}
_CATEGORY_WORDS = {w: c for c, ws in OBJECTS.items() for w in ws}


def plain_name(imagenet_label: str) -> str:
    """The plain word for a (grouped) ImageNet class."""
    if imagenet_label in PLAIN:
        return PLAIN[imagenet_label]
    return re.sub(r"\s*\(.*\)\s*$", "", imagenet_label)


def category_of(word: str) -> str | None:
    """The COCO category a plain word or phrase names ("fire truck" -> "truck"), or None."""
    found = mentions(word)
    return found[0] if found else _CATEGORY_WORDS.get(word)


def detector_word(label: str) -> str:
    """What to call a detector class in a sentence ("dining table" -> "table", "person" -> "person")."""
    return said_name(label)


def plural(word: str) -> str:
    head, _, last = word.rpartition(" ")
    if last in IRREGULAR:
        out = IRREGULAR[last]
    elif last.endswith(("s", "sh", "ch", "x", "z")):
        out = last + "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        out = last[:-1] + "ies"
    else:
        out = last + "s"
    return f"{head} {out}" if head else out


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


# Things named in the plural only: one is "a pair of scissors", never "a scissors".
PAIRS = frozenset({"scissors", "skis", "pliers", "tweezers", "glasses", "sunglasses", "binoculars", "trousers",
                   "jeans", "shorts", "tongs"})


# Things not counted, named by the tags or the detector: "May contain: hay.", never "a hay"; "Broccoli.", never
# "A broccoli." (one box or three, it is said the same).
MASS = frozenset({"hay", "broccoli", "wool", "chain mail", "guacamole", "consomme", "carbonara", "dough", "red wine",
                  "eggnog", "toilet paper", "ice cream"})


def counted(word: str, n: int) -> str:
    """'a dog', 'two dogs', 'a group of people' (more than five: no number a glance can check), 'hay'."""
    if word in MASS:
        return word
    if word.rpartition(" ")[2] in PAIRS:
        return f"a pair of {word}" if n <= 1 else f"{NUMBERS.get(n, 'many')} pairs of {word}"
    if n <= 1:
        return f"{article(word)} {word}"
    if n in NUMBERS:
        return f"{NUMBERS[n]} {plural(word)}"
    return f"a group of {plural(word)}" if word == "person" else f"many {plural(word)}"


def listed(phrases: list[str]) -> str:
    """'a cup', 'a cup and a keyboard', 'a cup, a plate and a keyboard'."""
    if len(phrases) <= 2:
        return " and ".join(phrases)
    return ", ".join(phrases[:-1]) + " and " + phrases[-1]
