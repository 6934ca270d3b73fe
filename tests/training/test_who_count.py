"""The measure of who and how many: a fact that contradicts its photo's human captions in sex, age or
number is counted; one that agrees, or that they leave open, is not."""

from __future__ import annotations

import pytest

from training import who_count

REFS_ONE_WOMAN = ["A woman in a red dress.", "A woman walks.", "A lady on a street.", "A woman smiles.",
                  "A person walking."]
REFS_GIRL_PUSHES_BOY = ["A girl pushes a boy on a swing.", "A girl stands behind a boy in a swing.",
                        "A little girl is pushing a little boy on a swing.", "A girl pushes a boy on the swing.",
                        "The small girl pushes the little boy."]


def test_sex_and_age():
    assert who_count.contradicts("A man is walking.", REFS_ONE_WOMAN) == ["who"]
    assert who_count.contradicts("A young child is walking.", REFS_ONE_WOMAN) == ["who: age"]
    assert who_count.contradicts("A person is walking.", REFS_ONE_WOMAN) == []


def test_how_many_reads_two_different_people_as_two():
    assert who_count.contradicts("Two children are swinging on a swing.", REFS_GIRL_PUSHES_BOY) == []
    assert who_count.contradicts("A child is swinging on a swing.", REFS_GIRL_PUSHES_BOY) == ["how many: person"]
    assert who_count.contradicts("One or two children are on a swing.", REFS_GIRL_PUSHES_BOY) == []


def test_the_first_rules_are_kept_to_compare_with(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(who_count, "FIRST_RULES", True)
    assert who_count.contradicts("Two children are swinging on a swing.", REFS_GIRL_PUSHES_BOY) == [
        "how many: person"]
    assert who_count.contradicts("A young child is walking.", REFS_ONE_WOMAN) == []
