"""What was found in a picture, one part at a time, each with where it is and how big: the list a person
explores by keyboard in the window (F7), ``found`` in ``--json``, and the "where things are" sentence of
the long description.

"Person, left half, tall. Probably a dog, bottom right, small. Text, top: 'NO PARKING'." A screen reader
user gets from it the layout a sighted reader takes in at a glance, which one sentence of alt text never
holds. Each part keeps how sure it is in words: an object the detector is not sure of is said as
"Probably" or "Perhaps", never as plainly as one it is sure of.
"""

from __future__ import annotations

from dataclasses import dataclass

SURE_FROM = 0.8  # an object said plainly ("Person, ...")
PROBABLY_FROM = 0.5  # "Probably a dog, ..."; under it an object is not listed (a list of maybes costs a
# listener more time than it gives)
BLOCK_GAP = 0.8  # lines closer than this many line heights, one under the other, are one block of text
MAX_OBJECTS = 12
MAX_TEXT_BLOCKS = 12
QUOTE_CHARS = 120  # a text block is quoted up to this many characters, then "…"


@dataclass(frozen=True)
class Part:
    """One thing found: an object, a block of text, or the kind of picture."""

    what: str  # "object" | "text" | "kind"
    name: str  # "person", the text read, or the kind said ("a chart")
    where: str = ""  # "left half", "bottom right", "whole picture"
    size: str = ""  # "small", "tall", ...
    sure: str = "sure"  # "sure" | "probably"
    score: float | None = None
    box: tuple[int, int, int, int] | None = None  # x0, y0, x1, y1 in the picture's own pixels

    def said(self) -> str:
        """The part as it is said: one short sentence."""
        if self.what == "kind":
            return f"The kind of picture: {self.name}."
        if self.what == "text":
            quoted = self.name if len(self.name) <= QUOTE_CHARS else self.name[:QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
            return f"Text, {self.where}: '{quoted}'."
        name = self.name if self.sure == "sure" else f"{self.sure} {_article(self.name)} {self.name}"
        size = "" if self.where == "whole picture" else self.size  # "whole picture, large" says it twice
        where = ", ".join(w for w in (self.where, size) if w)
        text = f"{name}, {where}." if where else f"{name}."
        return text[0].upper() + text[1:]

    def to_json(self) -> dict:
        return {"what": self.what, "name": self.name, "where": self.where, "size": self.size, "sure": self.sure,
                "score": None if self.score is None else round(self.score, 3),
                "box": None if self.box is None else list(self.box), "said": self.said()}


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def where_words(box: tuple[float, float, float, float], size: tuple[int, int]) -> str:
    """Where a box lies in a picture of ``size``: "left half", "top right", "middle", "whole picture"."""
    w, h = max(1, size[0]), max(1, size[1])
    x0, y0, x1, y1 = box
    if (x1 - x0) >= 0.8 * w and (y1 - y0) >= 0.8 * h:
        return "whole picture"
    cx, cy = (x0 + x1) / 2 / w, (y0 + y1) / 2 / h
    across = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else ""
    down = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else ""
    if across and down:
        return f"{down} {across}"
    if across:  # at mid height: a box reaching over most of the height is a half, not a middle
        return f"{across} half" if (y1 - y0) >= 0.5 * h else f"{across} side"
    if down:
        return down
    return "middle"


def size_words(box: tuple[float, float, float, float], size: tuple[int, int]) -> str:
    """How big a box is in words: how much of the picture it takes, and tall or wide where it is either."""
    w, h = max(1, size[0]), max(1, size[1])
    x0, y0, x1, y1 = box
    bw, bh = (x1 - x0) / w, (y1 - y0) / h
    share = bw * bh
    if bh >= 0.6 and bw < 0.5:
        return "tall"
    if bw >= 0.6 and bh < 0.5:
        return "wide"
    if share >= 0.4:
        return "large"
    if share >= 0.1:
        return "medium"
    return "small"


def sureness(score: float) -> str | None:
    if score >= SURE_FROM:
        return "sure"
    if score >= PROBABLY_FROM:
        return "probably"
    return None


def text_blocks(lines: list) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Lines read (in reading order) joined into blocks: a paragraph is one part to explore, not one per
    line; a heading or a sign's separate panel stays a block of its own."""
    blocks: list[tuple[str, tuple[float, float, float, float]]] = []
    for text, (x0, y0, x1, y1) in lines:
        if blocks:
            t, (bx0, by0, bx1, by1) = blocks[-1]
            height = max(1.0, y1 - y0)
            below = 0 <= y0 - by1 < BLOCK_GAP * height or (y0 < by1 and y1 > by1)
            if below and min(x1, bx1) > max(x0, bx0):
                blocks[-1] = (f"{t} {text}", (min(x0, bx0), by0, max(x1, bx1), max(y1, by1)))
                continue
        blocks.append((text, (x0, y0, x1, y1)))
    return blocks


def parts_found(size: tuple[int, int] | None, kind: str | None, objects: list, text_lines: list,
          objects_mean_things: bool = True) -> list[Part]:
    """Every part found, in the order a person explores them: the kind first (where it is not a photo),
    then the objects from left to right, then the text from top to bottom.

    ``kind``: the kind as said ("a chart"), or None for a photo. ``objects``: detections (label, score, box).
    ``text_lines``: (text, box) in reading order. ``objects_mean_things``: False for a kind whose drawn objects
    are no things (a person icon in a screenshot is not a person)."""
    found: list[Part] = []
    if kind:
        found.append(Part("kind", kind, "whole picture"))
    if size is None:
        return found
    if objects_mean_things:
        seen = []
        for d in objects:
            sure = sureness(d.score)
            if sure is not None:
                seen.append(Part("object", d.label, where_words(d.box, size), size_words(d.box, size), sure,
                                 d.score, tuple(int(v) for v in d.box)))
        seen.sort(key=lambda p: (p.box[0] + p.box[2], p.box[1]))  # type: ignore[index]
        found += seen[:MAX_OBJECTS]
    for text, box in text_blocks(text_lines)[:MAX_TEXT_BLOCKS]:
        found.append(Part("text", text, where_words(box, size), "", "sure", None, tuple(int(v) for v in box)))
    return found


def where_things_are(found: list[Part]) -> str:
    """The long description's "where things are" sentence, or "" when nothing has a place."""
    placed = [p for p in found if p.what == "object"]
    if not placed:
        return ""
    said = "; ".join(_lower_first(p.said().rstrip(".")) for p in placed)
    return f"Where things are: {said}."


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
