"""The part of a caption the detector confirms, said as fact, and the rest said as probable.

Read by eye, the captions said whole as fact were right in their main thing 64% of the time on test photos
(issue 60): what the people do ("running" for riding a skateboard) was wrong in 55 of 87, how many in 24.
Nothing CapDesk holds sees what people do well enough (the fact check over the concepts reached 79% at
best), but the detector sees who is there and how many. So a caption said as fact is said as its confirmed
subject with the rest as a guess, in the words ``safe_guess`` keeps of a guess (its own adjectives and its
place): "A dog, probably brown, in the grass."; "People, probably in the snow.". The subject is confirmed where
the detector sees it and its number:

- "one" where exactly one box of its kind scores from ``subject_sure`` and no second one from ``subject_any``
  (of at least ``subject_area`` of the largest): wrestling dogs are one box that scores less;
- an exact number ("two", "three") where the detector's count agrees at both floors;
- several, without a number ("People", "Dogs"), where it sees at least two boxes from ``subject_sure``, the
  second at least ``several_area`` of the largest (not one performer before a crowd);
- "one or two", the policy's own hedge for a second box half seen, where one box is sure and no third seen.

Chosen on 500 val alt texts read by eye (``training/studies/val_by_eye.csv``; replayed by
``python training/studies/subject_facts.py VAL.jsonl training/studies/val_by_eye.csv``, where the facts whose
sentence was wrong in who or how many are judged again in ``subject_facts_judged.csv``): of the 306 captions
said as fact, 197 keep a confirmed subject, wrong in who or how many 7 times (96.4%; ``subject_sure`` 0.9 keeps
188 with the same precision, 0.7 keeps 233 with 3 more wrong; ``subject_area`` 0.25 keeps 208 at 94.8%), against
120 of 306 sentences wrong in the main thing before. The rest are said as "Probably ...". ``several_area`` 0.5 takes
the Flickr8k val facts contradicting the human captions in who or how many from 6.4% to 5.1% (0.25: 6.4%).
The numbers are the model's ``Saying`` settings (``capdesk.describe.settings``).
"""

from __future__ import annotations

from capdesk.describe.evidence import PictureEvidence
from capdesk.describe.numbers import ONE_OR_TWO
from capdesk.describe.objects import said_name
from capdesk.describe.plainwords import NUMBERS, counted, plural
from capdesk.describe.safe_guess import core, doing, place
from capdesk.describe.sentence import GROUP_WORDS, parse
from capdesk.describe.settings import DEFAULT, PolicySettings

_WORD_NUMBER = {w: n for n, w in NUMBERS.items()}
_VAGUE = GROUP_WORDS | {"of", "some", "several", "many", "a", "an", "the"}  # what "People" already says


def confirmed(ev: PictureEvidence, words: list[str], s: PolicySettings = DEFAULT) -> str | None:
    """'a dog', 'two people', 'people': the caption's subject as the detector confirms it, or None where it
    does not (the subject is none of its kinds, or its number is in doubt)."""
    say = s.saying
    parsed = parse(words)
    hit = parsed.subject
    if hit is None:
        return None
    i, cat = hit.start, hit.category
    said = parsed.counts().get(cat)
    sure = ev.count(cat, say.subject_sure, s.mending.count_area)
    anywhere = ev.count(cat, say.subject_any, say.subject_area)
    name = said_name(cat)
    if ONE_OR_TWO in " ".join(words[:i]):  # the policy's own hedge: a second box half seen
        return f"{ONE_OR_TWO} {plural(name)}" if sure >= 1 and anywhere <= 2 else None
    if said is None:
        return None
    if said == "one":
        return counted(name, 1) if sure == 1 and anywhere == 1 else None
    exact = next((_WORD_NUMBER[w] for w in words[:i] if w in _WORD_NUMBER), None)
    if exact is not None and sure == exact == anywhere:
        return counted(name, exact)
    return plural(name) if ev.count(cat, say.subject_sure, say.several_area) >= 2 else None


def with_guess(fact: str, caption_words: list[str], held: frozenset[str] = frozenset()) -> str:
    """'A dog, probably brown, in the grass.' from the fact 'a dog' and the caption's words ('a brown dog is
    running through the grass'): the rest of the caption said as a guess is only what ``safe_guess`` keeps
    of a guess, the subject's own words and its place; the fact alone where the caption says nothing more."""
    hit = parse(caption_words).subject
    text = fact[0].upper() + fact[1:]
    if hit is None:
        rest = core(caption_words, held) or []
        return f"{text}, probably {' '.join(rest)}." if rest and rest != fact.split() else f"{text}."
    i, n = hit.start, hit.end - hit.start
    if caption_words[i + n - 1] in GROUP_WORDS and caption_words[i + n:i + n + 1] == ["of"]:
        n += 2  # "a crowd of people": the noun is the people
    fact_words = fact.split()
    if caption_words[i + n - 1] == fact_words[-1]:  # the caption's own noun, in the fact's number
        # a number the fact does not say is one the detector did not confirm: not said ("People, probably three")
        said_before = [w for w in caption_words[:i]
                       if w not in _VAGUE and w not in fact_words and w not in _WORD_NUMBER]
        done, end = doing(caption_words, i + n, held)
        after = done + place(caption_words, end)
        lead = " ".join(said_before)
        rest = ([lead + ","] if lead and after else [lead] if lead else []) + after
    else:  # "a person, probably a little child on the grass"
        rest = core(caption_words, held) or []
    return f"{text}, probably {' '.join(rest)}." if rest else f"{text}."
