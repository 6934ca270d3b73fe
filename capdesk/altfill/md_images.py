"""Where a Markdown page's images are, to the character, and how alt text goes into each.

markdown-it (CommonMark, with tables) decides what is an image: code spans, fenced and indented
code, escaped brackets and link text are its business. It only knows which lines a block spans,
so each block's source is searched for ``![`` outside its code spans, each hit is parsed again on
its own, and the hits are kept only when they are exactly the images markdown-it found there, in
the same order: an image that cannot be placed that surely is listed, never guessed at.
``<img>`` tags in a Markdown page (HTML blocks and inline HTML) are found as in an HTML page.

The work is linear in the page: each hit is parsed on the text up to the next ``![`` first (a line
of thousands of images is not parsed again from each of them), wider only when that is not enough
(an image in another image's alt text), and a block that would still cost more than a few
readings of itself is listed as not placed rather than searched for minutes. A caller's
``cancelled`` is asked while searching, so that a window's Cancel is heard on a huge page.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token

from capdesk.altfill.html_images import Found, ScanCancelled, find_html_images

_IMG_TAG = re.compile(r"<img[\s/>]", re.I)
# Characters that would mean something inside the brackets (| splits a table cell).
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")
_LINES = re.compile(r"\r\n|\r|\n")  # markdown-it's own line breaks
UNPLACED = "CapDesk could not place alt text exactly in this Markdown; write it by hand"
TOO_COSTLY = "CapDesk could not place alt text in this Markdown block quickly enough; write it by hand"
# How many characters a block's search may hand markdown-it, in readings of the block (plus a little):
# one reading places every image of an ordinary block, the rest is room for images in alt text.
WORK_PER_BLOCK, WORK_SLACK = 6, 4096
CHECK_EVERY = 64  # hits between two questions to ``cancelled``

_parser: MarkdownIt | None = None


def parser() -> MarkdownIt:
    global _parser
    if _parser is None:
        _parser = MarkdownIt("commonmark").enable("table")
        # Every address is an image here (markdown-it drops file: and data: ones as unsafe to link);
        # whether it is a local file is decided later, and nothing is ever fetched or rendered.
        _parser.validateLink = lambda url: True
    return _parser


def escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def alt_of(image: Token) -> str:
    """The alt text a renderer gives an image token (its label as plain text)."""
    md = parser()
    return md.renderer.renderInlineAsText(image.children or [], md.options, {})


def find_markdown_images(text: str, cancelled: Callable[[], bool] | None = None) -> list[Found]:
    """Every image in a Markdown page outside code: ``![...](...)``, ``![...][ref]`` and ``<img>``.
    ScanCancelled when ``cancelled()`` turns true during the search."""
    md = parser()
    env: dict = {}
    starts = [0] + [m.end() for m in _LINES.finditer(text)]
    found: list[Found] = []
    blocks: dict[tuple[int, int], list[Token]] = {}
    for tok in md.parse(text, env):
        if not tok.map:
            continue
        a = starts[tok.map[0]]
        b = starts[tok.map[1]] if tok.map[1] < len(starts) else len(text)
        if tok.type == "html_block":
            found += find_html_images(text[a:b], a, tok.map[0] + 1)
        elif tok.type == "inline":
            # The cells of a table row share the row's lines: search the row once, for all of them.
            blocks.setdefault((a, b), []).append(tok)
    ask = cancelled or (lambda: False)
    for (a, b), toks in blocks.items():
        if ask():
            raise ScanCancelled
        children = [c for t in toks for c in t.children or []]
        found += _in_block(md, env, text, a, b, children, lambda at: _where(starts, at), ask)
    return sorted(found, key=lambda f: f.start)


def _where(starts: list[int], at: int) -> tuple[int, int]:
    line = bisect.bisect_right(starts, at)
    return line, at - starts[line - 1] + 1


class _Budget:
    """Characters handed to markdown-it for one block; past the limit the block is not placed."""

    def __init__(self, block: str) -> None:
        self.left = WORK_PER_BLOCK * len(block) + WORK_SLACK

    def parse(self, md: MarkdownIt, env: dict, source: str) -> list[Token]:
        self.left -= len(source)
        if self.left < 0:
            raise _OverBudget
        return md.parseInline(source, env)[0].children or []


class _OverBudget(Exception):
    pass


def _in_block(md: MarkdownIt, env: dict, text: str, a: int, b: int, children: list[Token],
              where: Callable[[int], tuple[int, int]], cancelled: Callable[[], bool] = lambda: False
              ) -> list[Found]:
    block = text[a:b]
    code = code_spans(block)
    raw_html = _html_spans(block, children, code)  # an inline comment's "![](x)" is no image
    out: list[Found] = []
    tags = [c.content for c in children if c.type == "html_inline" and _IMG_TAG.match(c.content)]
    if tags:
        for f in find_html_images(block, a, where(a)[0]):
            p = f.start - a
            if f.source in tags and not _inside(p, code) and not _escaped(block, p):
                tags.remove(f.source)
                out.append(f)
    images = [c for c in children if c.type == "image"]
    if not images:
        return out
    starts = [m.start() for m in re.finditer(r"!\[", block)
              if not _inside(m.start(), code) and not _inside(m.start(), raw_html) and not _escaped(block, m.start())]
    hits: list[tuple[int, Token, int]] = []
    skip_to = -1
    budget = _Budget(block)
    try:
        for n, p in enumerate(starts):
            if n % CHECK_EVERY == CHECK_EVERY - 1 and cancelled():
                raise ScanCancelled
            if p < skip_to:
                continue
            nxt = next((q for q in starts[n + 1:n + 2] if q > p), len(block))
            parsed = _first_image(budget, md, env, block, p, nxt)
            if parsed:
                end = _image_end(budget, md, env, block, p, p + 2 + len(parsed.content), parsed)
                hits.append((p, parsed, end))
                skip_to = p + 2 + len(parsed.content)  # images in an image's alt text are text
    except _OverBudget:
        return out + _unplaced(a, images, where, TOO_COSTLY)
    if [(t.attrs.get("src"), t.content) for _, t, _ in hits] != [(t.attrs.get("src"), t.content) for t in images]:
        return out + _unplaced(a, images, where, UNPLACED)
    for p, tok, end in hits:
        out.append(_found(md, env, block, a, p, tok, end, where))
    return out


def _unplaced(a: int, images: list[Token], where: Callable[[int], tuple[int, int]], why: str) -> list[Found]:
    line, col = where(a)
    return [Found(a, line, col, "", "markdown", str(t.attrs.get("src") or ""), alt_of(t) or None, problem=why)
            for t in images]


def _first_image(budget: _Budget, md: MarkdownIt, env: dict, block: str, p: int, nxt: int) -> Token | None:
    """The image starting at ``p``, if one does. Tried on the text up to the next ``![`` (``nxt``)
    first, then up to the end of the line, then on the rest of the block: a gallery line of a
    thousand images is read about once, not a thousand times from each image on; an image in an
    image's alt text, or a title running on to the next line, needs the wider reading. The check
    against markdown-it's own reading of the block (in ``_in_block``) is what makes a hit count."""
    eol = block.find("\n", p)
    eol = len(block) if eol < 0 else eol
    tried = 0
    for end in dict.fromkeys((min(nxt, eol), eol, len(block))):
        if end <= tried:
            continue
        tried = end
        parsed = budget.parse(md, env, block[p:end])
        if parsed and parsed[0].type == "image":
            return parsed[0]
    return None


def _found(md: MarkdownIt, env: dict, block: str, a: int, p: int, tok: Token, end: int,
           where: Callable[[int], tuple[int, int]]) -> Found:
    line, col = where(a + p)
    src = str(tok.attrs.get("src") or "")
    f = Found(a + p, line, col, block[p:end], "markdown", src, alt_of(tok) if tok.content else None)
    if tok.content:
        return f
    source = f.source

    def fill(alt: str) -> str:
        piece = escape(alt)
        # Read the result back as markdown-it does: the same picture, with exactly this alt text.
        again = md.parseInline(source[:2] + piece + source[2:], env)[0].children or []
        if not again or again[0].type != "image" or again[0].attrs.get("src") != src or alt_of(again[0]) != alt:
            raise ValueError("the alt text would not read back the same in Markdown")
        return piece

    f.at, f.fill = a + p + 2, fill
    return f


def _image_end(budget: _Budget, md: MarkdownIt, env: dict, block: str, p: int, label_end: int, tok: Token) -> int:
    """Where the image that starts at ``p`` ends: the shortest source that parses as this image alone."""
    close = {"(": ")", "[": "]"}.get(block[label_end + 1:label_end + 2], "")
    q = label_end + 1
    while close and (q := block.find(close, q + 1)) >= 0:
        parsed = budget.parse(md, env, block[p:q + 1])
        if len(parsed) == 1 and parsed[0].type == "image" and parsed[0].attrs == tok.attrs:
            return q + 1
    return label_end + 1  # a collapsed reference such as ![][] ends at its label


def code_spans(s: str) -> list[tuple[int, int]]:
    """CommonMark code spans in a block's source: a run of n backticks up to the next run of exactly n.

    Linear: the runs are listed once, and each length's runs are taken in order, so no opener
    without a closer searches the rest of the block again."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", s)]
    by_length: dict[int, list[int]] = {}
    for k, (r0, r1) in enumerate(runs):
        by_length.setdefault(r1 - r0, []).append(k)
    taken = dict.fromkeys(by_length, 0)  # per length: how many of its runs lie behind the scan
    spans: list[tuple[int, int]] = []
    i, k = 0, 0  # k: the first run not behind i
    escape_or_tick = re.compile(r"[\\`]")
    while (m := escape_or_tick.search(s, i)) is not None:
        i = m.start()
        if s[i] == "\\":
            i += 2
            continue
        while k < len(runs) and runs[k][1] <= i:
            k += 1
        j = runs[k][1]  # the opener: from i (after an escaped backtick, part of a run) to the run's end
        same = by_length.get(j - i, [])
        t = taken.get(j - i, 0)
        while t < len(same) and same[t] <= k:
            t += 1
        if j - i in taken:
            taken[j - i] = t
        if t < len(same):
            spans.append((i, runs[same[t]][1]))
            i = runs[same[t]][1]
        else:
            i = j
    return spans


def _html_spans(block: str, children: list[Token], code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where the block's inline HTML (comments, tags) lies: each piece found in order, outside code spans."""
    spans: list[tuple[int, int]] = []
    at = 0
    for c in children:
        if c.type != "html_inline" or not c.content:
            continue
        k = block.find(c.content, at)
        while k >= 0 and _inside(k, code):
            k = block.find(c.content, k + 1)
        if k < 0:
            continue  # not found as written: the image count check below still guards the block
        spans.append((k, k + len(c.content)))
        at = k + len(c.content)
    return spans


def _inside(p: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``p`` lies in one of ``spans`` (sorted, not overlapping): a lookup, not a scan."""
    i = bisect.bisect_right(spans, (p, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= p < spans[i][1]


def _escaped(s: str, p: int) -> bool:
    """Is the character at ``p`` escaped by an odd run of backslashes before it?"""
    k = p
    while k > 0 and s[k - 1] == "\\":
        k -= 1
    return (p - k) % 2 == 1
