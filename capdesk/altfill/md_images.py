"""Where a Markdown page's images are, to the character, and how alt text goes into each.

markdown-it (CommonMark, with tables) decides what is an image: code spans, fenced and indented
code, escaped brackets and link text are its business. It only knows which lines a block spans,
so each block's source is searched for ``![`` outside its code spans, each hit is parsed again on
its own, and the hits are kept only when they are exactly the images markdown-it found there, in
the same order: an image that cannot be placed that surely is listed, never guessed at.
``<img>`` tags in a Markdown page (HTML blocks and inline HTML) are found as in an HTML page.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token

from capdesk.altfill.html_images import Found, find_html_images

_IMG_TAG = re.compile(r"<img[\s/>]", re.I)
# Characters that would mean something inside the brackets (| splits a table cell).
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")
_LINES = re.compile(r"\r\n|\r|\n")  # markdown-it's own line breaks
UNPLACED = "CapDesk could not place alt text exactly in this Markdown; write it by hand"

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


def find_markdown_images(text: str) -> list[Found]:
    """Every image in a Markdown page outside code: ``![...](...)``, ``![...][ref]`` and ``<img>``."""
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
    for (a, b), toks in blocks.items():
        children = [c for t in toks for c in t.children or []]
        found += _in_block(md, env, text, a, b, children, lambda at: _where(starts, at))
    return sorted(found, key=lambda f: f.start)


def _where(starts: list[int], at: int) -> tuple[int, int]:
    line = bisect.bisect_right(starts, at)
    return line, at - starts[line - 1] + 1


def _in_block(md: MarkdownIt, env: dict, text: str, a: int, b: int, children: list[Token],
              where: Callable[[int], tuple[int, int]]) -> list[Found]:
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
    hits: list[tuple[int, Token]] = []
    skip_to = -1
    for m in re.finditer(r"!\[", block):
        p = m.start()
        if p < skip_to or _inside(p, code) or _inside(p, raw_html) or _escaped(block, p):
            continue
        parsed = _first_image(md, env, block, p)
        if parsed:
            hits.append((p, parsed))
            skip_to = p + 2 + len(parsed.content)  # images in an image's alt text are text
    if [(t.attrs.get("src"), t.content) for _, t in hits] != [(t.attrs.get("src"), t.content) for t in images]:
        line, col = where(a)
        return out + [Found(a, line, col, "", "markdown", str(t.attrs.get("src") or ""), alt_of(t) or None,
                            problem=UNPLACED) for t in images]
    for p, tok in hits:
        out.append(_found(md, env, block, a, p, tok, where))
    return out


def _first_image(md: MarkdownIt, env: dict, block: str, p: int) -> Token | None:
    """The image starting at ``p``, if one does. Its own line is tried first (a gallery paragraph of a
    thousand images would otherwise be parsed a thousand times whole); a miss there, such as a title
    running on to the next line, is tried again on the rest of the block. The check against
    markdown-it's own reading of the block (in ``_in_block``) is what makes a hit count."""
    eol = block.find("\n", p)
    for window in ((block[p:eol],) if eol >= 0 else ()) + (block[p:],):
        parsed = md.parseInline(window, env)[0].children or []
        if parsed and parsed[0].type == "image":
            return parsed[0]
    return None


def _found(md: MarkdownIt, env: dict, block: str, a: int, p: int, tok: Token,
           where: Callable[[int], tuple[int, int]]) -> Found:
    label_end = p + 2 + len(tok.content)  # the "]" closing the alt text
    end = _image_end(md, env, block, p, label_end, tok)
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


def _image_end(md: MarkdownIt, env: dict, block: str, p: int, label_end: int, tok: Token) -> int:
    """Where the image that starts at ``p`` ends: the shortest source that parses as this image alone."""
    close = {"(": ")", "[": "]"}.get(block[label_end + 1:label_end + 2], "")
    q = label_end + 1
    while close and (q := block.find(close, q + 1)) >= 0:
        parsed = md.parseInline(block[p:q + 1], env)[0].children or []
        if len(parsed) == 1 and parsed[0].type == "image" and parsed[0].attrs == tok.attrs:
            return q + 1
    return label_end + 1  # a collapsed reference such as ![][] ends at its label


def code_spans(s: str) -> list[tuple[int, int]]:
    """CommonMark code spans in a block's source: a run of n backticks up to the next run of exactly n."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
            continue
        if s[i] != "`":
            i += 1
            continue
        j = i
        while j < n and s[j] == "`":
            j += 1
        k = j
        while (k := s.find("`", k)) >= 0:
            e = k
            while e < n and s[e] == "`":
                e += 1
            if e - k == j - i:
                spans.append((i, e))
                break
            k = e
        i = e if k >= 0 else j
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
    return any(a <= p < b for a, b in spans)


def _escaped(s: str, p: int) -> bool:
    """Is the character at ``p`` escaped by an odd run of backslashes before it?"""
    k = p
    while k > 0 and s[k - 1] == "\\":
        k -= 1
    return (p - k) % 2 == 1
