"""No lone witness said as fact, and a word for common subjects (docs/training.md, "No lone witness said
as fact, and a word for common subjects"): where no caption is said, a thing the detector alone sees is
"Probably ...", two witnesses that disagree are both named as a guess, and a weak tag of a common
subject gives its kind and its closest alternative."""

from __future__ import annotations

from dataclasses import replace

from evidence_helpers import evidence, said

from capdesk.altfill.rows import wording
from capdesk.describe import composer, policy
from capdesk.describe.describer import Described
from capdesk.status import SaidAs

OUTSIDE = dict(in_domain=False, trust=0.9, tag_threshold=0.7)  # the caption withheld: unlike the model's photos


def test_the_detector_alone_is_a_guess():
    # A raccoon (no ImageNet class) the detector calls a cat, nothing else agreeing: a guess, never a bare "A cat.".
    w = said("A cat sitting on a log.", detections=[("cat", 0.95)], **OUTSIDE)
    assert (w.text, w.said_as, w.review) == ("Probably a cat.", "withheld", True)
    assert said("", detections=[("dog", 0.9)], **OUTSIDE).text == "Probably a dog."


def test_two_witnesses_that_agree_are_said_plainly():
    assert said("", detections=[("dog", 0.9)], tags=[("Beagle", 0.3)], **OUTSIDE).text == "A dog."
    assert said("", detections=[("dog", 0.9)], concepts={"dog": 0.6}, **OUTSIDE).text == "A dog."
    assert said("", detections=[("dog", 0.9)], concepts={"dog": 0.4}, **OUTSIDE).text == "Probably a dog."
    # Of several things, only the lone one is a guess.
    w = said("", detections=[("dog", 0.9), ("chair", 0.8)], tags=[("dog", 0.4)], **OUTSIDE)
    assert w.text == "A dog. Probably a chair."


def test_witnesses_that_disagree_are_both_said_as_a_guess():
    # An animal the detector does not know, named by a tag under its floor: the common ground first.
    w = said("", detections=[("cat", 0.9)], tags=[("badger", 0.4)], **OUTSIDE)
    assert w.text == "An animal, perhaps a badger or a cat."
    assert said("", detections=[("dog", 0.9)], tags=[("common sorrel horse", 0.35)], **OUTSIDE).text == \
        "An animal, perhaps a dog or a horse."
    # A vehicle of a neighbouring class, and a thing the detector mistakes for another (said once).
    assert said("", detections=[("motorcycle", 0.9)], tags=[("mountain bike", 0.4)], **OUTSIDE).text == \
        "Perhaps a motorcycle or a bicycle."
    assert said("", detections=[("kite", 0.8)], tags=[("balloon", 0.75)], **OUTSIDE).text == \
        "Perhaps a kite or a balloon."


def test_a_kind_with_a_lone_thing_says_it_as_a_guess():
    ev = replace(evidence("", detections=[("vase", 0.8)], **OUTSIDE), kind="drawing")
    assert composer.alt_text(policy.decide(ev)).text == "A drawing, probably of a vase."


def test_a_guess_is_never_a_fact_in_alt_fill():
    for ev, want in ((evidence("", detections=[("cat", 0.95)], **OUTSIDE), "probably"),
                     (evidence("", detections=[("kite", 0.8)], tags=[("balloon", 0.4)], **OUTSIDE), "probably"),
                     (evidence("", detections=[], tags=[("bee", 0.5)], **OUTSIDE), "probably"),
                     (evidence("", detections=[("dog", 0.9)], tags=[("dog", 0.4)], **OUTSIDE), "fact")):
        dec = policy.decide(ev)
        w = composer.alt_text(dec)
        assert wording(Described("p.png", description=w.text, said_as=SaidAs(w.said_as), decision=dec)) == want


def test_a_word_for_common_subjects():
    def alt(*tags: tuple[str, float]) -> str:
        return said("A person holding a knife.", detections=[], tags=list(tags), **OUTSIDE).text

    # the kind of thing is the tags' alone: probable, not a fact (a skyscraper was "A bridge, perhaps ...")
    assert alt(("bee", 0.4), ("beetle", 0.25), ("daisy", 0.3)) == \
        "Probably an insect, perhaps a bee or a beetle, on a flower."
    assert alt(("bee", 0.4), ("beetle", 0.25)) == "Probably an insect, perhaps a bee or a beetle."
    assert alt(("through arch bridge", 0.4), ("pier", 0.25)) == "Perhaps a bridge or a pier."  # not said twice
    assert alt(("hammer", 0.58)) == "Perhaps a tool."  # its own word alone from 0.6, the last-resort tag's
    assert alt(("hammer", 0.62)) == "May contain: a hammer."
    assert alt(("palace", 0.3)) == "Perhaps a building."
    assert alt(("coral reef", 0.5), ("fish", 0.43)) == "Perhaps a fish, on a coral reef."
    assert alt(("gong", 0.48)) == "Perhaps a musical instrument."
    # Empty only where nothing is recognised: a tag of no common subject, or one too weak.
    assert alt(("jigsaw puzzle", 0.4)) == ""
    assert alt(("palace", 0.22)) == ""


def test_a_common_subject_is_said_in_the_words_people_use():
    assert said("", detections=[], tags=[("cornet trumpet", 0.9)], **OUTSIDE).text == "May contain: a trumpet."
    assert said("", detections=[], tags=[("solar thermal collector", 0.9)], **OUTSIDE).text == \
        "May contain: a solar panel."
    # the group of monkeys holds the apes too: a gorilla is not "a monkey"
    assert said("", detections=[], tags=[("monkey or ape", 0.9)], **OUTSIDE).text == \
        "May contain: a monkey or an ape."


def test_a_caption_naming_a_neighbouring_class_is_hedged_not_dropped():
    # A child's bicycle the detector calls a motorcycle: both are said, the caption's word first.
    w = said("A child is riding a bicycle down the street.", trust=0.9, detections=[("motorcycle", 0.8),
                                                                                   ("person", 0.9)])
    # What the child does is said: it is done with a thing the detector sees.
    assert (w.text, w.said_as) == ("Probably a child riding a bicycle or motorcycle on the street.", "probably")
    w = said("A man rides a motorcycle.", trust=0.9, detections=[("bicycle", 0.8), ("person", 0.9)])
    assert w.text == "Probably a person riding a motorcycle or bicycle."
    # Where a tag agrees with the detector, its word replaces the caption's, as before.
    w = said("A child is riding a bicycle.", trust=0.9, tags=[("moped", 0.5)], detections=[("motorcycle", 0.8),
                                                                                        ("person", 0.9)])
    assert w.text == "Probably a child riding a moped."
    # Not neighbours: the seen animal replaces the unseen one, as before.
    assert said("A dog is standing in a field.", trust=0.9, detections=[("horse", 0.9)]).text == \
        "Probably a horse in a field."


def test_a_faint_person_box_needs_the_concepts_to_see_a_person():
    # In pictures unlike the model's photos, a person box at 0.4 alone invented people in a crescent moon, a
    # map and a game screen (concepts for a person 0.6 to 0.89); in the model's own photos it is mostly a
    # real person far off.
    faint = [("person", 0.4, (40, 10, 160, 100))]
    caption = "A person standing in front of a wall."
    seen = said(caption, trust=0.99, detections=faint, typical=False, concepts={"person": 0.95, "wall": 0.5})
    assert seen.said_as == "probably" and seen.text == "Probably a person in front of a wall."
    unseen = said(caption, trust=0.99, detections=faint, typical=False, concepts={"person": 0.6, "wall": 0.5})
    assert "person" not in unseen.text and unseen.said_as == "withheld"
    typical = said(caption, trust=0.99, detections=faint, concepts={"person": 0.6, "wall": 0.5})
    assert typical.said_as == "probably" and "person" in typical.text
    # A model without a concept head keeps the box's word.
    assert said(caption, trust=0.99, detections=faint, typical=False).said_as == "probably"
