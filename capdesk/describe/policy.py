"""The one place that decides what may be said about a picture, and how surely.

From a picture's ``PictureEvidence`` alone: whether the scene caption is said as fact, as "Probably
...", or withheld; which of the beam's captions, with which words mended (who, how many, a noun the
picture does not hold); and, where no caption is said, which objects and tags are. The words are
written by ``capdesk.describe.composer``. The decision reads three parts, each a module with its own
settings (``capdesk.describe.settings``: one frozen object per model, every number with the measurement
that set it): what is seen (``seeing``), how surely a caption is said (``saying``) and how it is mended
(``mending``); a fact's subject and how many are confirmed by ``subject_fact``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capdesk.describe import captionfix, subject_fact, subjects
from capdesk.describe.alttext import clean_caption
from capdesk.describe.evidence import PictureEvidence
from capdesk.describe.fact_check import FactCheck
from capdesk.describe.mending import (
    choose,
    recount,
    without_unseen_colours,
    without_unseen_details,
    without_unseen_places,
)
from capdesk.describe.objects import tokens
from capdesk.describe.picture_kind import DEPICTS, OTHER, PHOTO
from capdesk.describe.picture_kind import SAID as KIND_SAID
from capdesk.describe.plainwords import NUMBERS, category_of, counted, plain_name
from capdesk.describe.saying import Options
from capdesk.describe.seeing import (
    CHECKED,
    checkable,
    lone_witnesses,
    people_of_a_strange_picture,
    same_kind,
    seen_objects,
)
from capdesk.describe.sentence import PEOPLE, named, singular
from capdesk.describe.settings import DEFAULT, PolicySettings
from capdesk.status import SaidAs

__all__ = ["Decision", "Options", "decide", "setting", "last_resort_tag", "SCENE_WORDS"]

# The setting words said where nothing else is ("May contain: grass, a field."), as the concepts name them;
# "road" (0 of 1 val photos from 0.7) is left out, and so are sky, forest and wood, which no val photo reaches
# 0.7 for (training/studies/scene_words.py on a facts_eval.py --dump of val).
SCENE_WORDS = {"water": "water", "ocean": "the sea", "lake": "a lake", "river": "a river", "snow": "snow",
               "grass": "grass", "field": "a field", "mountain": "a mountain", "sand": "sand", "tree": "trees",
               "city": "a city", "street": "a street", "building": "a building"}
# The kinds a photo of a thing on a plain ground is taken for: said as a guess under the kind_fact setting.
# Screenshots too: tuning photos against a blank sky or on white were called screenshots at 0.52 to 0.98 (a
# robin on a rail, a yellow flower, a chameleon, a kingfisher, by one kind network or another).
TAKEN_FOR_PHOTOS = frozenset({"drawing", "icon", "diagram", "painting", "render3d", "screenshot"})
# Charts too: other kinds are taken for charts. Of the pictures of held-out sources a kind network that never saw
# them called charts (training/studies/picture_kind_bands.py), 45 of 108 were charts under 0.9 (68 street maps
# among the rest) and 75 of 80 from 0.9; music, tables and pages of text were right at every probability.
GUESSED_UNDER_FACT = TAKEN_FOR_PHOTOS | {"chart"}
# Kinds never said as fact: of the pictures of sources it never saw that a kind model with paintings called
# paintings, 27 of 32 were (gcompris-qt-data's famous paintings; the others photos), under the 95% a fact must
# reach (docs/training.md, "Paintings, tried again"). The shipped model has no painting kind; a bundle may.
ALWAYS_GUESSED = frozenset({"painting"})


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
    held: frozenset[str] = frozenset()  # the caption's things the detector sees: what is done with them is said
    counted: bool = False  # the detector confirms the number the caption says of its subject

    @property
    def review(self) -> bool:
        return self.said_as is not SaidAs.FACT


def decide(ev: PictureEvidence, opts: Options | None = None, fact_check: FactCheck | None = None,
           settings: PolicySettings = DEFAULT) -> Decision:
    """What may be said of the picture and how surely, by the model's ``settings``. ``fact_check``: the
    model's check that a careful reader would accept the caption as fact (``capdesk.describe.fact_check``);
    it only ever takes a fact away (to "Probably"), never makes one."""
    opts = opts or Options()
    s = settings
    ev = people_of_a_strange_picture(ev, s)
    if ev.kind != PHOTO and (ev.kind in KIND_SAID or ev.kind == OTHER):
        return _of_kind(ev, opts, s)
    if ev.caption is None:
        return _without_caption(ev, opts, s, SaidAs.NONE, "the model gave no caption", "")
    guess = clean_caption(ev.caption.text)
    f, (said_as, reason), mended = choose(ev, opts, s)
    if said_as in (SaidAs.WITHHELD, SaidAs.NONE):
        return _without_caption(ev, opts, s, said_as, reason, guess)
    if ev.transparent >= s.seeing.cut_out:
        seen_instead = _without_caption(ev, opts, s, SaidAs.WITHHELD, "the picture is a cut-out on a transparent "
                                        "background, with no scene to describe, so what was seen is said", guess)
        if seen_instead.objects or seen_instead.maybe or seen_instead.guesses or seen_instead.perhaps:
            return seen_instead
    words, mended = _mended(ev, tokens(f.text), mended, s)
    words, counts, doubt = recount(ev, words, s)
    if doubt and said_as is SaidAs.FACT:
        said_as, reason = SaidAs.PROBABLY, "the object detector does not confirm how many the caption says"
    cap = clean_caption(captionfix.sentence(words))
    fact = ""
    if said_as is SaidAs.FACT and checkable(ev) and any(c in CHECKED for c in named(tokens(cap))):
        # Of a caption about people, animals or vehicles only the subject and how many are said as fact, where
        # the detector confirms them; where they are is said as probable ("A dog, probably in the grass.").
        # A scene with none of them ("A stream in the woods.") has no subject to confirm and stays whole,
        # under the fact check.
        fact = subject_fact.confirmed(ev, tokens(cap), s) or ""
        if not fact:
            said_as, reason = SaidAs.PROBABLY, ("the object detector does not confirm the caption's subject, or "
                                                "how many there are, well enough to say it as fact")
    elif said_as is SaidAs.FACT and fact_check is not None and not fact_check.passes(ev, cap):
        said_as, reason = SaidAs.PROBABLY, ("what the caption says the subject does, or how many there are, "
                                            "is not confirmed well enough by what was seen to be said as fact")
    held, sure = frozenset(), fact
    if checkable(ev):
        held = frozenset(c for c in named(tokens(cap))
                         if c not in PEOPLE and ev.best_detection(c) >= s.seeing.thing_seen)
        sure = fact or subject_fact.confirmed(ev, tokens(cap), s) or ""
    d = Decision(said_as, cap, guess, text=ev.text, reason=reason, mended=mended + counts, fact=fact, held=held,
                 counted=any(w in sure.split() for w in NUMBERS.values()))
    d.maybe = _tags_with_caption(ev, opts, d)
    return d


def _mended(ev: PictureEvidence, words: list[str], mended: list[str], s: PolicySettings) -> tuple[list[str], list[str]]:
    """The chosen caption's words said neutrally, without the details, colours and places nothing sees, and
    what was changed."""
    words = captionfix.without_repeats(words)
    if not s.mending.say_sex:
        neutral = captionfix.neutral(words)
        if neutral != words:
            words, mended = neutral, [*mended, "who: said as a person or a child"]
    words, dropped = without_unseen_details(ev, words, s)
    words, dropped = without_unseen_colours(ev, words, dropped, s)
    words, dropped = without_unseen_places(ev, words, dropped, s)
    return captionfix.without_repeats(words), mended + dropped  # a detail left out can leave a repeat


def _tags_with_caption(ev: PictureEvidence, opts: Options, d: Decision) -> list[str]:
    """Tags said beside a caption: never one that contradicts it, and only one that adds to it."""
    if opts.tags == "never" or (opts.tags == "auto" and d.said_as is SaidAs.FACT):
        return []
    told = set(named(tokens(d.caption)))
    said = {singular(w) for w in tokens(d.caption)}
    out = []
    for label, p in ev.tags:
        if p < ev.tag_threshold:
            continue
        word = plain_name(label)
        cat = category_of(word)
        if cat and cat not in told and any(same_kind(cat, c) for c in told):
            continue  # a dog tag beside a horse caption: one of them is wrong, and the caption was checked
        if all(singular(w) in said for w in tokens(word)):
            continue
        out.append(counted(word, 1))
    return out


def _without_caption(ev: PictureEvidence, opts: Options, s: PolicySettings, said_as: SaidAs, reason: str | None,
                     guess: str) -> Decision:
    """What is seen, when no scene caption is said: confident objects, tags, text, or the pixels."""
    objects, covered = seen_objects(ev, s)
    objects, guesses, perhaps, covered = lone_witnesses(ev, objects, covered, s)
    maybe = []
    if opts.tags != "never":
        floor = ev.tag_threshold
        for label, p in ev.tags:
            word = plain_name(label)
            cat = category_of(word)
            if p >= floor and (cat is None or cat not in covered) and len(objects) + len(maybe) < s.saying.max_said \
                    and not any(f" {counted(word, 1)}" in f" {d}" for d in perhaps):
                maybe.append(counted(word, 1))
        if not objects and not maybe and not ev.text and not guesses and not perhaps:
            maybe = setting(ev, s) or last_resort_tag(ev, s)
            if not maybe and (subject := subjects.guess(ev.tags)):
                perhaps = [subject]
    return Decision(said_as, "", guess, objects, maybe, ev.text, ev.plain_fact, reason, guesses=guesses,
                    perhaps=perhaps)


def last_resort_tag(ev: PictureEvidence, s: PolicySettings = DEFAULT) -> list[str]:
    """The top tag from the last_resort_tag setting, for a photo about which nothing else would be said."""
    if ev.kind != PHOTO or not ev.tags or ev.tags[0][1] < s.saying.last_resort_tag:
        return []
    return [counted(plain_name(ev.tags[0][0]), 1)]


def setting(ev: PictureEvidence, s: PolicySettings = DEFAULT) -> list[str]:
    """'grass', 'a field', 'flowers': where a photo is and what it is full of, from the concepts' sure setting
    words (not for pictures seen from above, whose models have other words, nor for what is not a photo)."""
    if ev.overhead or ev.kind != PHOTO:
        return []
    out: list[str] = []
    for w, p in sorted(ev.concepts.items(), key=lambda wp: -wp[1]):
        said = SCENE_WORDS.get(w) or ("flowers" if w == "flower" else None)
        floor = s.saying.flowers_say if w == "flower" else s.saying.scene_say
        if said and p >= floor and said not in out:
            out.append(said)
    return out[:s.saying.max_said]


def _of_kind(ev: PictureEvidence, opts: Options, s: PolicySettings) -> Decision:
    """A picture that is surely not a photo is said to be what it is, and never captioned as a scene: the
    caption models learnt from photos only. A drawing or painting is said with what it shows where the
    detector or the tags see it; in a diagram, a chart, a screenshot or a map the detector's people and things
    are icons and symbols, so only the text read goes with it, as in a picture surely not a photo of no sure
    kind (random noise gave "Perhaps an animal.")."""
    name = KIND_SAID.get(ev.kind, "")
    reason = (f"the picture is {name or 'not a photo'}, unlike the photos the model learnt from, so no scene "
              "caption was said")
    if ev.kind in DEPICTS:
        guess = clean_caption(ev.caption.text) if ev.caption else ""
        d = _without_caption(ev, opts, s, SaidAs.WITHHELD, reason, guess)
    else:
        d = Decision(SaidAs.WITHHELD, text=ev.text, reason=reason)
    unsure = ev.kind in GUESSED_UNDER_FACT and ev.kind_probability is not None
    d.kind = "" if unsure and ev.kind_probability < s.saying.kind_named else name
    if name and not d.kind:
        # neither a photo nor surely a drawing: what is seen in it may be drawn ("a person" on a playing card)
        d.guesses, d.objects = d.objects + d.guesses, []
    d.kind_sure = ev.kind not in ALWAYS_GUESSED and (
        ev.kind not in GUESSED_UNDER_FACT or ev.kind_probability is None or ev.kind_probability >= s.saying.kind_fact)
    return d
