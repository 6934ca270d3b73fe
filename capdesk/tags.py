"""Object tags from the encoder's ImageNet head: a few classes the network is sure of."""

from __future__ import annotations

import numpy as np

# ImageNet classes that are mostly printed or written matter: seeing one is a reason to read text.
TEXT_BEARING = frozenset({
    "website", "web site", "menu", "book jacket", "comic book", "crossword", "envelope", "packet",
    "street sign", "scoreboard", "monitor", "screen", "television", "laptop", "notebook computer",
    "slide rule", "binder", "carton", "library", "bookcase", "bookshop", "toyshop", "restaurant",
})


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def top_tags(logits: np.ndarray | None, labels: list[str] | None, threshold: float = 0.35,
             max_tags: int = 3) -> list[tuple[str, float]]:
    """(label, probability) of the classes above ``threshold``, most likely first."""
    if logits is None or not labels:
        return []
    p = softmax(logits)
    order = np.argsort(-p)[:max_tags]
    out: list[tuple[str, float]] = []
    for i in order:
        if p[i] < threshold:
            break
        name = labels[int(i)]
        if name not in {n for n, _ in out}:
            out.append((name, round(float(p[i]), 4)))
    return out


def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"


def plain(tags: list[tuple[str, float]]) -> str:
    """'May contain: a tabby cat, an espresso.' (empty when there are no tags)."""
    if not tags:
        return ""
    return "May contain: " + ", ".join(f"{_article(n)} {n}" for n, _ in tags) + "."


def suggests_text(tags: list[tuple[str, float]]) -> bool:
    return any(n.lower() in TEXT_BEARING for n, _ in tags)
