"""Where a page's ``<img>`` tags are, to the character, and how alt text goes into each.

The standard library's HTML tokenizer finds the tags (comments, ``<script>`` and ``<style>`` are
never parsed as markup, so an ``<img>`` inside them is no image) and gives each one's line and
column and its exact source text. The attributes are then read from that text by the HTML
standard's attribute rules, keeping where each name and value starts and ends, so that alt text
is inserted between two characters of the tag and nothing else in it moves.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

from capdesk.altfill.context import HTML_BLOCKS, HTML_LEFT_OUT, TextAround
from capdesk.altfill.spots import is_file_name

# Inside these an <img> is text shown as code (or the content of a text field or title), not a picture.
TEXT_ONLY = frozenset({"pre", "code", "samp", "kbd", "textarea", "title", "xmp", "listing", "plaintext",
                       "noembed", "noframes", "iframe"})
_WS = " \t\n\r\f"


class ScanCancelled(Exception):
    """The caller's ``cancelled()`` said stop while a page was being searched for images."""


@dataclass
class Attr:
    name: str  # lower-cased
    name_end: int  # offsets inside the tag's text
    value_start: int | None = None  # None: an attribute with no value (``<img alt>``)
    value_end: int | None = None
    quote: str = ""  # '"', "'" or "" (unquoted)


@dataclass
class Found:
    """One image reference in a page: where it is, what it points to, and where alt text would go."""

    start: int  # offset of the reference's first character in the page's text
    line: int  # 1-based
    column: int  # 1-based, in characters
    source: str  # the reference's exact text (the tag, or the Markdown image)
    syntax: str  # "html" | "markdown"
    src: str | None  # where the picture is (character references decoded); None when there is none
    alt: str | None  # None: no alt text at all (no attribute, or empty Markdown brackets)
    decorative: str = ""  # why the author marked it decorative (alt="", role=presentation), else ""
    labelled: str = ""  # the attribute that already names it (aria-label ...), else ""
    at: int = -1  # offset in the page's text where the alt text goes; -1: cannot be filled
    fill: Callable[[str], str] | None = None  # alt text -> the exact characters to insert at ``at``
    problem: str = ""  # why it cannot be filled where it is, in one line
    cut: int = -1  # where the characters replaced end (from ``at``); -1: nothing replaced, only inserted
    placeholder: bool = False  # its alt text is only a file name or pandoc's "fig:": counted as missing
    caption: str = ""  # the text of the figcaption of the <figure> it alone is in
    context: str = ""  # the text before and after it, for the person reviewing (never words for the alt text)
    has_lang: bool = False  # it says its own language (lang, xml:lang): never given another
    quote: str = '"'  # the quote new attributes get (the tag's own)
    in_quotes: str = ""  # the quote the inserted text stands inside (an existing value), else ""
    drops: tuple[tuple[int, int], ...] = ()  # role="presentation", aria-hidden="true": taken away once it has alt text

    @property
    def end(self) -> int:
        return self.at if self.cut < 0 else self.cut

    def edit(self, alt: str, lang: str = "") -> tuple[int, str, int]:
        """(where, what, end of what it replaces) in the page: the alt text put in, and the attributes that
        hid the picture from screen readers (``drops``) taken away; every other character as it was."""
        piece = self.insertion(alt, lang)
        if not self.drops:
            return self.at, piece, self.end
        lo = min(self.at, *(a for a, _ in self.drops))
        hi = max(self.end, *(b for _, b in self.drops))
        out, pos = [], lo
        for a, b, new in sorted([(a, b, "") for a, b in self.drops] + [(self.at, self.end, piece)]):
            out += [self.source[pos - self.start:a - self.start], new]
            pos = b
        out.append(self.source[pos - self.start:hi - self.start])
        return lo, "".join(out), hi

    def insertion(self, alt: str, lang: str = "", xml: bool = False) -> str:
        """The characters to insert for ``alt``; with ``lang``, the tag also says the alt text's language
        (``lang``, and ``xml:lang`` in XHTML), which an <img> may carry: a screen reader then reads the
        English text of a page in another language with English rules."""
        if self.fill is None:
            raise ValueError("this reference cannot be filled")
        piece = self.fill(alt)
        if not lang or self.has_lang or self.syntax != "html":
            return piece
        attrs = [f"lang={{q}}{lang}{{q}}"] + ([f"xml:lang={{q}}{lang}{{q}}"] if xml else [])
        if self.in_quotes:  # alt="<here>": the value's own closing quote ends the last attribute
            q = self.in_quotes
            return piece + q + " " + " ".join(a.format(q=q) for a in attrs)[:-1]
        return piece + "".join(" " + a.format(q=self.quote) for a in attrs)


def line_starts(text: str) -> list[int]:
    """Offsets where each line begins (a line ends at "\\n", as the tokenizer counts them)."""
    return [0] + [m.end() for m in re.finditer("\n", text)]


def parse_attributes(tag: str) -> list[Attr]:
    """A start tag's attributes, read as the HTML standard's tokenizer reads them."""
    m = re.match(r"<[^\s/>]+", tag)
    i, n = (m.end() if m else 1), len(tag)
    out: list[Attr] = []
    while i < n:
        while i < n and (tag[i] in _WS or tag[i] == "/"):
            i += 1
        if i >= n or tag[i] == ">":
            break
        start = i
        i += 1  # the first character may be "=": it is then part of the name
        while i < n and tag[i] not in _WS and tag[i] not in "/>=":
            i += 1
        attr = Attr(tag[start:i].lower(), i)
        j = i
        while j < n and tag[j] in _WS:
            j += 1
        if j < n and tag[j] == "=":
            j += 1
            while j < n and tag[j] in _WS:
                j += 1
            if j < n and tag[j] in "\"'":
                close = tag.find(tag[j], j + 1)
                close = n - 1 if close < 0 else close
                attr.value_start, attr.value_end, attr.quote = j + 1, close, tag[j]
                i = close + 1
            else:
                k = j
                while k < n and tag[k] not in _WS and tag[k] != ">":
                    k += 1
                attr.value_start, attr.value_end = j, k
                i = k
        out.append(attr)
    return out


def first(attrs: list[Attr], name: str) -> Attr | None:
    """The attribute a browser uses: the first of its name (later duplicates are ignored)."""
    return next((a for a in attrs if a.name == name), None)


def value(tag: str, attr: Attr | None) -> str | None:
    if attr is None:
        return None
    if attr.value_start is None:
        return ""
    return html.unescape(tag[attr.value_start:attr.value_end])


def image_from_tag(tag: str, start: int, line: int, column: int) -> Found:
    """A ``Found`` for one ``<img ...>`` tag whose text begins at ``start`` in the page."""
    attrs = parse_attributes(tag)
    src_attr, alt_attr = first(attrs, "src"), first(attrs, "alt")
    found = Found(start, line, column, tag, "html", value(tag, src_attr), value(tag, alt_attr))
    role = (value(tag, first(attrs, "role")) or "").strip().lower()
    if found.alt == "":
        found.decorative = 'alt=""'
    elif role in ("presentation", "none") or (value(tag, first(attrs, "aria-hidden")) or "").strip() == "true":
        found.decorative = f'role="{role}"' if role in ("presentation", "none") else 'aria-hidden="true"'
    found.labelled = next((n for n in ("aria-label", "aria-labelledby")
                           if (value(tag, first(attrs, n)) or "").strip()), "")
    found.has_lang = first(attrs, "lang") is not None or first(attrs, "xml:lang") is not None
    found.drops = tuple((start + a, start + b) for a, b in _hiding(tag, attrs))
    src_name = (found.src or "").split("?")[0].split("#")[0]
    found.placeholder = bool(found.alt) and is_file_name(found.alt or "", src_name or None)
    quoted = [a.quote for a in attrs if a.quote]
    q = found.quote = "'" if quoted and all(c == "'" for c in quoted) else '"'
    escape = _escape
    if alt_attr is not None and found.placeholder and alt_attr.value_start is not None:
        # The file name is replaced: the value between its quotes, or an unquoted value given quotes.
        found.at, found.cut = start + alt_attr.value_start, start + (alt_attr.value_end or alt_attr.value_start)
        found.fill = escape if alt_attr.quote else (lambda t: f"{q}{escape(t)}{q}")
        found.in_quotes = alt_attr.quote
    elif alt_attr is not None and found.alt == "":
        if alt_attr.value_start is None:  # <img alt>: give the name a value
            found.at, found.fill = start + alt_attr.name_end, lambda t: f"={q}{escape(t)}{q}"
        elif alt_attr.quote:
            found.at, found.fill, found.in_quotes = start + alt_attr.value_start, escape, alt_attr.quote
        else:  # alt= with nothing after it
            found.at, found.fill = start + alt_attr.value_start, lambda t: f"{q}{escape(t)}{q}"
    elif alt_attr is None and src_attr is not None:
        # Right after src: the order people write, and the end of a value is never ambiguous (an
        # unquoted value followed by "/>" keeps its "/", as a browser reads it).
        end = src_attr.name_end if src_attr.value_end is None else src_attr.value_end + (1 if src_attr.quote else 0)
        name = "ALT" if tag[1:4] == "IMG" else "alt"
        found.at, found.fill = start + end, lambda t: f" {name}={q}{escape(t)}{q}"
    return found


def _hiding(tag: str, attrs: list[Attr]) -> list[tuple[int, int]]:
    """Where the attributes that hide a picture from screen readers lie in its tag (each with the space
    before it): role="presentation" or "none", aria-hidden="true"."""
    out = []
    for name, values in (("role", ("presentation", "none")), ("aria-hidden", ("true",))):
        a = first(attrs, name)
        if a is None or (value(tag, a) or "").strip().lower() not in values:
            continue
        begin = a.name_end - len(a.name)
        while begin > 0 and tag[begin - 1] in _WS:
            begin -= 1
        end = a.name_end if a.value_end is None else a.value_end + (1 if a.quote else 0)
        out.append((begin, end))
    return out


def _escape(text: str) -> str:
    return html.escape(text, quote=True)  # & < > " ' all escaped: safe inside either quote


_LANG = re.compile(r"""<html\b[^>]*?\s(?:xml:)?lang\s*=\s*["']?\s*([A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*)""", re.I)


def page_language(text: str) -> str:
    """The language tag of a page's ``<html lang>`` (or ``xml:lang``), "" when it says none."""
    m = _LANG.search(text[:65536])
    return m.group(1).replace("_", "-") if m else ""


@dataclass
class _Figure:
    images: list[Found]
    caption: list[str]
    in_caption: int = 0


class _ImageFinder(HTMLParser):
    def __init__(self, text: str, offset: int) -> None:
        super().__init__(convert_charrefs=False)
        # (not self.offset: HTMLParser keeps its column there)
        self._page, self._base = text, offset
        self._starts = line_starts(text)
        self._inside: dict[str, int] = {}
        self._figures: list[_Figure] = []
        self.found: list[Found] = []
        # Where blocks start and end, and the stretches no reader meets beside a picture (scripts, styles,
        # captions): what the text around each picture is read from.
        self.bounds: list[int] = []
        self.holes: list[tuple[int, int]] = []
        self._hole: tuple[str, int, int] | None = None  # (tag, where it began, how deep)

    def _here(self) -> int:
        line, col = self.getpos()
        return self._starts[line - 1] + col

    def _mark(self, tag: str, end: bool) -> None:
        if tag in HTML_BLOCKS:
            self.bounds.append(self._here())
        if self._hole is None:
            if not end and tag in HTML_LEFT_OUT:
                self._hole = (tag, self._here(), 1)
            return
        name, began, depth = self._hole
        if tag == name:
            depth += -1 if end else 1
        elif end and tag == "figure" and name == "figcaption":  # a figcaption left open ends with its figure
            depth = 0
        else:
            return
        self._hole = (name, began, depth)
        if depth <= 0:
            close = self._page.find(">", self._here())
            self.holes.append((began, len(self._page) if close < 0 else close + 1))
            self._hole = None

    def close_holes(self) -> None:
        if self._hole is not None:  # one the page never closes runs to its end
            self.holes.append((self._hole[1], len(self._page)))
            self._hole = None

    def handle_starttag(self, tag: str, attrs) -> None:
        self._mark(tag, False)
        if tag == "img":
            self._img()
        elif tag in TEXT_ONLY:
            self._inside[tag] = self._inside.get(tag, 0) + 1
        elif tag == "figure":
            self._figures.append(_Figure([], []))
        elif tag == "figcaption" and self._figures:
            self._figures[-1].in_caption += 1
        elif tag in ("br", "p", "div", "li") and self._figures and self._figures[-1].in_caption:
            self._figures[-1].caption.append(" ")

    def handle_startendtag(self, tag: str, attrs) -> None:  # <img/>, and <code/> which opens nothing
        if tag in HTML_BLOCKS:
            self.bounds.append(self._here())
        if tag == "img":
            self._img()

    def handle_endtag(self, tag: str) -> None:
        self._mark(tag, True)
        if self._inside.get(tag):
            self._inside[tag] -= 1
        elif tag == "figcaption" and self._figures and self._figures[-1].in_caption:
            self._figures[-1].in_caption -= 1
        elif tag == "figure" and self._figures:
            self._end_figure()

    def _end_figure(self) -> None:
        fig = self._figures.pop()
        # One picture, one caption: a caption under several pictures names the group, not each.
        if len(fig.images) == 1:
            fig.images[0].caption = " ".join("".join(fig.caption).split())

    def handle_data(self, data: str) -> None:
        if self._figures and self._figures[-1].in_caption:
            self._figures[-1].caption.append(data)

    def handle_entityref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&#{name};"))

    def _img(self) -> None:
        if any(self._inside.values()):
            return
        raw = self.get_starttag_text() or ""
        line, col = self.getpos()
        at = self._starts[line - 1] + col
        if self._page[at:at + len(raw)] != raw:  # never edit a place that is not exactly the tag
            return
        found = image_from_tag(raw, self._base + at, line, col + 1)
        self.found.append(found)
        if self._figures and not self._figures[-1].in_caption:
            self._figures[-1].images.append(found)


def find_html_images(text: str, offset: int = 0, first_line: int = 1) -> list[Found]:
    """Every ``<img>`` in ``text`` outside comments, scripts, styles and code; offsets are
    ``offset`` plus the position in ``text``, lines are counted from ``first_line``."""
    finder = _ImageFinder(text, offset)
    finder.feed(text)
    finder.close()
    while finder._figures:  # a <figure> the page never closes ends with it
        finder._end_figure()
    finder.close_holes()
    around = TextAround(text, finder.bounds, finder.holes)
    for f in finder.found:
        at = f.start - offset
        f.context = around.around(at, at + len(f.source), f.caption)
    for f in finder.found:
        f.line += first_line - 1
    return finder.found
