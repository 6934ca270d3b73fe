"""The one place that decides what may be said about a picture, and how surely.

From a picture's ``PictureEvidence`` alone: whether the scene caption is said as fact, as "Probably
...", or withheld; which of the beam's captions, with which words mended (who, how many, a noun the
picture does not hold); and, where no caption is said, which objects and tags are. The words are
written by ``capdesk.describe.composer``. Every threshold is here, with the measurement that set it
(docs/training.md, "What the alt text says, from one evidence record"), but those confirming a fact's subject
and how many, which are in ``capdesk.describe.subject_fact`` with theirs.

A person, animal or vehicle that a said caption names must be seen: by the object detector (its
calibrated score, ``capdesk.describe.calibration``) or, for animals and vehicles, by an ImageNet tag.
Where the detector is missing (not installed, or a bundle that fails its check) nothing can be checked
that way and the caption stands on its trust alone, as before the detector.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from capdesk.describe import captionfix, subject_fact, subjects
from capdesk.describe.alttext import clean_caption
from capdesk.describe.evidence import Detection, Finalist, PictureEvidence
from capdesk.describe.fact_check import FactCheck
from capdesk.describe.imagenet_animals import ANIMALS as IMAGENET_ANIMALS
from capdesk.describe.numbers import ONE_OR_TWO, numbers
from capdesk.describe.objects import mentions, said_name, tokens
from capdesk.describe.picture_kind import DEPICTS, OTHER, PHOTO
from capdesk.describe.picture_kind import SAID as KIND_SAID
from capdesk.describe.plainwords import category_of, counted, plain_name
from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD, TRUST_FACT_THRESHOLD, TRUST_PROBABLY_THRESHOLD
from capdesk.status import SaidAs

PEOPLE = frozenset({"person"})
ANIMALS = frozenset({"bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"})
VEHICLES = frozenset({"bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"})
CHECKED = PEOPLE | ANIMALS | VEHICLES  # what a said caption may name only when it is seen
KIND_OF = {"giant panda": "bear", "dingo": "dog"}  # ImageNet animals that are one of the detector's kinds

# The trust score reads as the probability that a caption names no absent object. Fact from 0.80: the
# lowest at which, on the everyday val split, the facts of each collection name an absent object at
# most 5% of the time; withheld under 0.10 (12 of 13 such val captions named an absent object).
# (The two numbers are defined in capdesk.limits, which the window's help can read.)
TRUST_FACT = TRUST_FACT_THRESHOLD
TRUST_PROBABLY = TRUST_PROBABLY_THRESHOLD
# A caption is said as fact only for a picture at least as typical of the model's pictures as this share
# of its own val photos (``capdesk train ground`` writes that quantile of their domain ratios as the
# manifest's trust.fact_domain_ratio): photos unlike the training photos fool the concepts as much as the
# captioner (an astronaut in a suit, a horse's silhouette, a motorbike parked indoors).
FACT_ZONE_QUANTILE = 0.875
# The figures below are on the everyday val split (Flickr8k 1,000 photos), one threshold moved at a time
# around the shipped setting (training/studies/policy_sweep.py on a facts_eval.py --dump; docs/training.md,
# "What the alt text says, from one evidence record"): share said as fact / facts naming an absent object /
# facts contradicting the human captions in who or how many.
#
# A person named by a caption counts as seen from this calibrated detector score: 0.3 gives 64.8% / 2.0% /
# 10.8%, 0.5 64.2% / 1.9% / 10.8%, 0.7 62.9% / 1.9% / 11.0%.
PERSON_SEEN = 0.5
# From this score (the detector's listing floor) a person not quite seen makes the caption "Probably" at
# most instead of withheld: the facts do not change, and empty alt texts fall from 3.8% to 2.9%.
PERSON_FAINT = 0.3
# An animal or a vehicle counts as seen from this calibrated detector score (0.5: Flickr8k 63.8% / 2.0%,
# COCO 1.0% absent against 2.0%: within noise either way), or from this ImageNet tag probability for a tag
# of its category (the trust score's own evidence floor; 0.35 and 0.5 change nothing measurable).
THING_SEEN = 0.3
TAG_SEEN = 0.2
# How many. A caption saying one becomes the detector's number where it finds two or more boxes from
# COUNT_SURE (0.7: 68.2% / 1.8% / 11.6%; 0.9: 64.2% / 1.9% / 10.8%; never: 57.5% / 2.1% / 8.5%, COCO
# 9.7% / 7.1% / 4.4% who-many). A caption saying several becomes one where it finds at most one box from
# COUNT_ANY (0.3: 63.1% / 1.7% / 10.6%; 0.5: 64.2% / 1.9% / 10.8%; 0.7: 65.4% / 2.0% / 11.6%; 0.5 also
# leaves the astronaut one person). Each counted box is at least COUNT_AREA of the largest of its kind: the
# calibrated score of a second box is its class's photo-level score, so a sliver at a portrait's edge
# would count.
COUNT_SURE = 0.9
COUNT_ANY = 0.5
COUNT_AREA = 0.25
# A number the detector does not confirm is no fact: one, where it sees two boxes from COUNT_DOUBT of at
# least DOUBT_AREA of the largest (0.5: 63.5% / 1.6% / 11.5%; 0.7: 64.2% / 1.9% / 10.8%); several, where it
# sees fewer than SEVERAL_BOXES (none: 67.7% / 1.9% / 12.4%; 2: 64.2% / 1.9% / 10.8%; 3: 58.5% / 2.1% /
# 10.6%).
COUNT_DOUBT, DOUBT_AREA = 0.7, 0.1
SEVERAL_BOXES = 2
# One animal said where the detector sees a second of its kind from HEDGE_FROM (at least DOUBT_AREA of the
# largest) is said as "one or two": two dogs wrestling are one sure box and a faint one. Val, Flickr8k
# facts contradicting in who or how many: never 9.3%, 0.5 9.2%, 0.3 8.7% (BLEU-4 0.1921 -> 0.1909), facts
# unchanged (a number the detector doubts from COUNT_DOUBT stays "Probably"). For people it is not done:
# from 0.3 it takes who-many to 8.1% but says "one or two people" for 42 photos whose five captions
# say one person with others behind (BLEU-4 0.1847); where it replaced the doubt (a fact instead of
# "Probably", facts +3.8 points) it made a held-out "holding a video game" a fact.
HEDGE_FROM = 0.3
# Tried and not shipped: a number said as fact only where the beam's other captions say it too (60.5% /
# 2.0% / 10.1%), and several people only where the concepts give "group" 0.3 (54.5% / 2.2% / 10.1%): each
# takes more facts away than contradictions. 5% who-many is reached only near 45% facts.
COUNT_AGREE = False
GROUP_SEEN = 0.0
# Who: "man", "woman", "boy", "girl" are said only where reliable. On val the references contradict the
# captions' "man" 15% of the time, "woman" 10%, "boy" 18%, "girl" 15%, and neither the finalists'
# agreement nor anything else cheap separates right from wrong; saying them gives 17.4% who-many against
# 10.8% (and 0.02 more BLEU-4), so they are said as "person", "child".
SAY_SEX = False
# Said without a scene caption: an object from this calibrated score (from 0.7, 94% of the classes the
# detector lists are named by the photo's human captions; docs/detector.md, "The listing floor").
SAY_OBJECT = 0.7
# An ImageNet tag is said ("May contain: ...") from the model's own floor (manifest tags.threshold, 0.7):
# on the everyday val split 89% of top tags from 0.7 name what a human caption names (the tag's plain word
# or its COCO category), against 61-64% from 0.5 to 0.7, too often wrong to say even when nothing else is.
#
# Without a detector, the concepts' objects are said in place of a withheld caption from this probability.
CONCEPT_SAY = 0.6
# A model of pictures seen from above (the aerial one) is said as fact only when the everyday evidence does
# not show a close-up: no detected object this sure, of a kind not seen from above, covering this share of
# the picture. On the aerial model's val photos the detector finds such an object in 0.65% (5% from 0.5:
# big false "person" boxes over textures), and none of the 8 test facts it took away named an absent object.
CLOSE_UP_SCORE, CLOSE_UP_AREA = 0.8, 0.15
SEEN_FROM_ABOVE = frozenset({"airplane", "boat", "car", "truck", "bus", "train"})
# Tried and not kept: facts of such a model only where the picture kind reads a photo from 0.8. A circuit
# board close-up (no object the detector knows) read 0.74 and is still "Many buildings and green trees are
# in a school." as fact, but 20 of the 1,092 RSICD test photos read less than that, and the rule took 30
# facts (2.7%) away without changing how often a fact named an absent object (2.1%).
MAX_SAID = 3  # objects said in place of a scene caption
# An animal a caption names that only a weak tag vouches for (under OUTSEEN_TAG) is not seen where the
# detector is sure (from OUTSEEN_BY) of another animal and sees none of it: three horses boxed at 0.71-0.89
# were "a black and white dog" on the strength of a dog tag of 0.29 (tuning set), two cows "a black and
# white dog" (test). No val alt text changes; the horses now get the beam finalist that names them.
OUTSEEN_BY, OUTSEEN_TAG = 0.85, 0.5
# Two weaker witnesses that agree: a detection from WITNESS_DETECTION and an ImageNet tag of its kind from
# WITNESS_TAG (a kitten: the detector's cat 0.66 and the tags' cats 0.33; an owl: bird 0.61 and 0.53).
WITNESS_DETECTION, WITNESS_TAG = 0.5, 0.25
# In a picture the domain gate finds unlike the model's photos, a person counts only from this share of the
# picture, and is said alone (without a caption) only from this calibrated score: the detector's person
# scores are calibrated on photos where people are nearly everywhere (78% of the val photos), so a weak
# box on a bee or a pufferfish reads 0.87 and 0.80. Chosen on the gathered tuning pictures (122 from
# gcompris-qt-data), where tourists of 0.1-1% of the picture stood for the Brandenburg Gate (from 0.01 one
# was left; 0.03 changed nothing more); on the everyday val split it changes two alt texts (two people far
# off in a sailing boat become "A boat.", a jogger's "sitting on a brick wall" is withheld).
STRANGE_PERSON, STRANGE_PERSON_AREA = 0.9, 0.02
# In any photo a person a caption names is seen (or faintly seen), and said alone, only by a box of at least
# this share of the picture: tourists at the foot of the Eiffel Tower were its subject. Of the val captions
# naming a person whose largest box is under 1%, 8 of 14 name people no reference does. Flickr8k val
# (fact / absent / who-many): none 64.3 / 1.40 / 8.55; 0.005 64.0 / 1.41 / 8.59; 0.01 63.8 / 1.25 / 8.62;
# 0.015 63.1 / 1.27 / 8.72.
PERSON_AREA = 0.01
# A colour a caption gives a thing is said only where the concepts see it from this probability. On val a
# colour of a said caption under 0.2 is named by one of the five references 29% of the time, from 0.5 84%;
# by eye 7 of 12 taken out were wrong, 3 right. Flickr8k val BLEU-4 / CIDEr 0.1911 / 0.4884 -> 0.1923 /
# 0.4846, COCO 0.1887 / 0.5959 -> 0.1906 / 0.6029 (0.3: Flickr8k CIDEr 0.4809; docs/training.md).
COLOUR_SEEN = 0.2
# Where a caption says a thing is ("in front of a building", "on a sidewalk") is said only where the concepts
# see the place from this probability (each word below is one of the everyday concept head's). On val a place
# of a said caption under 0.1 is named by one of the five references 8% of the time (6 of 71), from 0.5 82%;
# by eye 10 of 12 places taken out were wrong. BLEU-4 / CIDEr as said within 0.002 (docs/training.md).
PLACE_SEEN = 0.1
PLACES = frozenset({
    "airport", "bathroom", "bridge", "building", "city", "cliff", "court", "desert", "dock", "door", "fence", "field",
    "floor", "forest", "fountain", "garden", "grass", "gym", "hill", "ice", "kitchen", "lake", "lawn", "market",
    "mountain", "mud", "ocean", "office", "park", "path", "platform", "playground", "pool", "ramp", "restaurant",
    "river", "road", "rock", "room", "sand", "sea", "shore", "sidewalk", "slope", "snow", "stadium", "stage", "store",
    "street", "tent", "town", "track", "trail", "tree", "wall", "water", "wave", "window", "yard"})
# Things a caption names in passing that the detector does not know (it checks its own 80 kinds), checked the
# same way by the concepts: on val those under 0.1 are named by one of the references 12% of the time (4 of
# 34: "holding a video game", "with a toy", "jumping over a hurdle"), from 0.3 56% (18 of 32). Clothes and
# pictures the caption model adds to a person ("in a black shirt", "sitting at a picture") are checked so too:
# on val, of said captions with "shirt" under 0.1, 2 of 13 are named by a reference ("dress" 2 of 10, "picture"
# 2 of 10), against 53 of 178 from 0.1.
THINGS = frozenset({"toy", "game", "stick", "drink", "hurdle", "microphone", "leash", "railing", "collar", "statue",
                    "rope", "flag", "guitar", "net", "box", "paper", "swing", "tire", "jersey", "costume",
                    "mask", "beer", "pole", "blanket", "shirt", "dress", "picture"})
# Where nothing else is said about a photo, the setting the concepts see from this probability is said as
# "May contain: grass, a field." (landscapes, seas and skies have no COCO object and few ImageNet classes,
# and were empty). On the everyday val photos each of these words, from 0.7, is named (or a word of its
# kind: "sea" for ocean, "lawn" for grass) by the human captions of 90-100% of the photos it is said for:
# water 91/91, grass 40/42, snow 41/42, mountain 16/16, ocean 10/10, field 25/27, street 28/31, building
# 5/5, city 3/3, lake, river, tree, sand 1-2 each; "road" (0 of 1; 3 of 6 from 0.5) is left out, and so are
# sky, forest and wood, which no val photo reaches 0.7 for (training/studies/scene_words.py on a
# facts_eval.py --dump of val).
SCENE_SAY = 0.7
# A photo about which nothing else would be said (no object, tag from the floor, text or setting) gets its
# top tag from this probability: of the 7 such tags on the gathered tuning pictures 6 are right (a
# butterfly, a crab, a meerkat, a bird, a hammer, a triumphal arch) and 1 partly (a triumphal arch for the
# Brandenburg Gate); on the everyday val split it fills 1 empty alt text (a poke bonnet for a girl's
# hat). From 0.5 it also said a ladle for cutlery, a bell tower for Notre-Dame, a dog for a teddy bear
# (val) and a drilling rig for the sample rocket (0.56).
LAST_RESORT_TAG = 0.6
# A picture of which this share is transparent is a cut-out (a photo of a thing with its background
# removed, a sticker): a scene caption can only invent its setting ("a white bird is flying through the
# water" for a pelican on nothing), so where the detector or the tags see something, that is said instead.
# On 22 cut-out photos gathered for tuning (tuxpaint-stamps-default) 8 scene captions were said, all
# with an invented setting and 4 naming the wrong thing (a giraffe for a fox, a person for flowers).
CUT_OUT = 0.2
SCENE_WORDS = {"water": "water", "ocean": "the sea", "lake": "a lake", "river": "a river", "snow": "snow",
               "grass": "grass", "field": "a field", "mountain": "a mountain", "sand": "sand", "tree": "trees",
               "city": "a city", "street": "a street", "building": "a building"}


@dataclass
class Options:
    tags: str = "auto"  # "auto" | "always" | "never"
    show_guess: bool = False
    low_confidence: float = DEFAULT_CONFIDENCE_THRESHOLD  # the user's threshold (a stricter one takes facts away)


@dataclass
class Decision:
    """What may be said about one picture (the composer words it)."""

    said_as: SaidAs
    caption: str = ""  # the scene caption as it may be said (cleaned and mended); "" when not said
    guess: str = ""  # the model's caption, cleaned, when it is withheld
    objects: list[str] = field(default_factory=list)  # "a cat", "two people": seen, said when no caption is
    maybe: list[str] = field(default_factory=list)  # tags said as "May contain: ..."
    text: str | None = None
    plain_fact: str = ""
    reason: str | None = None
    mended: list[str] = field(default_factory=list)  # what the evidence changed in the caption, for --json
    kind: str = ""  # "a drawing", "a screenshot": said first, for a picture that is surely not a photo
    kind_sure: bool = True  # the kind is said as fact; else as a guess ("Probably a drawing.")
    guesses: list[str] = field(default_factory=list)  # "a cat": seen by one witness alone, said as "Probably ..."
    perhaps: list[str] = field(default_factory=list)  # "an animal, perhaps a fox or a giraffe": said as they are
    fact: str = ""  # "a dog": of a caption said as fact, the part the detector confirms ("" where it is whole)

    @property
    def review(self) -> bool:
        return self.said_as is not SaidAs.FACT


def _tag_categories(ev: PictureEvidence, floor: float) -> dict[str, tuple[str, float]]:
    """Category -> (plain word, probability) of the tags from ``floor`` that name a COCO category."""
    out: dict[str, tuple[str, float]] = {}
    for label, p in ev.tags:
        word = plain_name(label)
        cat = category_of(word)
        if cat and p >= floor and cat not in out:
            out[cat] = (word, p)
    return out


def person_score(ev: PictureEvidence) -> float:
    """The surest person box big enough to be a caption's subject."""
    return max((d.score for d in ev.detections if d.label in PEOPLE and _subject_sized(ev, d)), default=0.0)


def _subject_sized(ev: PictureEvidence, d: Detection) -> bool:
    """Whether a person box is big enough to say (any box, for a record without the picture's size)."""
    w, h = ev.size or (0, 0)
    return d.label not in PEOPLE or (d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) >= PERSON_AREA * w * h


def seen(ev: PictureEvidence, category: str) -> bool:
    if category in PEOPLE:
        return person_score(ev) >= PERSON_SEEN
    if other_animal(ev, category):
        return False
    if ev.best_detection(category) >= THING_SEEN:
        return True
    tag = _tag_categories(ev, TAG_SEEN).get(category)
    return tag is not None and not (category in ANIMALS and tag[1] < OUTSEEN_TAG and any(
        d.label in ANIMALS and d.label != category and d.score >= OUTSEEN_BY for d in ev.detections))


def other_animal(ev: PictureEvidence, category: str) -> str | None:
    """The animal a sure ImageNet tag names where it is none of the detector's kinds, and so not
    ``category`` (an animal the detector or a caption names): the detector knows ten animals and calls
    a llama a dog, a gorilla a bear, a camel a sheep, each with a score as high as a real dog's;
    ImageNet knows some four hundred, and its tag from the model's own floor is the better witness of
    which animal it is."""
    if category not in ANIMALS:
        return None
    for label, p in ev.tags:
        if p >= ev.tag_threshold and label in IMAGENET_ANIMALS:
            word = plain_name(label)
            # An animal the detector knows too (a horse tag beside a dog box) is the detector's to call.
            return None if category_of(word) or KIND_OF.get(word) else word
    return None


def checkable(ev: PictureEvidence) -> bool:
    """Whether the detector can vouch for what the caption names: it looked, and the caption's model
    describes pictures taken on the ground, as the detector's own. From a satellite the detector sees no
    car: on the aerial model's val photos, requiring it would have taken 117 of 1,080 facts away (11%),
    of which 16 named an absent object."""
    return ev.detector and not ev.overhead


def faint(ev: PictureEvidence, category: str) -> bool:
    """Whether a person the detector does not quite see is there at all (a caption naming one is then
    "Probably" at most, rather than withheld)."""
    return category in PEOPLE and person_score(ev) >= PERSON_FAINT


def unseen(ev: PictureEvidence, text: str) -> list[str]:
    """The people, animals and vehicles ``text`` names that the evidence does not show."""
    if not checkable(ev):
        return []
    return [c for c in mentions(text) if c in CHECKED and not seen(ev, c)]


def standing(ev: PictureEvidence, f: Finalist, opts: Options) -> tuple[SaidAs, str | None]:
    """How surely one caption may be said, by its trust (or confidence) and the picture's place."""
    if ev.in_domain is False and not (ev.near and ev.has_trust):
        where = ev.domain or "its training pictures"
        return SaidAs.WITHHELD, f"the picture is unlike those the model knows ({where}), so its scene caption was " \
                                "withheld"
    if ev.has_trust and f.trust is not None:
        if f.trust < TRUST_PROBABLY:
            return SaidAs.WITHHELD, (f"the caption is more likely than not to name something that is not there "
                                     f"(trust {f.trust:.2f}), so it was withheld")
        if f.trust < TRUST_FACT:
            return SaidAs.PROBABLY, f"the caption may name something that is not there (trust {f.trust:.2f})"
        if opts.low_confidence != DEFAULT_CONFIDENCE_THRESHOLD and f.confidence < opts.low_confidence:
            return SaidAs.PROBABLY, f"the model was unsure (confidence {f.confidence:.2f})"
        if not ev.typical or ev.in_domain is False:
            return SaidAs.PROBABLY, ("the picture is less like the model's training photos than those its captions "
                                     "are said as fact for, so the caption may be wrong")
        return SaidAs.FACT, None
    if f.confidence < opts.low_confidence:
        return SaidAs.PROBABLY, f"the model was unsure (confidence {f.confidence:.2f})"
    if ev.overhead and close_up(ev):
        return SaidAs.PROBABLY, "the objects seen in the picture are close up, unlike the model's pictures"
    return SaidAs.FACT, None


def close_up(ev: PictureEvidence) -> bool:
    """Whether the detector sees an object that fills much of the picture (not a scene seen from afar)."""
    w, h = ev.size or _extent(ev)
    for d in ev.detections:
        x0, y0, x1, y1 = d.box
        big = w and h and (x1 - x0) * (y1 - y0) >= CLOSE_UP_AREA * w * h
        if d.score >= CLOSE_UP_SCORE and big and d.label not in SEEN_FROM_ABOVE:
            return True
    return False


def _extent(ev: PictureEvidence) -> tuple[int, int]:
    """The picture's size as far as the boxes tell (they are clipped to it), for a record without one."""
    return (max((d.box[2] for d in ev.detections), default=0), max((d.box[3] for d in ev.detections), default=0))


_ORDER = {SaidAs.FACT: 0, SaidAs.PROBABLY: 1, SaidAs.WITHHELD: 2, SaidAs.NONE: 3}


def _weaker(a: tuple[SaidAs, str | None], b: tuple[SaidAs, str | None]) -> tuple[SaidAs, str | None]:
    return a if _ORDER[a[0]] >= _ORDER[b[0]] else b


def choose(ev: PictureEvidence, opts: Options) -> tuple[Finalist, tuple[SaidAs, str | None], list[str]]:
    """The caption to say: the best finalist the evidence agrees with, or the best one with its unseen
    nouns replaced by what was seen; with its standing and what was changed."""
    best = ev.finalists[0]
    first = standing(ev, best, opts)
    if first[0] in (SaidAs.WITHHELD, SaidAs.NONE) or not unseen(ev, best.text):
        return best, first, []
    for k, f in enumerate(ev.finalists[1:], 2):
        st = standing(ev, f, opts)
        if st[0] in (SaidAs.FACT, SaidAs.PROBABLY) and not unseen(ev, f.text):
            return f, st, [f"beam caption {k} of {len(ev.finalists)}: the first named what was not seen"]
    missing = unseen(ev, best.text)
    if all(faint(ev, c) for c in missing):
        named = ", ".join(said_name(c) for c in missing)
        return best, _weaker(first, (SaidAs.PROBABLY, f"the {named} the caption names is only faintly seen")), []
    words = tokens(best.text)
    changed = []
    for cat in missing:
        new = _substitute(ev, cat, best.text)
        if new and frozenset({cat, category_of(new)}) in NEIGHBOURS and category_of(new) not in \
                _tag_categories(ev, WITNESS_TAG) and numbers(" ".join(words)).get(cat, "one") == "one":
            new = f"{said_name(cat)} or {new}"  # "a bicycle or a motorcycle": the detector may be the one wrong
        mended = captionfix.replace(words, cat, new) if new else None
        if mended is None:
            return best, (SaidAs.WITHHELD, f"the caption names a {said_name(cat)} that was not seen, "
                                           "so it was withheld"), []
        words, changed = mended, [*changed, f"{said_name(cat)} -> {new}"]
    said = _weaker(first, (SaidAs.PROBABLY, f"the caption named what was not seen ({', '.join(changed)})"))
    return replace(best, text=captionfix.sentence(words)), said, changed


# Classes the detector confuses with each other: a caption's one of them that the detector alone (no tag
# agreeing) sees as the other is said with both ("riding a bicycle or a motorcycle"), not as the detector's:
# a child's bicycle was "a moped" (issue 60). No val or tuning alt text changes (the two val captions mended
# so had a tag agreeing with the detector).
NEIGHBOURS = frozenset({frozenset({"bicycle", "motorcycle"}), frozenset({"car", "truck"}),
                        frozenset({"bus", "truck"})})


def _substitute(ev: PictureEvidence, cat: str, text: str) -> str | None:
    """What was seen in place of an unseen animal or vehicle: the surest seen one of its kind."""
    group = ANIMALS if cat in ANIMALS else VEHICLES if cat in VEHICLES else None
    if group is None:
        return None
    named = set(mentions(text))
    tagged = _tag_categories(ev, TAG_SEEN)
    found = [(ev.best_detection(c), c) for c in group if c not in named and seen(ev, c)]
    if not found:
        return None
    _, c = max(found)
    return tagged[c][0] if c in tagged else said_name(c)


def decide(ev: PictureEvidence, opts: Options | None = None, fact_check: FactCheck | None = None) -> Decision:
    """What may be said of the picture and how surely. ``fact_check``: the model's check that a careful
    reader would accept the caption as fact (``capdesk.describe.fact_check``); it only ever takes a fact
    away (to "Probably"), never makes one."""
    opts = opts or Options()
    ev = _people_of_a_strange_picture(ev)
    if ev.kind != PHOTO and (ev.kind in KIND_SAID or ev.kind == OTHER):
        return _of_kind(ev, opts)
    if ev.caption is None:
        return _without_caption(ev, opts, SaidAs.NONE, "the model gave no caption", "")
    guess = clean_caption(ev.caption.text)
    f, (said_as, reason), mended = choose(ev, opts)
    if said_as in (SaidAs.WITHHELD, SaidAs.NONE):
        return _without_caption(ev, opts, said_as, reason, guess)
    if ev.transparent >= CUT_OUT:
        seen_instead = _without_caption(ev, opts, SaidAs.WITHHELD, "the picture is a cut-out on a transparent "
                                        "background, with no scene to describe, so what was seen is said", guess)
        if seen_instead.objects or seen_instead.maybe or seen_instead.guesses or seen_instead.perhaps:
            return seen_instead
    words = captionfix.without_repeats(tokens(f.text))
    if not SAY_SEX:
        neutral = captionfix.neutral(words)
        if neutral != words:
            words, mended = neutral, [*mended, "who: said as a person or a child"]
    words, dropped = _without_unseen_details(ev, words)
    words, dropped = _without_unseen_colours(ev, words, dropped)
    words, dropped = _without_unseen_places(ev, words, dropped)
    words = captionfix.without_repeats(words)  # a detail left out can leave one ("a kitchen and kitchen")
    words, counts, doubt = _recount(ev, words)
    if doubt and said_as is SaidAs.FACT:
        said_as, reason = SaidAs.PROBABLY, "the object detector does not confirm how many the caption says"
    cap = clean_caption(captionfix.sentence(words))
    fact = ""
    if said_as is SaidAs.FACT and checkable(ev) and any(c in CHECKED for c in mentions(cap)):
        # Of a caption about people, animals or vehicles only the subject and how many are said as fact, where
        # the detector confirms them; what they do and where is said as probable ("A dog, probably running
        # through the grass."). A scene with none of them ("A stream in the woods.") has no subject to confirm
        # and stays whole, under the fact check.
        fact = subject_fact.confirmed(ev, tokens(cap)) or ""
        if not fact:
            said_as, reason = SaidAs.PROBABLY, ("the object detector does not confirm the caption's subject, or "
                                                "how many there are, well enough to say it as fact")
    elif said_as is SaidAs.FACT and fact_check is not None and not fact_check.passes(ev, cap):
        said_as, reason = SaidAs.PROBABLY, ("what the caption says the subject does, or how many there are, "
                                            "is not confirmed well enough by what was seen to be said as fact")
    d = Decision(said_as, cap, guess, text=ev.text, reason=reason, mended=mended + dropped + counts, fact=fact)
    d.maybe = _tags_with_caption(ev, opts, d)
    return d


def _without_unseen_details(ev: PictureEvidence, words: list[str]) -> tuple[list[str], list[str]]:
    """The caption without the objects it names in passing (a bench, a clock tower, a tennis racket held)
    that neither the detector nor a tag sees: on the everyday val split 65% of such objects in captions
    said as "Probably" and 29% in facts are absent from every human caption, against 15% and 4% of
    those seen."""
    if not checkable(ev):
        return words, []
    dropped = []
    for cat in mentions(" ".join(words)):
        if cat in CHECKED or ev.best_detection(cat) >= THING_SEEN or cat in _tag_categories(ev, TAG_SEEN):
            continue
        shorter = captionfix.drop(words, cat)
        if shorter is not None:
            words, dropped = shorter, [*dropped, f"not seen, left out: {said_name(cat)}"]
    return words, dropped


def _without_unseen_colours(ev: PictureEvidence, words: list[str], dropped: list[str]) -> tuple[list[str], list[str]]:
    """The caption without the colours the concepts do not see (under COLOUR_SEEN)."""
    if not ev.concepts or ev.overhead:
        return words, dropped
    unsure = {c for c in captionfix.COLOURS & set(words) if ev.concepts.get(c, 0.0) < COLOUR_SEEN}
    fewer = captionfix.without_colours(words, unsure) if unsure else words
    if fewer == words:
        return words, dropped
    return fewer, [*dropped, f"colour not seen, left out: {', '.join(sorted(unsure - set(fewer)))}"]


def _without_unseen_places(ev: PictureEvidence, words: list[str], dropped: list[str]) -> tuple[list[str], list[str]]:
    """The caption without the phrases saying where ("in front of a building") whose place the concepts
    do not see (under PLACE_SEEN)."""
    if not ev.concepts or ev.overhead:
        return words, dropped
    for place in [w for w in dict.fromkeys(words) if w in PLACES | THINGS and ev.concepts.get(w, 0.0) < PLACE_SEEN]:
        shorter = captionfix.drop_place(words, place)
        if shorter is not None:
            what = "place" if place in PLACES else "thing"
            words, dropped = shorter, [*dropped, f"{what} not seen, left out: {place}"]
    return words, dropped


def _people_of_a_strange_picture(ev: PictureEvidence) -> PictureEvidence:
    """The evidence with only the people big enough to be a subject, for a picture unlike the model's
    photos: tourists at the foot of a monument are no subject to describe it by."""
    if ev.in_domain is not False or not ev.size:
        return ev
    w, h = ev.size
    keep = [d for d in ev.detections
            if d.label not in PEOPLE or (d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) >= STRANGE_PERSON_AREA * w * h]
    return ev if len(keep) == len(ev.detections) else replace(ev, detections=keep)


def _recount(ev: PictureEvidence, words: list[str]) -> tuple[list[str], list[str], bool]:
    """The caption with how many people and animals it says mended where the detector is sure, what
    was changed, and whether a number it says is in doubt (the detector sees more than it says)."""
    if not checkable(ev):
        return words, [], False
    changed, doubt = [], False
    # Two different people each opened by "a" are two ("a little child ... with a person in a pink
    # shirt"): read as one, the detector's two would make it "two little children ... with a person".
    for cat, n in numbers(" ".join(words), PEOPLE).items():
        if cat not in PEOPLE | ANIMALS:
            continue
        sure, anywhere = ev.count(cat, COUNT_SURE, COUNT_AREA), ev.count(cat, COUNT_ANY, COUNT_AREA)
        want = 1 if n == "several" and anywhere <= 1 else sure if n == "one" and sure >= 2 else None
        mended = None if want is None else captionfix.recount(words, cat, want)
        if mended is not None:
            words = mended
            changed.append(f"how many {said_name(cat)}: {want}")
            continue
        if n == "one" and cat in ANIMALS and ev.count(cat, HEDGE_FROM, DOUBT_AREA) == 2 and \
                (hedged := captionfix.recount(words, cat, 2, ONE_OR_TWO)) is not None:
            words = hedged
            changed.append(f"how many {said_name(cat)}: {ONE_OR_TWO}")
        doubt = doubt or count_in_doubt(ev, cat, n)
    return words, changed, doubt


def count_in_doubt(ev: PictureEvidence, cat: str, n: str) -> bool:
    """Whether the evidence leaves the caption's "one" or "several" of ``cat`` unconfirmed: the detector
    sees more than one where it says one (or too few where it says several), the beam's other captions
    say another number, or, for several people, the concepts do not see a group."""
    boxes = ev.count(cat, COUNT_DOUBT, DOUBT_AREA)
    if boxes >= 2 if n == "one" else boxes < SEVERAL_BOXES:
        return True
    if COUNT_AGREE and any(numbers(f.text).get(cat, n) != n for f in ev.finalists[1:]):
        return True
    return n == "several" and cat in PEOPLE and bool(ev.concepts) and ev.concepts.get("group", 0.0) < GROUP_SEEN


def _tags_with_caption(ev: PictureEvidence, opts: Options, d: Decision) -> list[str]:
    """Tags said beside a caption: never one that contradicts it, and only one that adds to it."""
    if opts.tags == "never" or (opts.tags == "auto" and d.said_as is SaidAs.FACT):
        return []
    named = set(mentions(d.caption))
    said = {captionfix.singular(w) for w in tokens(d.caption)}
    out = []
    for label, p in ev.tags:
        if p < ev.tag_threshold:
            continue
        word = plain_name(label)
        cat = category_of(word)
        if cat and cat not in named and any(_same_kind(cat, c) for c in named):
            continue  # a dog tag beside a horse caption: one of them is wrong, and the caption was checked
        if all(captionfix.singular(w) in said for w in tokens(word)):
            continue
        out.append(counted(word, 1))
    return out


def _same_kind(a: str, b: str) -> bool:
    return any(a in g and b in g for g in (PEOPLE, ANIMALS, VEHICLES))


def _without_caption(ev: PictureEvidence, opts: Options, said_as: SaidAs, reason: str | None,
                     guess: str) -> Decision:
    """What is seen, when no scene caption is said: confident objects, tags, text, or the pixels."""
    objects, covered = seen_objects(ev)
    objects, guesses, perhaps, covered = _lone_witnesses(ev, objects, covered)
    maybe = []
    if opts.tags != "never":
        floor = ev.tag_threshold
        for label, p in ev.tags:
            word = plain_name(label)
            cat = category_of(word)
            if p >= floor and (cat is None or cat not in covered) and len(objects) + len(maybe) < MAX_SAID and \
                    not any(f" {counted(word, 1)}" in f" {d}" for d in perhaps):
                maybe.append(counted(word, 1))
        if not objects and not maybe and not ev.text and not guesses and not perhaps:
            maybe = setting(ev) or last_resort_tag(ev)
            if not maybe and (subject := subjects.guess(ev.tags)):
                perhaps = [subject]
    return Decision(said_as, "", guess, objects, maybe, ev.text, ev.plain_fact, reason, guesses=guesses,
                    perhaps=perhaps)


# A thing said without a caption is said plainly only where two witnesses of the same kind agree: the
# detector's box and an ImageNet tag of its category (from WITNESS_TAG), or a concept word naming it from
# LONE_CONCEPT. The detector alone, however sure, called a raccoon a cat, a world map a dog, the Starry
# Night a dog and a fox a giraffe (docs/training.md, "No lone witness said as fact"); alone, it is said as
# "Probably a cat.", and where a tag names another animal (or vehicle, or a thing it is mistaken for) as
# "An animal, perhaps a raccoon or a cat.".
LONE_CONCEPT = 0.5
LOOK_ALIKES = {"kite": frozenset({"balloon", "parachute"}), "frisbee": frozenset({"plate", "tray"}),
               "sports ball": frozenset({"balloon", "bubble"})}


def _lone_witnesses(ev: PictureEvidence, objects: list[str], covered: set[str]) \
        -> tuple[list[str], list[str], list[str], set[str]]:
    """The objects two witnesses agree on, those one alone sees (guesses), those a tag disputes (said as
    "perhaps" with both names), and the categories all of them cover (a tag said for none of them)."""
    if not ev.detector or not objects:
        return objects, [], [], covered
    weak = set(_tag_categories(ev, WITNESS_TAG)) | {KIND_OF[plain_name(t)] for t, p in ev.tags
                                                    if p >= WITNESS_TAG and plain_name(t) in KIND_OF}
    tagged = _tag_categories(ev, ev.tag_threshold)
    phrases = {_object_phrase(ev, c, tagged): c for c in covered}
    sure, lone, disputed, cover = [], [], [], set(covered)
    for phrase in objects:
        label = phrases.get(phrase)
        if label is None or label in weak or any(
                p >= LONE_CONCEPT and category_of(w) == label for w, p in ev.concepts.items()):
            sure.append(phrase)
            continue
        rival = _rival(ev, label)
        if rival is None:
            lone.append(phrase)
            continue
        word, cat = rival
        cover |= {cat} if cat else set()
        other = counted(word, 1)
        if label in ANIMALS and not (cat in ANIMALS or KIND_OF.get(word)):
            disputed.append(f"an animal, perhaps {other} or {phrase}")
        elif label in ANIMALS:
            disputed.append(f"an animal, perhaps {phrase} or {other}")
        else:
            disputed.append(f"perhaps {phrase} or {other}")
    return sure, lone, disputed, cover


def _rival(ev: PictureEvidence, label: str) -> tuple[str, str | None] | None:
    """A tag from WITNESS_TAG that names something else of the same kind as the detector's ``label``
    (another animal, another vehicle, a thing it is mistaken for): its plain word and COCO category."""
    for tag, p in ev.tags:
        if p < WITNESS_TAG:
            continue
        word = plain_name(tag)
        cat = category_of(word) or KIND_OF.get(word)
        if cat == label:
            continue
        if label in ANIMALS and (tag in IMAGENET_ANIMALS or cat in ANIMALS) or \
                label in VEHICLES and cat in VEHICLES or word in LOOK_ALIKES.get(label, ()):
            return word, cat
    return None


def last_resort_tag(ev: PictureEvidence) -> list[str]:
    """The top tag from LAST_RESORT_TAG, for a photo about which nothing else would be said."""
    if ev.kind != PHOTO or not ev.tags or ev.tags[0][1] < LAST_RESORT_TAG:
        return []
    return [counted(plain_name(ev.tags[0][0]), 1)]


def setting(ev: PictureEvidence) -> list[str]:
    """'grass', 'a field': where a photo is, from the concepts' sure setting words (not for pictures seen
    from above, whose models have other words, nor for what is not a photo)."""
    if ev.overhead or ev.kind != PHOTO:
        return []
    out: list[str] = []
    for w, p in sorted(ev.concepts.items(), key=lambda wp: -wp[1]):
        said = SCENE_WORDS.get(w)
        if p >= SCENE_SAY and said and said not in out:
            out.append(said)
    return out[:MAX_SAID]


# The kinds a photo of a thing on a plain ground is taken for are said as fact from KIND_FACT, and as a guess
# under it ("Probably a drawing."): the kind model is a lone witness. Measured on the 136 photos of the tuning
# set gathered outside Flickr and COCO (training/studies/ordinary_tuning_labels.csv): 11 were named another
# kind (a caterpillar, a knife, a spray can and vegetables on white called drawings or icons, a drum kit a
# diagram) at 0.52 to 0.89, none from 0.9; none was named a chart, map, table, page, screenshot or music.
KIND_FACT = 0.9
TAKEN_FOR_PHOTOS = frozenset({"drawing", "icon", "diagram", "painting", "render3d"})


def _of_kind(ev: PictureEvidence, opts: Options) -> Decision:
    """A picture that is surely not a photo is said to be what it is, and never captioned as a scene: the
    caption models learnt from photos only. A drawing or painting is said with what it shows where the
    detector or the tags see it; in a diagram, a chart, a screenshot or a map the detector's people and things
    are icons and symbols, so only the text read goes with it, as in a picture surely not a photo of no sure
    kind (random noise gave "Perhaps an animal.")."""
    name = KIND_SAID.get(ev.kind, "")
    reason = (f"the picture is {name or 'not a photo'}, unlike the photos the model learnt from, so no scene "
              "caption was said")
    if ev.kind in DEPICTS:
        d = _without_caption(ev, opts, SaidAs.WITHHELD, reason, clean_caption(ev.caption.text) if ev.caption else "")
    else:
        d = Decision(SaidAs.WITHHELD, text=ev.text, reason=reason)
    d.kind = name
    d.kind_sure = ev.kind not in TAKEN_FOR_PHOTOS or ev.kind_probability is None or ev.kind_probability >= KIND_FACT
    return d


def seen_objects(ev: PictureEvidence) -> tuple[list[str], set[str]]:
    """'two people', 'a fire truck': the confident detections (named as a tag of theirs names them,
    when one does), and the categories they cover."""
    if not ev.detector:
        if ev.in_domain and ev.caption is not None and ev.concepts:
            words = [w for w, p in sorted(ev.concepts.items(), key=lambda wp: -wp[1])
                     if p >= CONCEPT_SAY and category_of(w) and w != "person"]
            return [counted(w, 1) for w in words[:MAX_SAID]], {category_of(w) or w for w in words[:MAX_SAID]}
        return [], set()
    tagged = _tag_categories(ev, ev.tag_threshold)
    weak = _tag_categories(ev, WITNESS_TAG)
    best: dict[str, float] = {}
    for d in ev.detections:
        # Said from SAY_OBJECT, or from THING_SEEN where a tag of the same kind agrees (two witnesses, and
        # then as sure as the surer of them: the cup the tag calls espresso comes before the table).
        if other_animal(ev, d.label) or not _subject_sized(ev, d) or (
                d.label in PEOPLE and ev.in_domain is False and d.score < STRANGE_PERSON):
            continue
        if d.score >= SAY_OBJECT or (d.score >= THING_SEEN and d.label in tagged) or (
                d.score >= WITNESS_DETECTION and d.label in weak):
            best[d.label] = max(best.get(d.label, 0.0), d.score, tagged.get(d.label, ("", 0.0))[1])
    said = sorted(best, key=lambda label: -best[label])[:MAX_SAID]
    return [_object_phrase(ev, c, tagged) for c in said], set(said)


def _object_phrase(ev: PictureEvidence, c: str, tagged: dict[str, tuple[str, float]]) -> str:
    return counted(tagged[c][0] if c in tagged else said_name(c), max(ev.count(c, COUNT_SURE, COUNT_AREA), 1))
