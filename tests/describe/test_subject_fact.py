"""Of a caption said as fact, only what the detector confirms is a fact: its subject and how many. What the
subject does, where and how it looks is said as probable, in one sentence a listener hears once."""

from __future__ import annotations

import numpy as np
from evidence_helpers import evidence, said

from capdesk.describe import policy
from capdesk.describe.fact_check import FEATURES, FactCheck
from capdesk.describe.objects import tokens
from capdesk.describe.subject_fact import confirmed, with_guess

DOG = ("dog", 0.95, (0, 0, 100, 100))
PERSON = ("person", 0.97, (0, 0, 90, 100))


def _confirmed(caption: str, detections: list) -> str | None:
    return confirmed(evidence(caption, detections=detections), tokens(caption))


def test_one_is_a_fact_only_where_the_detector_sees_exactly_one_surely():
    assert _confirmed("A dog runs on the grass.", [DOG]) == "a dog"
    # Wrestling dogs are one box scoring less than a dog alone, or a sure box and a faint second.
    assert _confirmed("A dog runs on the grass.", [("dog", 0.7, (0, 0, 100, 100))]) is None
    assert _confirmed("A dog runs on the grass.", [DOG, ("dog", 0.35, (120, 0, 160, 60))]) is None
    # A speck far smaller than the dog is no second dog.
    assert _confirmed("A dog runs on the grass.", [DOG, ("dog", 0.35, (150, 0, 155, 5))]) == "a dog"


def test_a_number_is_a_fact_where_the_detector_agrees_at_every_floor_else_several_without_it():
    two = [PERSON, ("person", 0.96, (100, 0, 190, 100))]
    assert _confirmed("Two people are standing in the snow.", two) == "two people"
    three = [*two, ("person", 0.9, (60, 0, 140, 100))]
    assert _confirmed("Two people are standing in the snow.", three) == "people"  # three seen, two said
    # Several where the second is a small figure behind the one the picture is of: no fact.
    behind = [PERSON, ("person", 0.9, (150, 60, 170, 100))]
    assert _confirmed("A group of people are standing in front of a crowd.", behind) is None
    # A subject none of the detector's boxes shows is no fact.
    assert _confirmed("Two people are standing in the snow.", []) is None


def test_the_sentence_says_the_fact_then_the_rest_as_probable():
    # The rest is said as a guess only in its safe part (``safe_guess``): the subject's own words and its place.
    cases = {
        ("a dog", "A brown dog is running through the grass."): "A dog, probably brown, in the grass.",
        ("people", "Two people are standing in the snow."): "People, probably in the snow.",
        ("people", "A group of people standing on a beach."): "People, probably on a beach.",
        ("two dogs", "Two dogs play in the snow."): "Two dogs, probably in the snow.",
        ("a dog", "A dog runs through the grass."): "A dog, probably in the grass.",
        ("a person", "A little child is sitting on the grass."): "A person, probably a little child on the grass.",
        ("a person", "A person in a red shirt is climbing a rock."): "A person.",
        ("a bus", "A bus that is parked on a street."): "A bus, probably on a street.",
        ("a dog", "A dog."): "A dog.",
        ("a person", "A little child wearing a white shirt and a blue shirt is sitting."): (
            "A person, probably a little child."),
        ("people", "A crowd of people are jumping on a court."): "People, probably on a court.",
    }
    for (fact, caption), want in cases.items():
        assert with_guess(fact, tokens(caption)) == want


def test_a_caption_whose_subject_is_not_confirmed_is_said_as_probable():
    w = said("A dog runs on the grass.", trust=0.99, detections=[("dog", 0.6, (0, 0, 100, 100))])
    assert w.said_as == "probably" and w.text == "Probably a dog on the grass."
    assert "does not confirm" in w.reason
    w = said("A dog runs on the grass.", trust=0.99, detections=[DOG])
    assert w.said_as == "fact" and w.text == "A dog, probably on the grass." and not w.review


def test_a_scene_with_no_subject_to_confirm_is_said_whole_and_the_check_still_reads_it():
    assert said("A stream in the woods.", trust=0.99, detections=[]).text == "A stream in the woods."
    zeros = np.zeros(len(FEATURES))
    never = FactCheck(zeros, np.ones(len(FEATURES)), zeros, -50.0, 0.5, frozenset({"stream"}))
    d = policy.decide(evidence("A stream in the woods.", trust=0.99, detections=[]), fact_check=never)
    assert d.said_as.value == "probably"


def test_a_check_without_the_concept_heads_words_is_no_check():
    entry = {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "scale": [1.0] * len(FEATURES),
             "weights": [0.0] * len(FEATURES), "bias": -50.0, "threshold": 0.5}
    assert FactCheck.from_manifest(entry, []) is None
    assert FactCheck.from_manifest(entry, ["dog"]) is not None


def test_without_a_detector_the_caption_is_said_whole():
    d = policy.decide(evidence("A dog runs on the grass.", trust=0.99, detections=None))
    assert d.said_as.value == "fact" and d.fact == ""
