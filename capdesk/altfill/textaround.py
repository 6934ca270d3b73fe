"""The text before and after a picture in a page or an XML part, read in one pass over its markup.

Evidence for the person reviewing the alt text, never words for it: what the paragraphs beside a
picture say often tells what it is there to show, which the picture alone cannot. The caption stays
the only context the wording itself takes (``rows.from_caption``); this text is shown in the report
and the review file and changes no alt text.

The markup's text is read once: tags taken away (those that end a word, ``<p>``, ``<br>``, Word's
``<w:tab>`` ..., read as a space), comments taken away, character references read, runs of white
space made one space, each piece of text keeping where in the markup it came from. A picture's text
before and after is then a slice of that text, so a page of ten thousand pictures costs about what
one pass over it costs.
"""

from __future__ import annotations

import bisect
import html
import re
from array import array

CONTEXT_MAX = 200  # characters a side: a sentence or two, enough to say what the picture is there for
PICTURE_MARK = "[picture]"  # where the picture stands between the text before and after it
_STEPS = 200  # blocks looked through on a side for one that holds text
# Tags that end a word: the rest (em, span, a, text:span ...) join the text on either side.
_SPACED = re.compile(rb"<(?:/?(?:[\w.-]+:)?(?:br|p|div|li|tab|s|line-break|h\d)\b[^>]*)>")
_SPACED_STR = re.compile(_SPACED.pattern.decode("ascii"))
_TAG_STR = re.compile(r"<[^>]*>")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)|<\?.*?(?:\?>|$)", re.S)
_WS = re.compile(r"\s+")  # what str.split() splits at
HTML_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "div", "dl", "dt",
    "fieldset", "figure", "figcaption", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul"})
# Text no reader meets beside the picture: scripts, styles, the page's title, and captions (said apart).
HTML_LEFT_OUT = frozenset({"script", "style", "title", "template", "noscript", "figcaption", "iframe", "noembed",
                           "noframes"})


class _Text:
    """A piece of markup's words on one line (``text``), and where each run of text and each tag read
    as a space lies in the markup (``starts``/``ends``) and in ``text`` (``at``/``to``)."""

    def __init__(self, raw: bytes | str, holes: list[tuple[int, int]]) -> None:
        self.raw = raw
        self.starts, self.ends, self.at, self.to = array("q"), array("q"), array("q"), array("q")
        self.runs = bytearray()  # 1 where the piece is a run of text (a place inside it can be read)
        self._chunks: list[str] = []
        self._n = 0
        self._space = True  # the text so far ends in a space (or is empty): a space next is not added
        pos = 0
        for a, b in [*holes, (len(raw), len(raw))]:
            if a > pos:
                self._read(pos, min(a, len(raw)))
            pos = max(pos, b)
        self.text = "".join(self._chunks)
        del self._chunks

    def _read(self, a: int, b: int) -> None:
        raw = self.raw
        lt, gt = ("<", ">") if isinstance(raw, str) else (b"<", b">")
        spaced = _SPACED_STR if isinstance(raw, str) else _SPACED
        comment, pi = ("<!--", "<?") if isinstance(raw, str) else (b"<!--", b"<?")
        comment_end, pi_end = ("-->", "?>") if isinstance(raw, str) else (b"-->", b"?>")
        i, tags_left = a, True  # once no ">" is left, no tag can end: the rest is text and comments
        while i < b:
            at = raw.find(lt, i, b)
            if at < 0:
                self._words(i, b)
                return
            if at > i:
                self._words(i, at)
            if raw.startswith(comment, at, b) or raw.startswith(pi, at, b):
                close = raw.find(comment_end if raw.startswith(comment, at, b) else pi_end, at + 2, b)
                end = b if close < 0 else close + (3 if raw.startswith(comment, at, b) else 2)
                self._piece(at, end, " ", False)  # a comment never told, an unclosed one runs to the end
                i = end
                continue
            close = raw.find(gt, at + 1, b) if tags_left else -1
            if close < 0:  # no ">" after here: the rest is text, but for a comment that runs to the end
                tags_left = False
                nxt = [k for k in (raw.find(comment, at + 1, b), raw.find(pi, at + 1, b)) if k >= 0]
                stop = min(nxt) if nxt else b
                self._words(at, stop)
                i = stop
                continue
            if spaced.match(raw, at, close + 1):
                self._piece(at, close + 1, " ", False)
            i = close + 1

    def _words(self, a: int, b: int) -> None:
        self._piece(a, b, self._said(a, b, self._space), True)

    def _said(self, a: int, b: int, after_space: bool) -> str:
        piece = self.raw[a:b]
        words = _WS.sub(" ", html.unescape(piece.decode("utf-8", "replace") if isinstance(piece, bytes) else piece))
        return words[1:] if after_space and words.startswith(" ") else words

    def _piece(self, a: int, b: int, said: str, run: bool) -> None:
        if said == " " and self._space:
            said = ""
        self.starts.append(a)
        self.ends.append(b)
        self.at.append(self._n)
        self._n += len(said)
        self.to.append(self._n)
        self.runs.append(run)
        if said:
            self._chunks.append(said)
            self._space = said.endswith(" ")

    def place(self, pos: int, closing: bool) -> int:
        """Where markup offset ``pos`` falls in ``text``; inside a tag, before it when ``closing`` a stretch,
        after it when opening one."""
        j = bisect.bisect_right(self.starts, pos) - 1
        if j < 0:
            return 0
        if pos >= self.ends[j] or pos == self.starts[j]:
            return self.to[j] if pos >= self.ends[j] else self.at[j]
        if not self.runs[j]:
            return self.at[j] if closing else self.to[j]
        # A place inside a run of text (a tag whose quoted value holds a ">"): the run read up to it.
        return self.at[j] + len(self._said(self.starts[j], pos, self.at[j] == 0 or self.text[self.at[j] - 1] == " "))

    def span(self, a: int, b: int) -> tuple[int, int]:
        """The stretch of ``text`` that the markup ``[a, b)`` says, without a space at either end."""
        lo, hi = self.place(a, False), self.place(b, True)
        if hi <= lo:
            return lo, lo
        lo += self.text[lo] == " "
        hi -= hi > lo and self.text[hi - 1] == " "
        return lo, hi


class TextAround:
    """A page's or part's markup cut into blocks (``bounds``: where each block starts and ends) with the
    pieces no reader meets beside a picture left out (``holes``: sorted, apart); the text before and
    after a picture is that of its own block, else of the nearest block that holds any."""

    def __init__(self, raw: bytes | str, bounds: list[int], holes: list[tuple[int, int]]) -> None:
        self.raw = raw
        self.bounds = sorted(set(bounds))
        self.holes = holes
        self._read: _Text | None = None
        self._before: list[int] = []  # for each block, the nearest block at or before it with text (-1: none)
        self._after: list[int] = []  # ... at or after it (len(bounds) + 1: none)

    def around(self, start: int, end: int, caption: str = "") -> str:
        """The text before and after the picture whose markup is ``raw[start:end]``, each side cut to
        about ``CONTEXT_MAX`` characters at a word, the picture's place marked; "" when there is none.
        A block that reads as the caption is passed over: the caption is said apart."""
        said = " ".join(caption.split())
        return said_around(self._side(start, said, -1), self._side(end, said, 1))

    def _block(self, j: int) -> tuple[int, int]:
        """Block ``j``: from the bound before it (or the start) to bound ``j`` (or the end)."""
        return (self.bounds[j - 1] if j else 0), (self.bounds[j] if j < len(self.bounds) else len(self.raw))

    def _text(self) -> _Text:
        if self._read is None:
            self._read = read = _Text(self.raw, self.holes)
            n = len(self.bounds)
            holds = [(lambda lo, hi: hi > lo)(*read.span(*self._block(j))) for j in range(n + 1)]
            last = -1
            for j in range(n + 1):
                last = j if holds[j] else last
                self._before.append(last)
            self._after = [n + 1] * (n + 2)
            for j in range(n, -1, -1):
                self._after[j] = j if holds[j] else self._after[j + 1]
        return self._read

    def _said(self, a: int, b: int, caption: str, keep_end: bool) -> str:
        """The words of ``[a, b)``; a long stretch only as much of its end (``keep_end``) or start as
        ``clip_words`` and the comparison with the caption read."""
        read = self._text()
        lo, hi = read.span(a, b)
        room = max(CONTEXT_MAX + 2, len(caption) + 1)
        if hi - lo > room:
            lo, hi = (hi - room, hi) if keep_end else (lo, lo + room)
        return read.text[lo:hi]

    def _side(self, pos: int, caption: str, way: int) -> str:
        self._text()
        k = bisect.bisect_right(self.bounds, pos)
        n = len(self.bounds)
        if way < 0:
            a, b = (self.bounds[k - 1] if k else 0), pos
        else:
            a, b = pos, (self.bounds[k] if k < n else len(self.raw))
        text = self._said(a, b, caption, way < 0)
        if text and text != caption:
            return text
        # Then whole blocks, the nearest first, up to _STEPS - 1 of them, those without text passed at once.
        if way < 0:
            if a <= 0:
                return ""
            lowest = max(k - _STEPS + 1, 0)
            j = self._before[k - 1]
            while j >= lowest and j >= 0:
                text = self._said(*self._block(j), caption, True)
                if text != caption:
                    return text
                j = self._before[j - 1] if j else -1
            return ""
        if b >= len(self.raw):
            return ""
        highest = min(k + _STEPS - 1, n)
        j = self._after[k + 1]
        while j <= highest:
            text = self._said(*self._block(j), caption, False)
            if text != caption:
                return text
            j = self._after[j + 1]
        return ""


def said_around(before: str, after: str) -> str:
    """The text before and after a picture as one line, each side cut at a word, the picture's place
    marked ("... before [picture] after ..."); "" when there is neither."""
    if not before and not after:
        return ""
    return " ".join(t for t in (clip_words(before, True), PICTURE_MARK, clip_words(after, False)) if t)


def plain_text(markup: str) -> str:
    """The words of a piece of markup on one line: tags and comments taken away, character references read."""
    markup = _TAG_STR.sub("", _SPACED_STR.sub(" ", _COMMENT.sub(" ", markup)))
    return " ".join(html.unescape(markup).split())


def clip_words(text: str, keep_end: bool, limit: int = CONTEXT_MAX) -> str:
    """``text`` cut to about ``limit`` characters at a word: its end kept (the text before a picture) or
    its start (the text after), "…" where it was cut."""
    if len(text) <= limit:
        return text
    if keep_end:
        kept = text[-limit:]
        space = kept.find(" ")
        if not text[-limit - 1].isspace() and 0 <= space < len(kept) - 1:
            kept = kept[space + 1:]
        return "… " + kept.lstrip()
    kept = text[:limit]
    space = kept.rfind(" ")
    if not text[limit].isspace() and space > 0:
        kept = kept[:space]
    return kept.rstrip() + " …"
