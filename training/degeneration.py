"""Signs that a fine-tune has come apart, read from the captions it writes on the person's own held-out
pictures: captions that repeat themselves ("black and black and black"), and words that none of the
picture's own captions support (a new wrong fact such as "brick sky").

Both are measured for the base model too, on the same pictures, so that a fine-tune is judged against
where it started: the base's captions use other words than the person's, and a fine-tune that learnt
their pictures says fewer unsupported words, not more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from training.concepts import STOPWORDS

JOINERS = frozenset({"and", "or", "with", "of", "in", "on", "to", "a", "an", "the", ","})


def _content(word: str) -> bool:
    return word.isalpha() and len(word) > 2 and word not in STOPWORDS


def _stem(word: str) -> str:
    """Plural and singular taken as one word: "dogs" is supported by "dog"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def repetition(caption: str) -> str | None:
    """The words that show a caption repeating itself, or None: a content word again at once or after
    one joining word ("black black", "black and black"), a content word three times, a phrase of two
    content words twice ("green trees ... green trees"), or a phrase with one again within three words ("a
    dog and a dog"). Not "a black dog and a white dog" nor "a man holding a tennis racquet on a tennis
    court": human captions say such things."""
    words = caption.lower().split()
    for i, w in enumerate(words):
        if not _content(w):
            continue
        if i + 1 < len(words) and words[i + 1] == w:
            return f"{w} {w}"
        if i + 2 < len(words) and words[i + 2] == w and words[i + 1] in JOINERS:
            return " ".join(words[i:i + 3])
    counts = Counter(w for w in words if _content(w))
    for w, c in counts.items():
        if c >= 3:
            return w
    first: dict[tuple[str, str], int] = {}
    for i, pair in enumerate(zip(words, words[1:])):
        if pair in first and (all(_content(w) for w in pair)
                              or (any(_content(w) for w in pair) and i - first[pair] <= 3)):
            return " ".join(pair)
        first.setdefault(pair, i)
    return None


def unsupported(caption: str, refs: Sequence[str]) -> list[str]:
    """The content words of ``caption`` that none of the picture's own captions has."""
    known = {_stem(w) for r in refs for w in r.lower().split()}
    return [w for w in caption.lower().split() if _content(w) and _stem(w) not in known]


def degeneration(hyps: Mapping[str, str], refs: Mapping[str, list[str]]) -> dict:
    """Over the captions ``hyps`` (id -> caption): how many repeat themselves (with the first such
    caption as an example) and the share of their content words no caption of the picture supports
    (with the words most often said so)."""
    repeating = [h for h in hyps.values() if repetition(h)]
    said = wrong = 0
    words: Counter = Counter()
    for k, h in hyps.items():
        content = [w for w in h.lower().split() if _content(w)]
        bad = unsupported(h, refs[k])
        said += len(content)
        wrong += len(bad)
        words.update(bad)
    return {"repeating": len(repeating), "repeating_example": repeating[0] if repeating else "",
            "unsupported_share": round(wrong / said, 4) if said else 0.0,
            "unsupported_words": [w for w, _ in words.most_common(5)]}
