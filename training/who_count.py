"""Who and how many: whether a caption contradicts its photo's human captions about the people's sex or
age, or about how many of a kind of thing there are. CHAIR (``training.chair``) counts only objects that
are absent; a caption saying "a girl" for a boy, or "two dogs" for one, names nothing absent and is still
wrong to a listener.

The rules, fixed before any threshold was tuned on them:

- **Who.** The caption says a man or a boy (or another male word: guy, gentleman, father, ...) and no
  female word, while at least 3 of the references say a woman or a girl (or another female word) and at
  most one of them says a male word; or the reverse.
- **Age** (added after the reading by eye of 100 test facts, where 4 of 20 errors were adults said as
  children): the caption says a child (child, boy, girl, kid, baby, toddler) and no adult word, while at
  least 3 references say an adult (man, woman, lady, guy, adult, ...) and at most one says a child; or the
  reverse.
- **How many.** For each COCO category the caption names (``capdesk.describe.objects``): the caption
  says one of it ("a dog", "the man", "a skier") where at least 4 references say several ("two dogs",
  "people", "a group of men", "a man and a woman"); or it says several where at least 4 references say
  one. A text that names the category both ways, or only in a form that says no number ("sheep"), says
  no number for it. Two different nouns for people, each opened by "a", are two people ("a girl pushes a
  boy on a swing"; added after the same reading, where the measure called "two children" wrong for it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from capdesk.describe.numbers import gender, numbers
from capdesk.describe.objects import tokens

WHO_REFS, WHO_AGREE_MAX = 3, 1
COUNT_REFS = 4
CHILD = frozenset({"child", "children", "kid", "kids", "baby", "babies", "toddler", "toddlers", "boy", "boys",
                   "girl", "girls", "infant", "infants"})
ADULT = frozenset({"man", "men", "woman", "women", "lady", "ladies", "guy", "guys", "gentleman", "gentlemen",
                   "adult", "adults", "father", "mother", "dad", "mom", "husband", "wife", "businessman",
                   "policeman", "grandmother", "grandfather", "elderly", "bride", "groom"})
DISTINCT = frozenset({"person"})
# The rules as first written (sex and count only, one noun per person); kept to compare figures.
FIRST_RULES = False


def age(text: str) -> str | None:
    """"child", "adult", "both" or None: the ages a text names people by."""
    w = set(tokens(text))
    c, a = bool(w & CHILD), bool(w & ADULT)
    return "both" if c and a else "child" if c else "adult" if a else None


def _contradicted(read: Callable[[str], str | None], pair: tuple[str, str], caption: str,
                  refs: Sequence[str]) -> bool:
    """Whether the caption says one of ``pair`` (as ``read`` reads it) where at least ``WHO_REFS``
    references say the other and at most ``WHO_AGREE_MAX`` agree."""
    said = read(caption)
    if said not in pair:
        return False
    other = pair[1] if said == pair[0] else pair[0]
    saying = [read(r) for r in refs]
    return (sum(g in (other, "both") for g in saying) >= WHO_REFS
            and sum(g in (said, "both") for g in saying) <= WHO_AGREE_MAX)


def age_contradicts(caption: str, refs: Sequence[str]) -> bool:
    return _contradicted(age, ("child", "adult"), caption, refs)


def who_contradicts(caption: str, refs: Sequence[str]) -> bool:
    return _contradicted(gender, ("male", "female"), caption, refs)


def count_contradicts(caption: str, refs: Sequence[str]) -> list[str]:
    """The categories whose number the caption says against at least ``COUNT_REFS`` references."""
    distinct = frozenset() if FIRST_RULES else DISTINCT
    said = numbers(caption, distinct)
    ref_numbers = [numbers(r, distinct) for r in refs]
    out = []
    for cat, n in said.items():
        other = "several" if n == "one" else "one"
        if sum(rn.get(cat) == other for rn in ref_numbers) >= COUNT_REFS:
            out.append(cat)
    return out


def contradicts(caption: str, refs: Sequence[str]) -> list[str]:
    """What the caption gets wrong about who or how many: "who", "how many: dog", ...; empty when nothing."""
    out = ["who"] if who_contradicts(caption, refs) else []
    if not FIRST_RULES and not out and age_contradicts(caption, refs):
        out.append("who: age")
    return out + [f"how many: {c}" for c in count_contradicts(caption, refs)]


def rate(pairs: Iterable[tuple[str, Sequence[str]]]) -> tuple[int, int]:
    """(captions contradicting their references in who or how many, captions)."""
    bad = n = 0
    for cap, refs in pairs:
        n += 1
        bad += bool(contradicts(cap, refs))
    return bad, n
