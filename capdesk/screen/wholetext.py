"""The words read on screen, whole: every line the text reader found, in reading order, the page's lines
before the browser's own controls, and how a long text is said aloud.

A picture's alt text keeps the words read in it short (``ocr.MAX_CHARS``); on screen the words are often
all there is, and a timetable's "Cancelled" may be its last line, so the screen's text is kept whole up
to ``MAX_CHARS`` (a page of a long article), and where even that is passed, it is said that the text goes
on. Printed, the text is all there; said aloud, a long text is summarised by its length and its first
words ("Text, 640 words, starting: ..."), unless every word is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capdesk.describe.alttext import quoted_text

if TYPE_CHECKING:  # the command's help names this module's bounds: it loads nothing of the bus
    from capdesk.screen.atspi import Rect

MAX_CHARS = 20_000  # of the screen's text kept: a page of a long article, far past what a window shows
LONG_WORDS = 60  # a text longer than this is summarised when said aloud
START_WORDS = 40  # words said of a long text

Line = tuple[str, tuple[float, float, float, float]]  # the text reader's line and its box (x0, y0, x1, y1)


def _inside(box: tuple[float, float, float, float], area: Rect) -> bool:
    x = (box[0] + box[2]) / 2
    y = (box[1] + box[3]) / 2
    return area.x <= x < area.x + area.width and area.y <= y < area.y + area.height


def in_reading_order(lines: list[Line], first: Rect | None = None) -> list[str]:
    """The lines' words, top to bottom, those whose middle lies inside ``first`` (the page, in the capture's
    pixels) before the others."""
    if first is None or first.empty:
        return [t for t, _ in lines]
    return [t for t, b in lines if _inside(b, first)] + [t for t, b in lines if not _inside(b, first)]


def whole_text(lines: list[Line], first: Rect | None = None, limit: int = MAX_CHARS) -> tuple[str | None, bool]:
    """Every word read, in reading order (see ``in_reading_order``), and whether it passed ``limit``
    characters and was cut there (after which it says that it goes on)."""
    text = " ".join(" ".join(in_reading_order(lines, first)).split())
    if not text:
        return None, False
    if len(text) <= limit:
        return text, False
    return text[:limit].rsplit(" ", 1)[0] + f" … (the text goes on past {limit:,} characters)", True


def word_count(text: str | None) -> int:
    return len(text.split()) if text else 0


def summary(text: str) -> str:
    """How a long text is said: 'Text, 640 words, starting: "the first words …"'."""
    words = text.split()
    return f'Text, {len(words)} words, starting: "{" ".join(words[:START_WORDS])} …"'


def spoken(printed: str, text: str | None, all_words: bool = False) -> str:
    """``printed`` (holding ``text`` as the description quotes it) as it is said aloud: a text of more than
    ``LONG_WORDS`` words summarised by ``summary``, unless ``all_words``."""
    if all_words or not text or word_count(text) <= LONG_WORDS:
        return printed
    quoted = quoted_text(text)
    if quoted in printed:
        return printed.replace(quoted, summary(text), 1)
    return printed
