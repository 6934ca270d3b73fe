"""The Words list, the strip and Ctrl+. offer the words of the alt text shown, not the model's whole caption
(Qt offscreen, the real model, a sample picture).

The astronaut's caption, "a group of people standing next to each other", is mended by what was seen and said
as "Probably a person.": "group", "people" and "other" were once offered one by one, and Ctrl+. read them out
as if the description said them."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES

pytest.importorskip("PySide6")
from capdesk.gui.picture_pane import NONE_KEPT, kept_words  # noqa: E402

TIMEOUT = 120_000


def test_kept_words_are_those_the_alt_text_says_whatever_their_case_and_stops():
    words = ["a", "group", "of", "people", "standing", "next", "to", "each", "other"]
    assert kept_words(words, "Probably a person standing.") == [0, 4]
    assert kept_words(words, "A GROUP of people, standing!") == [0, 1, 2, 3, 4]
    assert kept_words(words, "") == []


@pytest.fixture
def shown(qtbot, open_window, tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    shutil.copy(SAMPLES / "astronaut.png", d / "astronaut.png")
    window = open_window()
    window.open_path(d / "astronaut.png")
    s = window.session
    qtbot.waitUntil(lambda: s.current is not None and s.current.described is not None and s._busy == 0,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.pane.words.count() > 0, timeout=TIMEOUT)
    return window


def _listed(pane) -> list[str]:
    return [pane.words.item(i).text() for i in range(pane.words.count())]


def test_a_mended_alt_text_offers_only_its_own_words(qtbot, shown):
    pane = shown.pane
    caption = shown.session.current.described.caption
    alt = pane.alt.toPlainText()
    assert "people" in caption.words and "people" not in alt.lower()  # the caption was mended
    assert alt.startswith("Probably a person")
    assert _listed(pane) == ["a"]
    assert pane.strip._words[1:] == ["a"]  # the strip's columns, after the picture itself
    assert "people" not in pane.strip.accessibleDescription()
    # Ctrl+. steps through the same words, and the map drawn is the chosen word's own.
    said = pane.step_word(1)
    assert said.startswith("Word 1 of 1, “a”: looked ")
    assert pane.view.accessibleDescription().startswith("Attention for “a”")
    assert pane.step_word(1).startswith("Word 1 of 1, ")  # round again, never a word the alt text lacks


def test_the_words_follow_the_persons_edit_of_the_alt_text(qtbot, shown):
    pane = shown.pane
    pane.alt.setPlainText("A group of people standing.")
    assert _listed(pane) == ["a", "group", "of", "people", "standing"]
    pane.alt.setPlainText("An astronaut.")
    assert _listed(pane) == []
    assert pane.word_said(-1) == NONE_KEPT  # Ctrl+. says why there is no word, not "select a picture"
