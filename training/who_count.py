"""Who and how many: whether a caption contradicts its photo's human captions about the people's sex or
age, or about how many of a kind of thing there are. CHAIR (``training.chair``) counts only objects that
are absent; a caption saying "a girl" for a boy, or "two dogs" for one, names nothing absent and is still
wrong to a listener.

The rules, fixed before any threshold was tuned on them:

- **Who.** The caption says a man or a boy (or another male word: guy, gentleman, father, ...) and no
  female word, while at least 3 of the references say a woman or a girl (or another female word) and at
  most one of them says a male word; or the reverse.
- **How many.** For each COCO category the caption names (``capdesk.describe.objects``): the caption
  says one of it ("a dog", "the man", "a skier") where at least 4 references say several ("two dogs",
  "people", "a group of men", "a man and a woman"); or it says several where at least 4 references say
  one. A text that names the category both ways, or only in a form that says no number ("sheep"), says
  no number for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from capdesk.describe.numbers import gender, numbers

WHO_REFS, WHO_AGREE_MAX = 3, 1
COUNT_REFS = 4


def who_contradicts(caption: str, refs: Sequence[str]) -> bool:
    said = gender(caption)
    if said not in ("male", "female"):
        return False
    other = "female" if said == "male" else "male"
    saying = [gender(r) for r in refs]
    against = sum(g in (other, "both") for g in saying)
    agree = sum(g in (said, "both") for g in saying)
    return against >= WHO_REFS and agree <= WHO_AGREE_MAX


def count_contradicts(caption: str, refs: Sequence[str]) -> list[str]:
    """The categories whose number the caption says against at least ``COUNT_REFS`` references."""
    said = numbers(caption)
    ref_numbers = [numbers(r) for r in refs]
    out = []
    for cat, n in said.items():
        other = "several" if n == "one" else "one"
        if sum(rn.get(cat) == other for rn in ref_numbers) >= COUNT_REFS:
            out.append(cat)
    return out


def contradicts(caption: str, refs: Sequence[str]) -> list[str]:
    """What the caption gets wrong about who or how many: "who", "how many: dog", ...; empty when nothing."""
    out = ["who"] if who_contradicts(caption, refs) else []
    return out + [f"how many: {c}" for c in count_contradicts(caption, refs)]


def rate(pairs: Iterable[tuple[str, Sequence[str]]]) -> tuple[int, int]:
    """(captions contradicting their references in who or how many, captions)."""
    bad = n = 0
    for cap, refs in pairs:
        n += 1
        bad += bool(contradicts(cap, refs))
    return bad, n
