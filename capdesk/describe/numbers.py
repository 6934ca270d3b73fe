"""How many of a kind, and which sex, a sentence says: "a dog" is one, "two dogs", "people", "a group of
men", "a man and a woman" are several; "a man" is male, "a girl" female. Read the same way from the
model's captions (to mend them) and from the human captions (to measure them, ``training.who_count``).
Two mentions in the singular count as several when joined ("a man and a woman", "another") or when the
same noun is introduced twice ("a black dog ... a brown dog"); otherwise they are one, since a sentence
often names the same person twice ("a baby ... the young child").
"""

from __future__ import annotations

from capdesk.describe.objects import OBJECTS, _plural, phrase_hits, tokens

MALE = frozenset({"man", "men", "boy", "boys", "guy", "guys", "gentleman", "gentlemen", "father", "son", "sons",
                  "brother", "brothers", "policeman", "policemen", "fisherman", "fishermen", "businessman",
                  "boyfriend", "groom", "dad", "grandfather", "husband", "king", "male", "males"})
FEMALE = frozenset({"woman", "women", "girl", "girls", "lady", "ladies", "mother", "daughter", "daughters",
                    "sister", "sisters", "bride", "girlfriend", "waitress", "policewoman", "mom", "grandmother",
                    "wife", "queen", "female", "females"})

# Words that say several by themselves.
COLLECTIVE = frozenset({"people", "crowd", "team", "family", "audience", "spectators", "onlookers", "customers",
                        "members", "couple", "children", "men", "women", "gentlemen", "policemen", "fishermen",
                        "cattle", "oxen", "geese", "mice", "knives"})
NO_NUMBER = frozenset({"sheep", "skis", "deer", "fish"})
ONE_OR_TWO = "one or two"  # a number the detector half confirms (``policy``): it says no one number
JOINING = frozenset({"and", "another", "other", "second", "while"})
SEVERAL_BEFORE = frozenset({"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several",
                            "many", "some", "few", "multiple", "numerous", "group", "groups", "pair", "herd",
                            "flock", "pack", "bunch", "lots", "lot", "dozens", "both", "other"})


def _plural_words() -> frozenset[str]:
    out = set(COLLECTIVE)
    for words in OBJECTS.values():
        for w in words:
            last = w.split()[-1]
            if last not in COLLECTIVE:
                out |= _plural(last)
    return frozenset(out)


PLURAL = _plural_words()


def gender(text: str) -> str | None:
    """"male", "female", "both" or None: the sexes a text names people by."""
    w = set(tokens(text))
    m, f = bool(w & MALE), bool(w & FEMALE)
    return "both" if m and f else "male" if m else "female" if f else None


def _indefinite(w: list[str], i: int) -> bool:
    """Whether the noun phrase ending before word ``i`` opens with "a" or "an" ("a black dog")."""
    return bool({"a", "an"} & set(w[max(i - 3, 0):i]))


def several_before(w: list[str], i: int) -> bool:
    """Whether the words before word ``i`` say several of what it names ("two", "a group of", "a herd of")."""
    before = w[i - 1] if i else ""
    return before in SEVERAL_BEFORE or (before == "of" and i > 1 and w[i - 2] in SEVERAL_BEFORE)


def _number(w: list[str], i: int, n: int, cat: str, nouns: dict[str, set[str]],
            distinct: frozenset[str] = frozenset()) -> str | None:
    """"one", "several" or None (no number) for the mention of ``cat`` in words ``i`` to ``i + n``."""
    last = w[i + n - 1]
    if last in NO_NUMBER or ONE_OR_TWO in " ".join(w[max(i - 6, 0):i]):
        return None  # "one or two dogs" says no one number
    if last in PLURAL or several_before(w, i):
        return "several"
    if cat in nouns and set(w[max(i - 3, 0):i]) & JOINING:
        return "several"  # "a man and a woman"; "a baby ... the young child" is one child
    if last in nouns.get(cat, ()) and _indefinite(w, i):
        return "several"  # "a black dog ... a brown dog"
    if cat in distinct and cat in nouns and _indefinite(w, i):
        return "several"  # "a girl pushes a boy on a swing"
    nouns.setdefault(cat, set()).add(last)
    return "one"


def numbers(text: str, distinct: frozenset[str] = frozenset()) -> dict[str, str]:
    """Category -> "one" or "several" for each category the text names with a number it can be read as.
    For the categories in ``distinct``, two different nouns each opened by "a" are two of it ("a woman
    holding a child"): the measure and the policy read people so."""
    w = tokens(text)
    return counts_of(w, list(phrase_hits(w)), distinct)


def each_number(text: str) -> dict[str, set[str | None]]:
    """Category -> the number each mention of it says ("one", "several", None for none): "A car ... with cars"
    is {"one", "several"}, "A bunch of bananas" {"several"}."""
    w = tokens(text)
    return _mentions(w, list(phrase_hits(w)), frozenset())


def _mentions(w: list[str], hits: list[tuple[int, int, str]], distinct: frozenset[str]) -> dict[str, set[str | None]]:
    nouns: dict[str, set[str]] = {}
    found: dict[str, set[str | None]] = {}
    starts = {i for i, _, cat in hits if cat}
    for i, n, cat in hits:
        if cat and i + n not in starts:  # "football players", "a dog bed": a noun before a noun says no number
            found.setdefault(cat, set()).add(_number(w, i, n, cat, nouns, distinct))
    return found


def counts_of(w: list[str], hits: list[tuple[int, int, str]], distinct: frozenset[str] = frozenset()) -> dict[str, str]:
    """``numbers`` of the words ``w`` whose phrases (``objects.phrase_hits``) are found already."""
    found = _mentions(w, hits, distinct)
    out: dict[str, str] = {}
    for cat, said in found.items():
        if "several" in said:
            out[cat] = "several"
        elif None not in said:
            out[cat] = "one"
    return out
