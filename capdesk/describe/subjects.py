"""A word for the common subjects the detector does not know (flowers, insects, reptiles, sea and shore,
buildings and towers, machines, instruments, rooms and halls, food, tools), from ImageNet tags too weak
to say as they are: said as a guess with its closest alternative ("Perhaps a bee or a beetle, on a
flower."), or as the kind of thing alone ("Perhaps a building.") where no one tag is likely enough.

Used only where nothing else would be said about a picture (``capdesk.describe.policy``); the floors are
chosen on the ordinary tuning pictures (docs/training.md, "A word for common subjects").
"""

from __future__ import annotations

from capdesk.describe.imagenet_animals import ANIMALS as IMAGENET_ANIMALS
from capdesk.describe.plainwords import article, plain_name
from capdesk.describe.tags import GROUPS as TAG_GROUPS

# A tag from GUESS_GROUP gives the kind of thing ("perhaps a building"); its own word comes with a second
# tag of the same kind ("a tool, perhaps a hammer or a hatchet"), or alone from GUESS_NAME (the last-resort
# tag's floor, which says it first). Tuning pictures (docs/training.md): a palace of 0.28 for the
# Colosseum, a monkey of 0.29-0.50 for a squirrel and a chameleon, a can opener of 0.41 for pliers are each
# right only in their kind; the sample rocket's drilling rig of 0.56 (from 0.55) was named.
GUESS_GROUP = 0.25
GUESS_NAME = 0.6
# A second tag of the same kind from this is the closest alternative ("perhaps a hammer or a hatchet").
GUESS_ALTERNATIVE = 0.2

INSECTS = frozenset({
    "tiger beetle", "ladybug", "ground beetle", "longhorn beetle", "leaf beetle", "dung beetle", "rhinoceros beetle",
    "weevil", "fly", "bee", "ant", "grasshopper", "cricket insect", "stick insect", "cockroach", "praying mantis",
    "cicada", "leafhopper", "lacewing", "dragonfly", "damselfly", "beetle", "butterfly"})
REPTILES = frozenset({
    "lizard", "snake", "turtle", "Nile crocodile", "American alligator", "Komodo dragon", "chameleon", "green iguana",
    "Gila monster", "agama", "frilled-necked lizard", "banded gecko"})
_GROUPS: dict[str, frozenset[str]] = {
    "a flower": frozenset({"daisy", "yellow lady's slipper", "rapeseed", "rose hip"}),
    "a mushroom": frozenset({"mushroom", "agaric", "bolete", "gyromitra", "stinkhorn mushroom", "earth star fungus",
                             "hen of the woods mushroom", "coral fungus"}),
    "a vegetable": frozenset({"cabbage", "broccoli", "cauliflower", "zucchini", "spaghetti squash", "acorn squash",
                              "butternut squash", "cucumber", "artichoke", "bell pepper", "cardoon", "corn",
                              "fruiting spike of a cereal plant"}),
    "a fruit": frozenset({"Granny Smith apple", "strawberry", "orange", "lemon", "fig", "pineapple", "banana",
                          "jackfruit", "cherimoya (custard apple)", "pomegranate"}),
    "food": frozenset({"guacamole", "consomme", "hot pot", "trifle", "ice cream", "popsicle", "baguette", "bagel",
                       "pretzel", "cheeseburger", "hot dog", "mashed potatoes", "carbonara", "meatloaf", "pizza",
                       "pot pie", "burrito", "dough"}),
    "a landscape": frozenset({"mountain", "cliff", "coral reef", "geyser", "lakeshore", "promontory", "sandbar",
                              "beach", "valley", "volcano", "alp"}),
    "a tower": frozenset({"bell tower", "water tower", "lighthouse", "obelisk"}),
    "a building": frozenset({"palace", "castle", "church", "mosque", "monastery", "stupa", "dome", "barn",
                             "boathouse", "greenhouse", "planetarium", "prison", "cliff dwelling", "yurt",
                             "thatched roof", "tile roof", "triumphal arch", "megalith", "movie theater"}),
    "a bridge": frozenset({"suspension bridge", "through arch bridge", "viaduct", "pier"}),
    "a hall": frozenset({"vaulted or arched ceiling", "library", "restaurant", "home theater", "stage", "altar",
                         "bookstore", "grocery store", "toy store", "barbershop"}),
    # Not "drilling rig": it is the tag of the sample rocket on its launch pad (0.56).
    "a machine": frozenset({"construction crane", "tractor", "combine harvester", "threshing machine",
                            "forklift", "lawn mower", "snowplow", "solar thermal collector", "radio telescope",
                            "space shuttle", "airship"}),
    "a musical instrument": frozenset({
        "accordion", "acoustic guitar", "banjo", "bassoon", "cello", "bell or wind chime", "cornet trumpet", "drum",
        "electric guitar", "flute", "French horn", "gong", "grand piano", "harmonica", "harp", "maraca",
        "marimba xylophone", "oboe", "ocarina", "pipe organ", "pan flute", "saxophone", "steel drum", "trombone",
        "upright piano", "violin"}),
    "a tool": frozenset({"hammer", "hatchet", "screwdriver", "can opener", "letter opener", "shovel", "power drill",
                         "chainsaw", "plunger", "block plane", "cleaver", "tool kit", "screw", "metal nail"}),
    "a fish": frozenset({"fish", "tench", "goldfish", "great white shark", "tiger shark", "hammerhead shark",
                         "electric ray", "stingray", "eel", "silver salmon", "sturgeon", "gar fish", "lionfish",
                         "pufferfish", "clownfish", "rock beauty fish", "snoek fish"}),
    "an insect": INSECTS,
    "a reptile": REPTILES,
}
GROUP_OF = {label: g for g, labels in _GROUPS.items() for label in labels}
# Tags that are already a plain kind (dog breeds summed into "dog", fishes into "fish"): said as they are.
COARSE = frozenset(name for _, _, name in TAG_GROUPS)
# Settings a subject is said on ("perhaps a fish, on a coral reef"; "perhaps a bee, on a flower").
SETTING_GROUPS = frozenset({"a landscape", "a flower"})


def group_of(label: str) -> str | None:
    """The kind of thing an ImageNet tag names ("an insect", "a building"), or None."""
    if label in GROUP_OF:
        return GROUP_OF[label]
    return "an animal" if label in IMAGENET_ANIMALS else None


def _a(label: str) -> str:
    word = plain_name(label)
    return f"{article(word)} {word}"


def guess(tags: list[tuple[str, float]]) -> str:
    """'perhaps a bee or a beetle, on a flower', 'probably a building, perhaps a palace or a castle', 'perhaps a
    tool', or ''.
    ``tags``: (ImageNet label, probability), most likely first."""
    known = [(label, p, group_of(label)) for label, p in tags if p >= GUESS_ALTERNATIVE and group_of(label)]
    subjects = [t for t in known if t[2] not in SETTING_GROUPS] or known
    if not subjects or subjects[0][1] < GUESS_GROUP:
        return ""
    label, p, group = subjects[0]
    on = next((s for s in known if s[2] in SETTING_GROUPS and s[2] != group and s[1] >= GUESS_GROUP), None)
    where = f", on {on[2] if on[2] == 'a flower' else _a(on[0])}" if on else ""  # "a flower": the bee's, not a daisy
    other = next((s for s in subjects[1:] if s[2] == group and plain_name(s[0]) != plain_name(label)), None)
    names = _a(label) + (f" or {_a(other[0])}" if other else "")
    if label in COARSE and p >= GUESS_NAME or p >= GUESS_NAME and other is not None or group in names.split(" or "):
        return f"perhaps {names}{where}"  # (not "a bridge, perhaps a bridge or a pier")
    if p < GUESS_NAME and other is None:
        return f"perhaps {group}{where}"
    # The kind of thing is the tags' alone, right in 9 of 11 such alt texts on the ordinary pictures (a
    # skyscraper "a bridge"): under the level of a fact, so it is probable too.
    return f"probably {group}, perhaps {names}{where}"
