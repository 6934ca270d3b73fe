"""What the evidence shows: whether a person, animal or vehicle a caption names is in the picture, which
objects are seen well enough to say without a caption, and where witnesses agree or dispute.

A person, animal or vehicle is seen by the object detector (its calibrated score,
``capdesk.describe.calibration``) or, for animals and vehicles, by an ImageNet tag. Where the detector is
missing (not installed, or a bundle that fails its check) nothing can be checked that way. The numbers are
the model's ``Seeing`` settings (``capdesk.describe.settings``), each with the measurement that set it.
"""

from __future__ import annotations

from dataclasses import replace

from capdesk.describe.evidence import Detection, PictureEvidence
from capdesk.describe.imagenet_animals import ANIMALS as IMAGENET_ANIMALS
from capdesk.describe.numbers import each_number, numbers
from capdesk.describe.objects import mentions, said_name
from capdesk.describe.plainwords import MASS, PAIRS, category_of, counted, plain_name, plural
from capdesk.describe.sentence import PEOPLE
from capdesk.describe.settings import PolicySettings

ANIMALS = frozenset({"bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"})
VEHICLES = frozenset({"bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"})
CHECKED = PEOPLE | ANIMALS | VEHICLES  # what a said caption may name only when it is seen
KIND_OF = {"giant panda": "bear", "dingo": "dog"}  # ImageNet animals that are one of the detector's kinds
SEEN_FROM_ABOVE = frozenset({"airplane", "boat", "car", "truck", "bus", "train"})
# Things the detector is mistaken for, by the tags that name them: a kite tag-read as a balloon is disputed.
LOOK_ALIKES = {"kite": frozenset({"balloon", "parachute"}), "frisbee": frozenset({"plate", "tray"}),
               "sports ball": frozenset({"balloon", "bubble"})}


def tag_categories(ev: PictureEvidence, floor: float) -> dict[str, tuple[str, float]]:
    """Category -> (plain word, probability) of the tags from ``floor`` that name a COCO category."""
    out: dict[str, tuple[str, float]] = {}
    for label, p in ev.tags:
        word = plain_name(label)
        cat = category_of(word)
        if cat and p >= floor and cat not in out:
            out[cat] = (word, p)
    return out


def person_score(ev: PictureEvidence, s: PolicySettings) -> float:
    """The surest person box big enough to be a caption's subject."""
    return max((d.score for d in ev.detections if d.label in PEOPLE and subject_sized(ev, d, s)), default=0.0)


def subject_sized(ev: PictureEvidence, d: Detection, s: PolicySettings) -> bool:
    """Whether a person box is big enough to say (any box, for a record without the picture's size)."""
    w, h = ev.size or (0, 0)
    return d.label not in PEOPLE or (d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) >= s.seeing.person_area * w * h


def seen(ev: PictureEvidence, category: str, s: PolicySettings) -> bool:
    if category in PEOPLE:
        return person_score(ev, s) >= s.seeing.person_seen
    if other_animal(ev, category):
        return False
    if ev.best_detection(category) >= s.seeing.thing_seen:
        return True
    tag = tag_categories(ev, s.seeing.tag_seen).get(category)
    return tag is not None and not (category in ANIMALS and tag[1] < s.seeing.outseen_tag and any(
        d.label in ANIMALS and d.label != category and d.score >= s.seeing.outseen_by for d in ev.detections))


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


def faint(ev: PictureEvidence, category: str, s: PolicySettings) -> bool:
    """Whether a person the detector does not quite see is there at all (a caption naming one is then
    "Probably" at most, rather than withheld): in a picture less typical of the model's photos, only where the
    concepts see a person too."""
    return category in PEOPLE and person_score(ev, s) >= s.seeing.person_faint and (
        ev.typical or not ev.concepts or ev.concepts.get("person", 0.0) >= s.seeing.faint_concept)


def unseen(ev: PictureEvidence, text: str, s: PolicySettings) -> list[str]:
    """The people, animals and vehicles ``text`` names that the evidence does not show."""
    if not checkable(ev):
        return []
    return [c for c in mentions(text) if c in CHECKED and not seen(ev, c, s)]


def close_up(ev: PictureEvidence, s: PolicySettings) -> bool:
    """Whether the detector sees an object that fills much of the picture (not a scene seen from afar)."""
    w, h = ev.size or _extent(ev)
    for d in ev.detections:
        x0, y0, x1, y1 = d.box
        big = w and h and (x1 - x0) * (y1 - y0) >= s.seeing.close_up_area * w * h
        if d.score >= s.seeing.close_up_score and big and d.label not in SEEN_FROM_ABOVE:
            return True
    return False


def _extent(ev: PictureEvidence) -> tuple[int, int]:
    """The picture's size as far as the boxes tell (they are clipped to it), for a record without one."""
    return (max((d.box[2] for d in ev.detections), default=0), max((d.box[3] for d in ev.detections), default=0))


def people_of_a_strange_picture(ev: PictureEvidence, s: PolicySettings) -> PictureEvidence:
    """The evidence with only the people big enough to be a subject, for a picture unlike the model's
    photos: tourists at the foot of a monument are no subject to describe it by."""
    if ev.in_domain is not False or not ev.size:
        return ev
    w, h = ev.size
    floor = s.seeing.strange_person_area * w * h
    keep = [d for d in ev.detections if d.label not in PEOPLE or (d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) >= floor]
    return ev if len(keep) == len(ev.detections) else replace(ev, detections=keep)


def count_in_doubt(ev: PictureEvidence, cat: str, n: str, s: PolicySettings) -> bool:
    """Whether the evidence leaves the caption's "one" or "several" of ``cat`` unconfirmed: the detector
    sees more than one where it says one (or too few where it says several), the beam's other captions
    say another number, or, for several people, the concepts do not see a group."""
    boxes = ev.count(cat, s.seeing.count_doubt, s.seeing.doubt_area)
    if boxes >= 2 if n == "one" else boxes < s.seeing.several_boxes:
        return True
    if s.seeing.count_agree and any(numbers(f.text).get(cat, n) != n for f in ev.finalists[1:]):
        return True
    return n == "several" and cat in PEOPLE and bool(ev.concepts) and \
        ev.concepts.get("group", 0.0) < s.seeing.group_seen


def seen_objects(ev: PictureEvidence, s: PolicySettings) -> tuple[list[str], set[str]]:
    """'two people', 'a fire truck': the confident detections (named as a tag of theirs names them,
    when one does), and the categories they cover."""
    if not ev.detector:
        if ev.in_domain and ev.caption is not None and ev.concepts:
            words = [w for w, p in sorted(ev.concepts.items(), key=lambda wp: -wp[1])
                     if p >= s.saying.concept_say and category_of(w) and w != "person"]
            top = words[:s.saying.max_said]
            return [counted(w, 1) for w in top], {category_of(w) or w for w in top}
        return [], set()
    tagged = tag_categories(ev, ev.tag_threshold)
    weak = tag_categories(ev, s.seeing.witness_tag)
    best: dict[str, float] = {}
    for d in ev.detections:
        # Said from say_object, or from thing_seen where a tag of the same kind agrees (two witnesses, and
        # then as sure as the surer of them: the cup the tag calls espresso comes before the table).
        if other_animal(ev, d.label) or not subject_sized(ev, d, s) or (
                d.label in PEOPLE and ev.in_domain is False and d.score < s.seeing.strange_person):
            continue
        if d.score >= s.saying.say_object or (d.score >= s.seeing.thing_seen and d.label in tagged) or (
                d.score >= s.seeing.witness_detection and d.label in weak):
            best[d.label] = max(best.get(d.label, 0.0), d.score, tagged.get(d.label, ("", 0.0))[1])
    said = sorted(best, key=lambda label: -best[label])[:s.saying.max_said]
    return [object_phrase(ev, c, tagged, s) for c in said], set(said)


def object_phrase(ev: PictureEvidence, c: str, tagged: dict[str, tuple[str, float]], s: PolicySettings) -> str:
    """'a vase', 'two vases', or 'vases' where one sure box is all the detector counts but more than one
    is there: its number is then not said, and neither is 'one'."""
    n = ev.count(c, s.mending.count_sure, s.mending.count_area)
    word = tagged[c][0] if c in tagged else said_name(c)
    if n <= 1 and word not in MASS and word.rpartition(" ")[2] not in PAIRS and more_than_one(ev, c, s):
        return plural(word)
    return counted(word, max(n, 1))


def more_than_one(ev: PictureEvidence, c: str, s: PolicySettings) -> bool:
    """Whether a thing (not a person or an animal) the detector counts once is likely more than one: a second
    box of its kind from ``more_boxes`` (several kites, one boxed surely, two at 0.35-0.44; two vases, the
    second at 0.897), or every caption of the beam saying several of it wherever it names it (one box over a
    bunch of bananas; not "A car ... with cars in the background", said of one car)."""
    if c in PEOPLE or c in ANIMALS or s.seeing.more_boxes <= 0:
        return False
    if _apart(ev, c, s.seeing.more_boxes, s.seeing.doubt_area) >= 2:
        return True
    return bool(ev.finalists) and all(each_number(f.text).get(c) == {"several"} for f in ev.finalists)


def _apart(ev: PictureEvidence, c: str, floor: float, area_share: float) -> int:
    """Boxes of ``c`` from ``floor`` (each at least ``area_share`` of the largest) that lie mostly outside
    the surer ones (or hold them mostly outside it): a second box over the same bicycle and its rider is no
    second bicycle."""
    boxes = sorted((d for d in ev.detections if d.label == c and d.score >= floor), key=lambda d: -d.score)
    areas = [(d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) for d in boxes]
    kept: list[tuple[float, float, float, float]] = []
    for d, a in zip(boxes, areas):
        if a < area_share * max(areas) or a <= 0:
            continue
        if all(_shared(d.box, k) < 0.5 for k in kept):
            kept.append(d.box)
    return len(kept)


def _shared(a: tuple, b: tuple) -> float:
    """How much of the smaller of two boxes the other covers."""
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return inter / small if small > 0 else 1.0


def lone_witnesses(ev: PictureEvidence, objects: list[str], covered: set[str], s: PolicySettings) \
        -> tuple[list[str], list[str], list[str], set[str]]:
    """The objects two witnesses agree on, those one alone sees (guesses), those a tag disputes (said as
    "perhaps" with both names), and the categories all of them cover (a tag said for none of them).

    A thing said without a caption is said plainly only where two witnesses of the same kind agree: the
    detector's box and an ImageNet tag of its category, or a concept word naming it. The detector alone,
    however sure, called a raccoon a cat, a world map a dog, the Starry Night a dog and a fox a giraffe
    (docs/training.md, "No lone witness said as fact"); alone, it is said as "Probably a cat.", and where a
    tag names another animal (or vehicle, or a thing it is mistaken for) as "An animal, perhaps a raccoon
    or a cat."."""
    if not ev.detector or not objects:
        return objects, [], [], covered
    floor = s.seeing.witness_tag
    weak = set(tag_categories(ev, floor)) | {KIND_OF[plain_name(t)] for t, p in ev.tags
                                             if p >= floor and plain_name(t) in KIND_OF}
    tagged = tag_categories(ev, ev.tag_threshold)
    phrases = {object_phrase(ev, c, tagged, s): c for c in covered}
    sure, lone, disputed, cover = [], [], [], set(covered)
    for phrase in objects:
        label = phrases.get(phrase)
        if label is None or label in weak or any(
                p >= s.seeing.lone_concept and category_of(w) == label for w, p in ev.concepts.items()):
            sure.append(phrase)
            continue
        rival = _rival(ev, label, floor)
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


def _rival(ev: PictureEvidence, label: str, floor: float) -> tuple[str, str | None] | None:
    """A tag from ``floor`` that names something else of the same kind as the detector's ``label``
    (another animal, another vehicle, a thing it is mistaken for): its plain word and COCO category."""
    for tag, p in ev.tags:
        if p < floor:
            continue
        word = plain_name(tag)
        cat = category_of(word) or KIND_OF.get(word)
        if cat == label:
            continue
        if label in ANIMALS and (tag in IMAGENET_ANIMALS or cat in ANIMALS) or \
                label in VEHICLES and cat in VEHICLES or word in LOOK_ALIKES.get(label, ()):
            return word, cat
    return None


def same_kind(a: str, b: str) -> bool:
    return any(a in g and b in g for g in (PEOPLE, ANIMALS, VEHICLES))
