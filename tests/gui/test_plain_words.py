"""What flat review and the controls' descriptions read, in plain words: no metadata terms
("schema:accessibilityFeature"), no "confidence 0.35 · outside the model's domain". Offscreen Qt."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
from PySide6.QtWidgets import QWidget  # noqa: E402

JARGON = ("schema:", "accessibilityFeature", "alternativeText", "manifest", "domain", "confidence", "BLEU", "CIDEr",
          " · ")


def _details(confidence: float, in_domain: bool, said_as=None, fact: str = "") -> str:
    from capdesk.gui.picture_pane import details

    d = SimpleNamespace(confidence=confidence, in_domain=in_domain, tags=[("dog", 0.85)], caption=None,
                        model="everyday", said_as=said_as, decision=SimpleNamespace(fact=fact))
    return details(SimpleNamespace(described=d, withheld=False, reason="", error="", person_text=None))


def test_caption_details_say_how_sure_the_model_is_in_words():
    unsure = _details(0.35, False)
    assert "the model is unsure (35 percent)" in unsure, unsure
    assert "not the kind of picture the model was taught" in unsure, unsure
    sure = _details(0.91, True)
    assert "the model is sure (91 percent)" in sure and "a kind of picture the model was taught" in sure, sure
    for text in (unsure, sure):
        assert not [j for j in JARGON if j in text], text


def test_the_details_agree_with_how_the_alt_text_says_it():
    from capdesk.status import SaidAs

    fact = _details(0.44, True, SaidAs.FACT)
    assert "said as fact" in fact and "unsure" not in fact, fact  # was "the model is unsure (44 percent)"
    guess = _details(0.44, True, SaidAs.PROBABLY)
    assert "said as a guess: the model is unsure (44 percent)" in guess, guess
    # "A dog, probably running on the grass.": the subject is the fact, the rest a guess, and the details say so.
    subject = _details(0.44, True, SaidAs.FACT, fact="a dog")
    assert "the object detector confirms who or what is there and how many; the rest is a guess" in subject, subject
    for text in (fact, guess, subject):
        assert not [j for j in JARGON if j in text], text


def test_no_control_describes_itself_in_jargon(qtbot, open_window):
    from capdesk.gui.dialogs import AltFillDialog, BatchDialog, ModelsDialog

    window = open_window()
    roots = [window]
    for dlg in (AltFillDialog(window, "/tmp"), BatchDialog(window, "/tmp"), ModelsDialog(window)):
        qtbot.addWidget(dlg)
        roots.append(dlg)
    said = [(w.accessibleName(), w.accessibleDescription()) for root in roots for w in root.findChildren(QWidget)]
    bad = [(name, desc) for name, desc in said if any(j in f"{name} {desc}" for j in JARGON)]
    assert not bad, bad
    epub = next(desc for name, desc in said if name == "EPUB accessibility metadata")
    assert "text alternatives" in epub, epub
