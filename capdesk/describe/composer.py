"""The one writer of a picture's words: the alt text and the long description, from what
``capdesk.describe.policy`` allows (a ``Decision``), following alt-text practice (WCAG 2.2 SC 1.1.1).

The alt text: the scene caption as fact or as "Probably ..."; where no caption is said, the objects
seen ("Two people and a dog."), the tags ("May contain: a raccoon."), the text read ('Text: "..."'), or
what the pixels show ("A blank white image."); else nothing. It never speaks about the software or the
model (WCAG failure F30), and why a picture needs a person's review goes to ``reason``, never into it;
an empty alt text is always marked for review, because empty alt marks an image as decorative.
"""

from __future__ import annotations

from capdesk.describe.alttext import Wording, caption_as_said, quoted_text
from capdesk.describe.objects import tokens
from capdesk.describe.pixelfacts import PictureFacts
from capdesk.describe.plainwords import listed
from capdesk.describe.policy import Decision
from capdesk.describe.safe_guess import guessed
from capdesk.describe.subject_fact import with_guess
from capdesk.status import SaidAs


def sentence_of(phrases: list[str]) -> str:
    """'Two people and a dog.' from ['two people', 'a dog']."""
    text = listed(phrases)
    return text[0].upper() + text[1:] + "." if text else ""


def maybe_sentence(phrases: list[str]) -> str:
    return "May contain: " + ", ".join(phrases) + "." if phrases else ""


def kind_sentence(kind: str, objects: list[str], sure: bool = True) -> str:
    """'A drawing of a cat and a dog.', 'A screenshot.'; a kind not sure: 'Probably a drawing of a cat.'"""
    text = f"{kind} of {listed(objects)}" if objects else kind
    if not sure:
        text = f"probably {text}"
    return text[0].upper() + text[1:] + "."


def guess_sentences(d: Decision) -> list[str]:
    """'Probably a cat.', 'An animal, perhaps a fox or a giraffe.': what one witness alone sees, or two
    disagree on, never said as fact."""
    out = [f"Probably {listed(d.guesses)}."] if d.guesses else []
    return out + [p[0].upper() + p[1:] + "." for p in d.perhaps]


def caption_said(d: Decision) -> str:
    """The caption in the words its standing allows: a fact with only its confirmed subject said as one
    ("A dog, probably in the grass."), whole as fact, or as "Probably ..." by its subject and place
    (``safe_guess``: "Probably a black dog in a wooded area.")."""
    if d.said_as is SaidAs.FACT and d.fact:
        return with_guess(d.fact, tokens(d.caption), d.held)
    if d.said_as is SaidAs.PROBABLY:
        return caption_as_said(guessed(d.caption, d.held, d.counted) or d.caption, d.said_as)
    return caption_as_said(d.caption, d.said_as)


def fact_alone(d: Decision) -> str:
    """The alt text with only what is said as fact ("A dog."; the text read kept), for a publisher who
    publishes no guess: "" where no part of the caption is a confirmed subject."""
    if d.said_as is not SaidAs.FACT or not d.fact:
        return ""
    return " ".join(p for p in [sentence_of([d.fact]), quoted_text(d.text) if d.text else ""] if p)


def alt_text(d: Decision, show_guess: bool = False) -> Wording:
    """The alt text the decision allows, with its standing and why it needs review."""
    said = d.said_as in (SaidAs.FACT, SaidAs.PROBABLY)
    if said:
        first = caption_said(d)
    elif d.kind and not d.objects and d.guesses and not d.perhaps:
        # "A drawing, probably of a vase."; a kind itself a guess: "Probably a drawing of a vase."
        first = (kind_sentence(d.kind, [])[:-1] + f", probably of {listed(d.guesses)}." if d.kind_sure
                 else kind_sentence(d.kind, d.guesses, sure=False))
    else:
        opening = kind_sentence(d.kind, d.objects, d.kind_sure) if d.kind else sentence_of(d.objects)
        first = " ".join(p for p in [opening, *guess_sentences(d)] if p)
    parts = [first, maybe_sentence(d.maybe)]
    if not said and show_guess and d.guess:
        parts.append(f"Guess: {d.guess}")
    if d.text:
        parts.append(quoted_text(d.text))
    if not said and not any(parts) and d.plain_fact:
        parts.append(d.plain_fact)
    alt = " ".join(p for p in parts if p)
    reason = d.reason
    if not alt:
        reason = f"{reason}; nothing else was recognised, so the alt text is empty"
    return Wording(alt, d.said_as, d.review or not alt, reason)


def long_description(d: Decision, tags: list[tuple[str, float]], objects: list[tuple[str, float]],
                     facts: PictureFacts | None) -> str:
    """The extended description (IPTC ExtDescrAccessibility): the caption in the alt text's words (a
    withheld one marked as a guess), the objects seen and the tags with how likely each is, the text
    read, and plain facts about the pixels."""
    parts = [kind_sentence(d.kind, [], d.kind_sure)] if d.kind else []
    if d.said_as in (SaidAs.FACT, SaidAs.PROBABLY) and d.caption:
        parts.append(caption_said(d))
        whole = caption_as_said(d.caption, SaidAs.PROBABLY).replace("Probably", "Perhaps", 1)
        if tokens(whole)[1:] != [w for w in tokens(parts[-1]) if w != "probably"]:
            parts.append(whole)  # what the alt text leaves out as unsure (what they do, wear, hold), as a guess
    elif d.guess and d.said_as is not SaidAs.NONE:
        parts.append(caption_as_said(d.guess, SaidAs.WITHHELD))
    if objects:
        parts.append("Objects seen: " + ", ".join(f"{name} ({round(p * 100)}% likely)" for name, p in objects) + ".")
    if tags:
        parts.append("Object tags: " + ", ".join(f"{name} ({round(p * 100)}% likely)" for name, p in tags) + ".")
    if d.text:
        parts.append(quoted_text(d.text).replace("Text:", "Text read in the picture:", 1))
    if facts is not None:
        parts.append(facts.sentence())
        if facts.pages > 1:
            parts.append(f"The file has {facts.pages} pages; this describes the first.")
    return " ".join(parts)
