"""Mending a caption's words where the evidence says otherwise: who (a man, a girl), how many (one, two,
a group), and a noun the picture does not hold (a dog for a horse). The caption model's sentences are
short and regular ("a group of people standing on a beach", "two dogs are playing in the snow"); where
each thing is named and where its noun phrase begins is read once per caption by
``capdesk.describe.sentence``, and each mend here is an operation on those phrases.

Each function takes and gives the caption as lower-case words; ``sentence`` makes the text.
"""

from __future__ import annotations

from capdesk.describe.numbers import NO_NUMBER, several_before
from capdesk.describe.objects import PHRASES
from capdesk.describe.plainwords import NUMBERS, article, plural
from capdesk.describe.sentence import DETERMINERS, GROUP_WORDS, SINGULAR_OF, parse, singular

# Gendered words -> the word that says only what is reliable (a person, a child).
NEUTRAL = {"man": "person", "men": "people", "woman": "person", "women": "people", "boy": "child",
           "boys": "children", "girl": "child", "girls": "children", "guy": "person", "guys": "people",
           "lady": "person", "ladies": "people", "gentleman": "person", "gentlemen": "people",
           "policeman": "police officer", "policemen": "police officers", "fisherman": "person fishing",
           "businessman": "person", "his": "their", "her": "their", "himself": "themselves",
           "herself": "themselves"}
# A child's age is said only where the caption model is reliable about it. Against the val split's human
# captions (facts, adults in at least 3 of 5 references): "a little girl" / "a little boy" 1 of 48 wrong,
# "a boy" 0 of 12, but "a girl" 3 of 11, "a young girl" 4 of 13 and "a young boy" 3 of 23: the model says
# "girl" for young women and "young boy" for young men. Those are said as "a person", "a young person".
AGE_UNSURE = {"girl": "", "girls": "", "boy": "young", "boys": "young"}  # word -> after which it is unsure
AGE_SURE_BEFORE = frozenset({"little", "baby"})
PERSON_PRONOUNS = frozenset({"his", "her", "himself", "herself"})
_PLACE_WORDS = frozenset({"on", "at", "in", "near", "by"})
_PLACE_ENDS = frozenset({"is", "are", "while", "as", "during", "for"})  # what may follow the place's phrase
# What "and another" is said of, not dropped as a repeat: people, animals and vehicles.
_SUBJECTS = frozenset({"person", "bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe",
                       "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"})
# Verbs the caption model says right after its subject without "is"/"are" ("two dogs play", "a dog runs"):
# a recounted subject takes the verb's other form.
BARE_VERBS = frozenset({"play", "run", "jump", "walk", "stand", "sit", "swim", "ride", "climb", "race", "catch",
                        "chase", "look", "wait", "watch", "eat", "hold", "carry", "fly", "skate", "ski", "surf",
                        "dance", "pose", "work", "cross", "wear", "sleep", "pull", "push", "fight", "throw",
                        "kick", "hit", "drive", "splash", "wade", "rest", "lean", "hike", "smile", "laugh", "talk",
                        "sing", "march", "gather", "stare", "lie", "lay", "do", "go", "have", "make", "reach",
                        "grab", "bite", "roll", "dig", "lead", "cheer", "perform", "compete", "head", "sail"})
_THIRD = {"do": "does", "go": "goes", "have": "has"}


def sentence(words: list[str]) -> str:
    if not words:
        return ""
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def neutral(words: list[str]) -> list[str]:
    """The caption with "a man", "a little girl" said as "a person", "a little child" (and "his" as
    "their"); a girl not said to be little, and a young boy, as a person."""
    if not any(w in NEUTRAL and w not in PERSON_PRONOUNS for w in words):
        return list(words)
    out: list[str] = []
    for i, w in enumerate(words):
        before = words[i - 1] if i else ""
        if w in AGE_UNSURE and before not in AGE_SURE_BEFORE and AGE_UNSURE[w] in ("", before):
            out.append("people" if w.endswith("s") else "person")
        else:
            out.extend(NEUTRAL.get(w, w).split())
    return _pairs(_articles(out))


def _pairs(words: list[str]) -> list[str]:
    """'a person and a person', 'a person and person' (once a man and a woman) -> 'two people'."""
    for one, other, two in (("person", "person", "people"), ("child", "child", "children"),
                            ("child", "person", "people"), ("person", "child", "people")):
        for i in range(len(words) - 3):
            for pair in (["a", one, "and", "a", other], ["a", one, "and", other]):
                if words[i:i + len(pair)] == pair:
                    return words[:i] + ["two", two] + words[i + len(pair):]
    return words


def without_repeats(words: list[str]) -> list[str]:
    """The caption without the words said twice over "and" or side by side: "a white and white dog" ->
    "a white dog", "a black hat and a hat" -> "a black hat", "cars and cars" -> "cars"; a second person or
    animal is another one ("a black dog and a dog" -> "a black dog and another dog")."""
    # "a desk desk", and "a mountain mountains" (the caption model's "a mountain mountains in the mountains")
    out = [w for k, w in enumerate(words) if k == 0 or singular(w) != singular(words[k - 1])]
    for i in range(len(out) - 5):  # "on a beach at the beach": the place said once
        if out[i] in _PLACE_WORDS and out[i + 3] in _PLACE_WORDS and out[i + 1] in ("a", "an", "the") \
                and out[i + 4] in ("a", "an", "the") and out[i + 2] == out[i + 5]:
            del out[i + 3:i + 6]
            break
    i = 0
    while i + 2 < len(out):
        if out[i + 1] != "and":
            i += 1
            continue
        same = out[i + 2] == out[i]
        with_article = out[i + 2] in ("a", "an", "the") and i + 3 < len(out) and out[i + 3] == out[i]
        if with_article and PHRASES.get((out[i],)) == "person":
            pass  # "a man and a man": two people, once the words are neutral (``_pairs``)
        elif with_article and PHRASES.get((out[i],)) in _SUBJECTS:
            out[i + 2] = "another"
        elif with_article:
            del out[i + 1:i + 4]
            continue
        elif same and not (PHRASES.get((out[i],)) in _SUBJECTS and singular(out[i]) == out[i]):
            del out[i + 1:i + 3]
            continue
        i += 1
    return _place_said_twice(out)


# Where a closing phrase may say a place again ("on", "in", "into", "at", and "of" as in "on top of" or "a
# field of a field"); "with", "near", "next to" and "over" introduce another thing of the same kind as often
# ("a dog playing with a dog", "a car next to a car"), which stays.
_AGAIN_PLACE = frozenset({"on", "in", "into", "at", "of"})


def _place_said_twice(words: list[str]) -> list[str]:
    """The caption without a closing phrase of place that names again a thing it has named: "a living room in
    a room" -> "a living room", "a city street with cars on the street" -> "a city street with cars"; as it
    was where what is left would end unfinished."""
    if len(words) < 4:
        return words
    last = words[-1]
    det = parse(words).determiner(len(words) - 1)
    if det is None or det < 2 or words[det - 1] not in _AGAIN_PLACE or last not in words[:det]:
        return words
    if any(w.endswith("ing") for w in words[det + 1:]):
        return words  # not one noun phrase: "in a white shirt playing tennis"
    if PHRASES.get((singular(last),)) in _SUBJECTS or last in GROUP_WORDS:
        return words  # a person or an animal said again may be another one ("a dog laying on the back of a dog")
    return _complete(_without_span(words, len(words) - 1, len(words))) or words


def _articles(words: list[str]) -> list[str]:
    out = list(words)
    for i in range(len(out) - 1):
        if out[i] in ("a", "an"):
            out[i] = article(out[i + 1])
    return out


def recount(words: list[str], category: str, n: int, number: str | None = None) -> list[str] | None:
    """The caption with its first mention of ``category`` said as ``n`` of it ("a group of people" ->
    "a person" for n=1, "a man" -> "two men" for n=2), the verb right after it agreeing; None when the
    mention's noun phrase cannot be found."""
    found = parse(words).first(category)
    if found is None:
        return None
    start, end = found.start, found.end
    if n == 1 and singular(words[end - 1]) == words[end - 1] and words[end - 1] not in SINGULAR_OF:
        return None  # "a man and a woman": two singular mentions that no one noun phrase can mend
    det = parse(words).determiner(start)
    if det is None:
        return None
    adjectives = [w for w in words[det + 1:start] if w not in GROUP_WORDS and w not in ("of", "a", "an", "the")
                  and w not in DETERMINERS]
    base = words[start:end - 1] + [singular(words[end - 1])]
    if n == 1:
        rest = [*adjectives, *base]
        phrase = [article(rest[0]), *rest]
    else:
        number = number or NUMBERS.get(n)
        head = number.split() if number else ["a", "group", "of"] if category == "person" else ["many"]
        phrase = [*head, *adjectives, *plural(" ".join(base)).split()]
    out = words[:det] + phrase + words[end:]
    k = det + len(phrase)
    verb = parse(out).link(k)
    if verb is not None:
        out[verb] = "is" if n == 1 else "are"
    elif k < len(out):
        out[k] = agree(out[k], n)
    if n == 1:
        cut = next((j for j in range(k, len(out)) if out[j] == "together" or out[j:j + 2] == ["each", "other"]),
                   None)
        if cut is not None:  # "standing next to each other" cannot be said of one
            while cut > k and out[cut - 1] in ("next", "to", "with", "near", "beside", "and"):
                cut -= 1
            out = out[:cut]
    return out


# Words that open the phrase an object is named in ("sitting on a bench", "next to a table"): the
# phrase can go and the sentence still stands.
PREPOSITIONS = frozenset({"on", "in", "at", "with", "near", "by", "under", "over", "into", "through", "across",
                          "onto", "beside", "behind", "from", "off", "along", "around", "and"})
LONG_PREPOSITIONS = (("next", "to"), ("in", "front", "of"), ("on", "top", "of"), ("in", "the", "middle", "of"))
# Verbs whose object is a detail of the subject ("a man holding a kite on a beach" is still a man on a
# beach); after others the rest of the sentence is about the object ("flying a kite in the air").
DETACHABLE = frozenset({"holding", "carrying", "wearing", "eating", "drinking", "using"})
# Nouns an object's name often modifies ("a clock tower", "a skateboard trick"): the name alone can go.
HEADS = frozenset({"tower", "towers", "shop", "store", "stand", "rack", "ramp", "track", "slope", "pole", "trick",
                   "tricks", "stunt"})
# ... but before these, "baseball", "tennis", "soccer" name a game, not a ball that must be seen.
GAMES = frozenset({"player", "players", "game", "games", "field", "court", "team", "uniform", "match", "stadium",
                   "net", "practice"})
POSSESSIVES = frozenset({"its", "his", "her", "their"})


COLOURS = frozenset({"white", "black", "red", "blue", "green", "yellow", "brown", "pink", "orange", "purple",
                     "gray", "grey", "tan", "silver", "gold"})
# Clothes that say little but their colour: without it "in a shirt" says nothing, and goes with it (a
# dress, a uniform, a helmet or a wetsuit still says something, and stays).
CLOTHES = frozenset({"shirt", "shirts", "top", "tops", "jacket", "jackets", "coat", "coats", "sweater", "hoodie",
                     "outfit", "outfits", "clothes"})
# After a colour these words end its phrase: the colour is said of a thing only when a noun follows it.
_NOT_A_NOUN = frozenset({"and", "with", "in", "on", "at", "of", "is", "are", "while", "near", "by", "as"})


def without_colours(words: list[str], unsure: set[str]) -> list[str]:
    """The caption without the colours in ``unsure`` where they say what colour a thing is ("a dog in a
    red shirt" -> "a dog in a shirt"; "black and white" goes only when both are unsure); a colour said as
    a thing ("dressed in black") stays."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        pair = words[i + 1:i + 3] if i + 2 < len(words) else []
        if w in COLOURS and len(pair) == 2 and pair[0] == "and" and pair[1] in COLOURS:
            nxt = words[i + 3] if i + 3 < len(words) else ""
            if w in unsure and pair[1] in unsure and nxt and nxt not in _NOT_A_NOUN:
                i += 3
                continue
            out.extend(words[i:i + 3])
            i += 3
            continue
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in unsure and nxt and nxt not in _NOT_A_NOUN and nxt not in COLOURS:
            after = words[i + 2] if i + 2 < len(words) else ""
            if nxt in CLOTHES and out[-2:-1] in (["in"], ["wearing"]) and out[-1:] in (["a"], ["an"]) \
                    and after != "and":
                del out[-2:]  # "a person in a red shirt is sitting" -> "a person is sitting"
                i += 2
                continue
            i += 1
            continue
        out.append(w)
        i += 1
    return _articles(out)


def drop(words: list[str], category: str) -> list[str] | None:
    return _complete(_without(words, category))


def _complete(out: list[str] | None) -> list[str] | None:
    """``out``, or None where what is left ends unfinished: "a man is holding a ball" cannot lose its
    object, "a man is" says nothing."""
    return None if not out or out[-1] in ("is", "are", "a", "an", "the") or out[-1] in PREPOSITIONS else out


def drop_place(words: list[str], noun: str) -> list[str] | None:
    """The caption without the phrase that says where, around ``noun`` ("standing in front of a building"
    -> "standing"), or None as for ``drop``."""
    if noun not in words:
        return None
    start = words.index(noun)
    if start + 1 < len(words) and words[start + 1] not in PREPOSITIONS | _PLACE_ENDS:
        return None  # "a city street", "a rock path": the word names another place, which stays
    return _complete(_without_span(words, start, start + 1))


def _without(words: list[str], category: str) -> list[str] | None:
    """The caption without its mention of ``category``: "a man sitting on a bench in a park" -> "a man
    sitting in a park", "a clock tower" -> "a tower", "holding a tennis racket" goes with its verb; None
    where the mention is the sentence's subject or its phrase cannot be told."""
    found = parse(words).first(category)
    return None if found is None else _without_span(words, found.start, found.end)


def _without_span(words: list[str], start: int, end: int) -> list[str] | None:
    if end < len(words) and words[end] in GAMES:
        return None
    if words[end:end + 2] in (["on", "it"], ["in", "it"], ["on", "them"]):
        end += 2  # "a building with a clock on it"
    elif words[end:end + 1] == ["in"] and words[end + 1:end + 2] and words[end + 1] in POSSESSIVES:
        end += 3  # "a ball in its mouth"
    if end < len(words) and words[end] in HEADS:
        return words[:start] + words[end:]
    det = parse(words).determiner(start)
    if det is None or det == 0:
        return None
    for long in LONG_PREPOSITIONS:
        k = det - len(long)
        if k > 0 and tuple(words[k:det]) == long:
            return words[:k] + words[end:]
    before = words[det - 1]
    if before == "of":  # "on the back of a ball": the phrase it ends
        k = next((j for j in range(det - 2, max(det - 5, 0), -1) if words[j] in PREPOSITIONS), None)
        return None if k is None else words[:k] + words[end:]
    if det > 1 and (before in PREPOSITIONS or before in DETACHABLE):
        return words[:det - 1] + words[end:]
    return None


def agree(verb: str, n: int) -> str:
    """A present-tense verb that follows a subject of ``n`` things ("play" -> "plays" for one, "runs" ->
    "run" for two); any other word as it is."""
    base = base_verb(verb)
    if base is None:
        return verb
    if n != 1:
        return base
    if base in _THIRD:
        return _THIRD[base]
    return plural(base)  # the same spelling rule: "watch" -> "watches", "fly" -> "flies"


def base_verb(word: str) -> str | None:
    """The bare form of a present-tense verb the caption model says ("runs" -> "run"), or None."""
    if word in BARE_VERBS:
        return word
    for base, third in _THIRD.items():
        if word == third:
            return base
    for cut, add in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(cut) and word[: -len(cut)] + add in BARE_VERBS:
            return word[: -len(cut)] + add
    return None


def replace(words: list[str], category: str, new: str) -> list[str] | None:
    """The caption with its mention of ``category`` named ``new`` instead ("a black dog" -> "a black
    horse"), plural kept; None when it names no such thing."""
    found = parse(words).first(category)
    if found is None:
        return None
    start, end = found.start, found.end
    last = words[end - 1]
    # "sheep" is its own plural: "a group of sheep" is several by the words before it, and a horse put in
    # its place is "a group of horses", not "a group of horse".
    was_plural = singular(last) != last or (last in NO_NUMBER and several_before(words, start))
    phrase = (plural(new) if was_plural else new).split()
    return _articles(words[:start] + phrase + words[end:])
