"""A caption read once: the things it names, its subject, how many, where each noun phrase begins."""

from __future__ import annotations

import csv

from conftest import ROOT

from capdesk.describe import captionfix
from capdesk.describe.numbers import numbers
from capdesk.describe.objects import mentions, tokens
from capdesk.describe.sentence import PEOPLE, Mention, named, parse


def _said_captions() -> list[str]:
    """The 740 alt texts read by eye on val and test: the caption model's own sentences, mended."""
    out = []
    for name in ("val_by_eye.csv", "test_by_eye.csv"):
        with open(ROOT / "training" / "studies" / name, encoding="utf-8") as fh:
            out += [row["said"] for row in csv.DictReader(fh) if row["said"]]
    return out


def test_the_same_words_are_read_once():
    words = tokens("A black dog and a brown dog are running through the grass.")
    assert parse(words) is parse(tuple(words)) is parse(list(words))
    mended = captionfix.recount(words, "dog", 2)
    assert mended is not None and parse(mended) is not parse(words)


def test_the_parse_finds_the_subject_each_thing_and_where_its_phrase_begins():
    s = parse(tokens("A group of people standing on a beach near a boat."))
    assert s.subject == Mention("person", 3, 4)
    assert s.first("boat") == Mention("boat", 10, 11)
    assert s.determiner(3) == 0  # "a group of people": the phrase opens at "a"
    assert s.determiner(10) == 9
    assert s.counts() == {"person": "several", "boat": "one"}
    assert parse(tokens("Standing on a beach far from the water is a dog.")).subject is None  # named too late


def test_the_parse_reads_every_said_caption_as_the_word_lists_do():
    """The counts and the things named, read from the parse, agree with ``numbers`` and ``mentions`` (which
    the measures read human captions with) on every alt text read by eye."""
    captions = _said_captions()
    assert len(captions) >= 700
    for c in captions:
        w = tokens(c)
        assert parse(w).counts(PEOPLE) == numbers(c, PEOPLE), c
        assert parse(w).counts(frozenset()) == numbers(c), c
        assert named(w) == mentions(c), c


def test_football_before_a_player_names_a_game_not_a_ball():
    assert named(tokens("A football player runs with a ball.")) == ["person", "sports ball"]
    assert named(tokens("A football player runs.")) == ["person"]
