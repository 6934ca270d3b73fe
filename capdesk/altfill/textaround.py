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

CONTEXT_MAX = 200  # characters a side: a sentence or two, enough to say what the picture is there for
PICTURE_MARK = "[picture]"  # where the picture stands between the text before and after it
_STEPS = 200  # blocks looked through on a side for one that holds text
_DIRECT = 8  # pictures of one block whose text around is read directly, before the block's words are indexed
# Tags that end a word: the rest (em, span, a, text:span ...) join the text on either side.
_SPACED = re.compile(rb"<(?:/?(?:[\w.-]+:)?(?:br|p|div|li|tab|s|line-break|h\d)\b[^>]*)>")
_SPACED_STR = re.compile(_SPACED.pattern.decode("ascii"))
# A comment or processing instruction (c), a tag that ends a word (s), any other tag: as ``plain_text`` reads them.
_TOKEN = re.compile(rb"(?P<c><!--.*?(?:-->|\Z)|<\?.*?(?:\?>|\Z))|(?P<s>" + _SPACED.pattern + rb")|<[^>]*>", re.S)
_TOKEN_STR = re.compile(_TOKEN.pattern.decode("ascii"), re.S)
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
    """The words of the markup ``raw[begin:end]`` (``holes`` left out) on one line (``text``), and where
    each run of text and each tag read as a space lies in the markup (``starts``/``ends``) and in
    ``text`` (``at``)."""

    def __init__(self, raw: bytes | str, holes: list[tuple[int, int]], begin: int, end: int) -> None:
        self.raw = raw
        # Only the pieces that say something: a tag that says nothing takes no room.
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.at: list[int] = []  # where the piece's words begin in ``text`` (they end where the next's begin)
        self.runs = bytearray()  # 1 where the piece is a run of text (a place inside it can be read)
        self._chunks: list[str] = []
        self._n = 0
        self._space = True  # the text so far ends in a space (or is empty): a space next is not added
        pos = begin
        for a, b in [*holes, (end, end)]:
            if min(a, end) > pos:
                self._read(pos, min(a, end))
            pos = max(pos, b)
        self.text = "".join(self._chunks)
        del self._chunks

    def _read(self, a: int, b: int) -> None:
        raw = self.raw
        if isinstance(raw, str):
            token, gt, opens, closes = _TOKEN_STR, ">", ("<!--", "<?"), ("-->", "?>")
        else:
            token, gt, opens, closes = _TOKEN, b">", (b"<!--", b"<?"), (b"-->", b"?>")
        # Every tag ends by the last ">": past it none is looked for, so a run of "<" that never closes is
        # read once, not once for each "<".
        tags_end = max(raw.rfind(gt, a, b) + 1, a)
        pos = a
        for m in token.finditer(raw, a, tags_end):
            start, end = m.span()
            if start > pos:
                self._words(pos, start)
            if m.lastgroup == "c":
                said = m.group()
                if end == tags_end and not said.endswith(closes[0] if said.startswith(opens[0]) else closes[1]):
                    end = b  # a comment never closed runs to the end
                self._piece(start, end, " ", False)
            elif m.lastgroup == "s":
                self._piece(start, end, " ", False)
            pos = end
        if pos < b:  # no tag left: text, but for a comment that runs to the end
            found = [k for k in (raw.find(opens[0], pos, b), raw.find(opens[1], pos, b)) if k >= 0]
            if found:
                if min(found) > pos:
                    self._words(pos, min(found))
                self._piece(min(found), b, " ", False)
            else:
                self._words(pos, b)

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
        self.runs.append(run)
        if said:
            self._n += len(said)
            self._chunks.append(said)
            self._space = said[-1] == " "

    def _to(self, j: int) -> int:
        return self.at[j + 1] if j + 1 < len(self.at) else len(self.text)

    def place(self, pos: int, closing: bool) -> int:
        """Where markup offset ``pos`` falls in ``text``; inside a tag, before it when ``closing`` a stretch,
        after it when opening one."""
        j = bisect.bisect_right(self.starts, pos) - 1
        if j < 0:
            return 0
        if pos >= self.ends[j] or pos == self.starts[j]:
            return self._to(j) if pos >= self.ends[j] else self.at[j]
        if not self.runs[j]:
            return self.at[j] if closing else self._to(j)
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
    after a picture is that of its own block, else of the nearest block that holds any.

    Each block's words are read once for the whole page (blocks without text are passed once, not
    once for each picture). The part of its own block before and after a picture is read directly
    for the first few pictures of a block; a block that holds more has its words read once, with
    where each came from, and each picture's part is a slice of them: a page costs about one pass
    over it, however many pictures share a block."""

    def __init__(self, raw: bytes | str, bounds: list[int], holes: list[tuple[int, int]]) -> None:
        self.raw = raw
        self.bounds = sorted(set(bounds))
        self.holes = holes
        self._hole_starts = [a for a, _ in holes]
        self._whole: dict[int, str] = {}  # block -> its words
        self._asked: dict[int, int] = {}  # block -> pictures in it read so far
        self._read: dict[int, _Text] = {}  # block -> its words with where each came from
        self._before: dict[int, int] = {}  # block -> the nearest block at or before it with text (-1: none)
        self._after: dict[int, int] = {}  # ... at or after it (len(bounds) + 1: none)

    def around(self, start: int, end: int, caption: str = "") -> str:
        """The text before and after the picture whose markup is ``raw[start:end]``, each side cut to
        about ``CONTEXT_MAX`` characters at a word, the picture's place marked; "" when there is none.
        A block that reads as the caption is passed over: the caption is said apart."""
        said = " ".join(caption.split())
        return said_around(self._side(start, said, -1), self._side(end, said, 1))

    def _block(self, j: int) -> tuple[int, int]:
        """Block ``j``: from the bound before it (or the start) to bound ``j`` (or the end)."""
        return (self.bounds[j - 1] if j else 0), (self.bounds[j] if j < len(self.bounds) else len(self.raw))

    def _holes_in(self, a: int, b: int) -> list[tuple[int, int]]:
        h = max(bisect.bisect_right(self._hole_starts, a) - 1, 0)
        out = []
        while h < len(self.holes) and self.holes[h][0] < b:
            if self.holes[h][1] > a:
                out.append(self.holes[h])
            h += 1
        return out

    def _direct(self, a: int, b: int) -> str:
        """The words of ``[a, b)``, read there and then."""
        pieces: list[str] = []
        at = a
        for hs, he in self._holes_in(a, b):
            if hs > at:
                pieces.append(_as_str(self.raw[at:hs]))
            at = max(at, he)
        if at < b:
            pieces.append(_as_str(self.raw[at:b]))
        return plain_text("".join(pieces))

    def _whole_block(self, j: int) -> str:
        text = self._whole.get(j)
        if text is None:
            text = self._whole[j] = self._direct(*self._block(j))
        return text

    def _said(self, j: int, a: int, b: int, caption: str, keep_end: bool) -> str:
        """The words of ``[a, b)``, a part of block ``j``."""
        self._asked[j] = asked = self._asked.get(j, 0) + 1
        if asked <= _DIRECT:
            return self._direct(a, b)
        read = self._read.get(j)
        if read is None:
            read = self._read[j] = _Text(self.raw, self._holes_in(*self._block(j)), *self._block(j))
        lo, hi = read.span(a, b)
        room = max(CONTEXT_MAX + 2, len(caption) + 1)  # all that clip_words and the caption's test read
        if hi - lo > room:
            lo, hi = (hi - room, hi) if keep_end else (lo, lo + room)
        return read.text[lo:hi]

    def _nearest(self, j: int, way: int) -> int:
        """The nearest block from ``j`` on (``way``: -1 back, 1 on) that holds text; each block that holds
        none is passed once for the whole page, not once for each picture."""
        memo, stop = (self._before, -1) if way < 0 else (self._after, len(self.bounds) + 1)
        passed = []
        while j != stop and j not in memo:
            if self._whole_block(j):
                memo[j] = j
                break
            passed.append(j)
            j += way
        found = stop if j == stop else memo[j]
        for k in passed:
            memo[k] = found
        return found

    def _side(self, pos: int, caption: str, way: int) -> str:
        k = bisect.bisect_right(self.bounds, pos)
        n = len(self.bounds)
        if way < 0:
            a, b = (self.bounds[k - 1] if k else 0), pos
        else:
            a, b = pos, (self.bounds[k] if k < n else len(self.raw))
        text = self._said(k, a, b, caption, way < 0)
        if text and text != caption:
            return text
        # Then whole blocks, the nearest first, up to _STEPS - 1 of them.
        if way < 0:
            if a <= 0:
                return ""
            j, lowest = self._nearest(k - 1, -1), max(k - _STEPS + 1, 0)
            while j >= lowest:
                if self._whole_block(j) != caption:
                    return self._whole_block(j)
                j = self._nearest(j - 1, -1) if j else -1
            return ""
        if b >= len(self.raw):
            return ""
        j, highest = self._nearest(k + 1, 1), min(k + _STEPS - 1, n)
        while j <= highest:
            if self._whole_block(j) != caption:
                return self._whole_block(j)
            j = self._nearest(j + 1, 1)
        return ""


def _as_str(piece: bytes | str) -> str:
    return piece.decode("utf-8", "replace") if isinstance(piece, bytes) else piece


def said_around(before: str, after: str) -> str:
    """The text before and after a picture as one line, each side cut at a word, the picture's place
    marked ("... before [picture] after ..."); "" when there is neither."""
    if not before and not after:
        return ""
    return " ".join(t for t in (clip_words(before, True), PICTURE_MARK, clip_words(after, False)) if t)


def plain_text(markup: str) -> str:
    """The words of a piece of markup on one line: tags and comments taken away, character references read."""
    markup = _COMMENT.sub(" ", markup)
    # No tag ends past the last ">": the rest is text, and its "<" are not each tried against all of it.
    cut = markup.rfind(">") + 1
    markup = _TAG_STR.sub("", _SPACED_STR.sub(" ", markup[:cut])) + markup[cut:]
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
