"""A caption read once: its words, the things it names and where, where each noun phrase begins, its
subject and how many of each thing it says.

The caption model's sentences are short and regular ("a group of people standing on a beach", "two dogs
are playing in the snow"), so their shape is found by the project's word lists, not by a general parser.
Every reader of a caption (the mends of ``captionfix``, the policy's counts, the confirmed subject of
``subject_fact``, the fact check, the composer) asks ``parse`` for its shape, and the same words are read
once: a mend that changes the words makes a new sentence, read once in its turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from capdesk.describe.numbers import counts_of
from capdesk.describe.objects import PHRASES, mentions_of, phrase_hits

GROUP_WORDS = frozenset({"group", "couple", "pair", "crowd", "herd", "flock", "pack", "team", "bunch"})
# Words before a noun that say how many.
DETERMINERS = frozenset({"a", "an", "one", "the", "two", "three", "four", "five", "several", "many", "some",
                         "this", "another"})
SUBJECT_WITHIN = 4  # the first thing named is the subject when it comes this early ("a little girl in ...")
LINK_REACH = 12  # "a little child wearing a white shirt and a blue shirt is sitting": the verb comes late
_LINKS = frozenset({"is", "are"})
PEOPLE = frozenset({"person"})
SINGULAR_OF = {"people": "person", "men": "man", "women": "woman", "children": "child", "boys": "boy",
               "girls": "girl", "crowd": "person", "team": "person", "family": "person", "couple": "person"}
# Plurals in "-ses" that drop "es" (most drop the s alone: horses, houses, vases, nurses, roses).
_SES_DROP_ES = frozenset({"buses", "gases", "lenses", "canvases", "circuses", "campuses", "atlases", "bonuses"})


@dataclass(frozen=True)
class Mention:
    """A phrase the caption names a thing by: its category ("" for a phrase known to name no object) and
    its words ``start`` to ``end``."""

    category: str
    start: int
    end: int


@dataclass(frozen=True)
class Sentence:
    words: tuple[str, ...]
    mentions: tuple[Mention, ...]
    _determiners: dict[int, int | None] = field(default_factory=dict, compare=False, repr=False)
    _counts: dict[frozenset[str], dict[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def first(self, category: str) -> Mention | None:
        """The first phrase naming ``category``."""
        return next((m for m in self.mentions if m.category == category), None)

    @property
    def subject(self) -> Mention | None:
        """The first thing named, when it opens the sentence (within ``SUBJECT_WITHIN`` words)."""
        m = next((m for m in self.mentions if m.category), None)
        return m if m is not None and m.start <= SUBJECT_WITHIN else None

    def counts(self, distinct: frozenset[str] = PEOPLE) -> dict[str, str]:
        """Category -> "one" or "several", as ``capdesk.describe.numbers`` reads them (people named by two
        different nouns each opened by "a" are two)."""
        if distinct not in self._counts:
            self._counts[distinct] = counts_of(list(self.words), [(m.start, m.end - m.start, m.category)
                                                                  for m in self.mentions], distinct)
        return self._counts[distinct]

    def link(self, after: int) -> int | None:
        """Where the subject's "is" or "are" is, looking from word ``after`` (the end of its phrase) on."""
        return next((k for k in range(after, min(after + LINK_REACH, len(self.words))) if self.words[k] in _LINKS),
                    None)

    def determiner(self, noun: int) -> int | None:
        """Where the noun phrase before word ``noun`` begins (its determiner), looking back over a few
        adjectives; None where it has none of its own."""
        if noun not in self._determiners:
            self._determiners[noun] = _determiner_start(self.words, noun)
        return self._determiners[noun]


@lru_cache(maxsize=4096)
def _parse(words: tuple[str, ...]) -> Sentence:
    return Sentence(words, tuple(Mention(cat, i, i + n) for i, n, cat in phrase_hits(list(words))))


def parse(words: list[str] | tuple[str, ...]) -> Sentence:
    """The caption's shape, read once for the same words."""
    return _parse(tuple(words))


def named(words: list[str] | tuple[str, ...]) -> list[str]:
    """The categories the words name, in order, each once ("a man and his dog" -> ["person", "dog"]), as
    ``objects.mentions`` reads a text: "football" before "player" names a game, not a ball."""
    s = parse(words)
    return mentions_of(s.words, ((m.start, m.end - m.start, m.category) for m in s.mentions))


def singular(noun: str) -> str:
    if noun in SINGULAR_OF:
        return SINGULAR_OF[noun]
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("sses", "shes", "ches", "xes", "zzes")) or noun in _SES_DROP_ES:
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3:
        return noun[:-1]
    return noun


def _determiner_start(words: tuple[str, ...], noun: int) -> int | None:
    for j in range(noun - 1, max(noun - 5, -1), -1):
        w = words[j]
        if w == "of" and j > 0 and words[j - 1] in GROUP_WORDS:
            return j - 2 if j > 1 and words[j - 2] in ("a", "an", "the") else j - 1
        if w in DETERMINERS:
            return j
        if w.endswith("ing") or w in ("is", "are") or (w not in GROUP_WORDS and (w,) in PHRASES):
            # a verb or another thing's noun: the phrase has no determiner of its own. A bare plural right
            # after it ("riding horses") begins at its noun; the walk never goes on into the subject
            # ("a person riding horses" -> "a person riding hors" was the mend that did).
            return noun if j == noun - 1 and singular(words[noun]) != words[noun] else None
        if w in ("and", "with", "in", "on", "of", "at", "by"):
            return None
    return None
