"""Object tags from the encoder's ImageNet head: a few classes the network is sure of."""

from __future__ import annotations

import numpy as np

# ImageNet classes that are mostly printed or written matter: seeing one is a reason to read text.
TEXT_BEARING = frozenset({
    "website", "web site", "menu", "book jacket", "comic book", "crossword", "envelope", "packet",
    "street sign", "scoreboard", "monitor", "screen", "television", "laptop", "notebook computer",
    "slide rule", "binder", "carton", "library", "bookcase", "bookshop", "toyshop", "restaurant",
})


# Fine-grained ImageNet classes (118 dog breeds, five house cats, dozens of birds) are often
# confused with one another; their sum names the animal far more reliably than any breed. The beetles are
# 300-307 only: 308-311 are fly, bee, ant and grasshopper, which summed in made a honey bee "a beetle".
GROUPS: tuple[tuple[int, int, str], ...] = (
    (0, 6, "fish"), (7, 24, "bird"), (80, 100, "bird"), (118, 121, "crab"), (127, 146, "bird"), (33, 37, "turtle"),
    (38, 48, "lizard"), (52, 68, "snake"), (72, 77, "spider"), (151, 268, "dog"), (281, 285, "cat"),
    (294, 297, "bear"), (300, 307, "beetle"), (321, 326, "butterfly"), (365, 384, "monkey or ape"),
    (341, 343, "pig"), (389, 397, "fish"),
)


def grouped(p: np.ndarray, labels: list[str]) -> tuple[np.ndarray, list[str]]:
    """Probabilities and names with each group of fine-grained classes merged into one."""
    if len(labels) != 1000 or len(p) != 1000:
        return p, labels
    keep = np.ones(1000, bool)
    probs, names = [], []
    for lo, hi, name in GROUPS:
        keep[lo:hi + 1] = False
        probs.append(p[lo:hi + 1].sum())
        names.append(name)
    return np.concatenate([p[keep], np.array(probs)]), [n for n, k in zip(labels, keep) if k] + names


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
    p, labels = grouped(softmax(logits), labels)
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
