"""A thing counted once that is likely more than one is said without a number (docs/training.md, "More than
one, said without a number"): several kites over a beach were "A kite.", two vases "A vase.", a bunch of
bananas "A banana."; each said as a fact of one."""

from __future__ import annotations

from evidence_helpers import evidence, said

from capdesk.describe.seeing import more_than_one
from capdesk.describe.settings import DEFAULT

OUTSIDE = dict(in_domain=False, trust=0.9, tag_threshold=0.7)  # the caption withheld: unlike the model's photos
BESIDE = (110, 0, 190, 90)  # a second box beside the first, (0, 0, 100, 100), not over it


def test_a_second_box_of_its_kind_makes_it_more_than_one_with_no_number():
    # Two vases side by side, the second just under the counting floor (0.9): not "A vase.", not "Two vases."
    w = said("", detections=[("vase", 0.9), ("vase", 0.897, BESIDE)], concepts={"vase": 0.7}, **OUTSIDE)
    assert w.text == "Vases."
    # A kite boxed surely, two more faintly: still no number, and a guess stays a guess.
    w = said("", detections=[("kite", 0.84), ("kite", 0.44, (120, 10, 150, 50)), ("kite", 0.35, (160, 40, 190, 70))],
             **OUTSIDE)
    assert w.text == "Probably kites."
    # Counted surely, the number is said as before.
    assert said("", detections=[("vase", 0.95), ("vase", 0.93, BESIDE)], concepts={"vase": 0.7},
                **OUTSIDE).text == "Two vases."


def test_a_faint_second_box_over_the_first_or_too_small_is_no_second_thing():
    # A second box mostly beside the first is a second bicycle; one inside it (the same bicycle with its
    # rider) is not.
    over = (14, 0, 84, 100)
    ev = evidence("", detections=[("bicycle", 0.87), ("bicycle", 0.4, (60, 0, 160, 100))], **OUTSIDE)
    assert more_than_one(ev, "bicycle", DEFAULT)
    ev = evidence("", detections=[("bicycle", 0.87), ("bicycle", 0.4, over)], **OUTSIDE)
    assert not more_than_one(ev, "bicycle", DEFAULT)
    # Under the floor (0.3), or under a tenth of the largest box: one.
    assert said("", detections=[("vase", 0.9), ("vase", 0.25, BESIDE)], concepts={"vase": 0.7},
                **OUTSIDE).text == "A vase."
    assert said("", detections=[("vase", 0.9), ("vase", 0.8, (150, 0, 158, 9))], concepts={"vase": 0.7},
                **OUTSIDE).text == "A vase."


def test_every_caption_of_the_beam_saying_several_makes_one_box_more_than_one():
    # One box over a bunch of bananas; every caption says a bunch.
    bunch = dict(finalists=[("A bunch of bananas on the side of a large building.", 0.9)],
                 detections=[("banana", 0.89)], concepts={"banana": 0.8}, **OUTSIDE)
    assert said("A bunch of bananas on the side of a street.", **bunch).text == "Bananas."
    # A caption that names one and then more ("A car ... with cars in the background", said of one blurred car)
    # says one of it first: the detector's one stays.
    car = dict(finalists=[("A car driving down a street with cars.", 0.9)], detections=[("car", 0.89)],
               concepts={"car": 0.8}, **OUTSIDE)
    assert said("A car driving down a street with cars in the background.", **car).text == "A car."
    # One caption saying one is enough to keep the detector's one.
    bunch["finalists"] = [("A banana on a table.", 0.9)]
    assert said("A bunch of bananas on the side of a street.", **bunch).text == "A banana."


def test_people_and_animals_keep_their_own_counting():
    # Their numbers have rules of their own (a person with others behind, "one or two" animals).
    ev = evidence("", detections=[("person", 0.9), ("person", 0.5, BESIDE)], **OUTSIDE)
    assert not more_than_one(ev, "person", DEFAULT)
    ev = evidence("", detections=[("dog", 0.9), ("dog", 0.5, BESIDE)], **OUTSIDE)
    assert not more_than_one(ev, "dog", DEFAULT)


def test_the_rule_can_be_turned_off():
    off = DEFAULT.with_values({"seeing.more_boxes": 0.0})
    ev = evidence("", detections=[("vase", 0.9), ("vase", 0.897, BESIDE)], **OUTSIDE)
    assert more_than_one(ev, "vase", DEFAULT) and not more_than_one(ev, "vase", off)
