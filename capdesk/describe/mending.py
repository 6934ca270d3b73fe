"""How a caption is mended where the evidence says otherwise: another beam caption chosen, a noun the picture
does not hold replaced by what was seen, a detail, colour or place nothing sees left out, how many mended
where the detector is sure. The word operations are ``capdesk.describe.captionfix``'s; the numbers are the
model's settings (``capdesk.describe.settings``), each with the measurement that set it.
"""

from __future__ import annotations

from dataclasses import replace

from capdesk.describe import captionfix
from capdesk.describe.evidence import Finalist, PictureEvidence
from capdesk.describe.numbers import ONE_OR_TWO
from capdesk.describe.objects import mentions, said_name, tokens
from capdesk.describe.plainwords import category_of
from capdesk.describe.saying import Options, Standing, standing, weaker
from capdesk.describe.seeing import (
    ANIMALS,
    CHECKED,
    PEOPLE,
    VEHICLES,
    checkable,
    count_in_doubt,
    faint,
    seen,
    tag_categories,
    unseen,
)
from capdesk.describe.sentence import parse
from capdesk.describe.settings import PolicySettings
from capdesk.status import SaidAs

# Classes the detector confuses with each other: a caption's one of them that the detector alone (no tag
# agreeing) sees as the other is said with both ("riding a bicycle or a motorcycle"), not as the detector's:
# a child's bicycle was "a moped" (issue 60). No val or tuning alt text changes (the two val captions mended
# so had a tag agreeing with the detector).
NEIGHBOURS = frozenset({frozenset({"bicycle", "motorcycle"}), frozenset({"car", "truck"}),
                        frozenset({"bus", "truck"})})
# Where a caption says a thing is ("in front of a building", "on a sidewalk"): each word is one of the everyday
# concept head's, checked from the ``place_seen`` setting.
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


def choose(ev: PictureEvidence, opts: Options, s: PolicySettings) -> tuple[Finalist, Standing, list[str]]:
    """The caption to say: the best finalist the evidence agrees with, or the best one with its unseen
    nouns replaced by what was seen; with its standing and what was changed."""
    best = ev.finalists[0]
    first = standing(ev, best, opts, s)
    if first[0] in (SaidAs.WITHHELD, SaidAs.NONE) or not unseen(ev, best.text, s):
        return best, first, []
    for k, f in enumerate(ev.finalists[1:], 2):
        st = standing(ev, f, opts, s)
        if st[0] in (SaidAs.FACT, SaidAs.PROBABLY) and not unseen(ev, f.text, s):
            return f, st, [f"beam caption {k} of {len(ev.finalists)}: the first named what was not seen"]
    missing = unseen(ev, best.text, s)
    if all(faint(ev, c, s) for c in missing):
        named = ", ".join(said_name(c) for c in missing)
        return best, weaker(first, (SaidAs.PROBABLY, f"the {named} the caption names is only faintly seen")), []
    words = tokens(best.text)
    changed = []
    for cat in missing:
        new = _substitute(ev, cat, best.text, s)
        if new and frozenset({cat, category_of(new)}) in NEIGHBOURS and category_of(new) not in \
                tag_categories(ev, s.seeing.witness_tag) and parse(words).counts(frozenset()).get(cat, "one") == "one":
            new = f"{said_name(cat)} or {new}"  # "a bicycle or a motorcycle": the detector may be the one wrong
        mended = captionfix.replace(words, cat, new) if new else None
        if mended is None:
            return best, (SaidAs.WITHHELD, f"the caption names a {said_name(cat)} that was not seen, "
                                           "so it was withheld"), []
        words, changed = mended, [*changed, f"{said_name(cat)} -> {new}"]
    said = weaker(first, (SaidAs.PROBABLY, f"the caption named what was not seen ({', '.join(changed)})"))
    return replace(best, text=captionfix.sentence(words)), said, changed


def _substitute(ev: PictureEvidence, cat: str, text: str, s: PolicySettings) -> str | None:
    """What was seen in place of an unseen animal or vehicle: the surest seen one of its kind."""
    group = ANIMALS if cat in ANIMALS else VEHICLES if cat in VEHICLES else None
    if group is None:
        return None
    named = set(mentions(text))
    tagged = tag_categories(ev, s.seeing.tag_seen)
    found = [(ev.best_detection(c), c) for c in group if c not in named and seen(ev, c, s)]
    if not found:
        return None
    _, c = max(found)
    return tagged[c][0] if c in tagged else said_name(c)


def without_unseen_details(ev: PictureEvidence, words: list[str], s: PolicySettings) -> tuple[list[str], list[str]]:
    """The caption without the objects it names in passing (a bench, a clock tower, a tennis racket held)
    that neither the detector nor a tag sees: on the everyday val split 65% of such objects in captions
    said as "Probably" and 29% in facts are absent from every human caption, against 15% and 4% of
    those seen."""
    if not checkable(ev):
        return words, []
    dropped = []
    tagged = tag_categories(ev, s.seeing.tag_seen)
    for cat in mentions(" ".join(words)):
        if cat in CHECKED or ev.best_detection(cat) >= s.seeing.thing_seen or cat in tagged:
            continue
        shorter = captionfix.drop(words, cat)
        if shorter is not None:
            words, dropped = shorter, [*dropped, f"not seen, left out: {said_name(cat)}"]
    return words, dropped


def without_unseen_colours(ev: PictureEvidence, words: list[str], dropped: list[str],
                           s: PolicySettings) -> tuple[list[str], list[str]]:
    """The caption without the colours the concepts do not see (under the ``colour_seen`` setting)."""
    if not ev.concepts or ev.overhead:
        return words, dropped
    unsure = {c for c in captionfix.COLOURS & set(words) if ev.concepts.get(c, 0.0) < s.mending.colour_seen}
    fewer = captionfix.without_colours(words, unsure) if unsure else words
    if fewer == words:
        return words, dropped
    return fewer, [*dropped, f"colour not seen, left out: {', '.join(sorted(unsure - set(fewer)))}"]


def without_unseen_places(ev: PictureEvidence, words: list[str], dropped: list[str],
                          s: PolicySettings) -> tuple[list[str], list[str]]:
    """The caption without the phrases saying where ("in front of a building") whose place the concepts
    do not see (under the ``place_seen`` setting), and the things named in passing that they do not see."""
    if not ev.concepts or ev.overhead:
        return words, dropped
    floor = s.mending.place_seen
    for place in [w for w in dict.fromkeys(words) if w in PLACES | THINGS and ev.concepts.get(w, 0.0) < floor]:
        shorter = captionfix.drop_place(words, place)
        if shorter is not None:
            what = "place" if place in PLACES else "thing"
            words, dropped = shorter, [*dropped, f"{what} not seen, left out: {place}"]
    return words, dropped


def recount(ev: PictureEvidence, words: list[str], s: PolicySettings) -> tuple[list[str], list[str], bool]:
    """The caption with how many people and animals it says mended where the detector is sure, what
    was changed, and whether a number it says is in doubt (the detector sees more than it says)."""
    if not checkable(ev):
        return words, [], False
    m = s.mending
    changed, doubt = [], False
    # Two different people each opened by "a" are two ("a little child ... with a person in a pink
    # shirt"): read as one, the detector's two would make it "two little children ... with a person".
    for cat, n in parse(words).counts(PEOPLE).items():
        if cat not in PEOPLE | ANIMALS:
            continue
        sure, anywhere = ev.count(cat, m.count_sure, m.count_area), ev.count(cat, m.count_any, m.count_area)
        want = 1 if n == "several" and anywhere <= 1 else sure if n == "one" and sure >= 2 else None
        mended = None if want is None else captionfix.recount(words, cat, want)
        if mended is not None:
            words = mended
            changed.append(f"how many {said_name(cat)}: {want}")
            continue
        if n == "one" and cat in ANIMALS and ev.count(cat, m.hedge_from, s.seeing.doubt_area) == 2 and \
                (hedged := captionfix.recount(words, cat, 2, ONE_OR_TWO)) is not None:
            words = hedged
            changed.append(f"how many {said_name(cat)}: {ONE_OR_TWO}")
        doubt = doubt or count_in_doubt(ev, cat, n, s)
    return words, changed, doubt
