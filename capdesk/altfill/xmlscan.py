"""The elements of an XML part (a chapter, a slide, a package document) with where each lies in its
bytes, so that alt text is inserted between two bytes and nothing else is written again.

expat reads the part: a part that is not well-formed is refused whole (never guessed at), prefixes
are resolved to namespaces, and entity declarations are refused (an entity that expands a
thousandfold is a bomb; documents have no need of them). Where each start tag ends and where each
of its attributes lies is read from the bytes themselves: XML attribute values are always quoted.
Only UTF-8 parts are changed (every document format here writes them; a part in another encoding
is refused rather than spliced wrongly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

XML_NS = "http://www.w3.org/XML/1998/namespace"
_DECL = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_ATTR = re.compile(r"""([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')""")
# Characters XML 1.0 does not allow, even as references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Elements read at most: every element of a part is kept while the part is read (about 400 bytes each),
# so a part of a million "<a/>" is 400 MB; reading one takes seconds. A long book's chapter or a 500-page
# report's text holds a few hundred thousand; a document's parts together (its headers, slides,
# chapters) well under two million.
MAX_PART_ELEMENTS = 1_000_000
MAX_DOCUMENT_ELEMENTS = 2_000_000


class PartError(Exception):
    """A part that cannot be read or changed safely; ``str()`` is one line."""


class ElementBudget:
    """The elements one document may still have read, all its parts together (``MAX_DOCUMENT_ELEMENTS``)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_DOCUMENT_ELEMENTS if limit is None else limit
        self.left = self.limit


@dataclass
class Element:
    ns: str
    local: str
    prefix: str
    attrs: dict[str, str]  # "ns local" or "local" (no namespace) -> value, entities resolved
    start: int  # byte offset of its "<"
    tag_end: int  # byte offset just past the start tag's ">"
    line: int
    column: int
    self_closing: bool
    parent: int | None  # index of the parent element
    scope: dict[str, str]  # prefix -> namespace in force at this element
    end: int | None = None  # byte offset of its end tag's "<" (None when self-closing)
    children: list[int] = field(default_factory=list)
    text: str = ""  # the text directly inside it (its children's text left out)

    def attr(self, local: str, ns: str = "") -> str | None:
        return self.attrs.get(f"{ns} {local}" if ns else local)


@dataclass
class Part:
    name: str
    raw: bytes
    elements: list[Element]

    def tag(self, el: Element) -> str:
        return self.raw[el.start:el.tag_end].decode("utf-8")

    def attr_span(self, el: Element, name: str) -> tuple[int, int] | None:
        """Byte offsets of the value of the attribute written ``name`` (as in the tag, prefix included)."""
        tag = self.raw[el.start:el.tag_end]
        for m in _ATTR.finditer(tag.decode("utf-8")):
            if m.group(1) == name:
                head = tag.decode("utf-8")[:m.start(2) + 1]
                a = el.start + len(head.encode("utf-8"))
                return a, a + len(m.group(2).encode("utf-8")) - 2
        return None

    def attr_whole_span(self, el: Element, name: str) -> tuple[int, int] | None:
        """Byte offsets of the whole attribute written ``name``, the space before it included: what is
        taken away to remove it."""
        span = self.attr_span(el, name)
        if span is None:
            return None
        tag = self.raw[el.start:span[0]]
        begin = el.start + tag.rindex(name.encode("utf-8"))
        while begin > el.start and self.raw[begin - 1:begin] in (b" ", b"\t", b"\n", b"\r"):
            begin -= 1
        return begin, span[1] + 1

    def attr_insert_at(self, el: Element) -> int:
        """Where a new attribute goes: after the last one (before any space and the closing ``/>``)."""
        tag = self.raw[el.start:el.tag_end]
        k = len(tag) - (2 if self.raw[el.tag_end - 2:el.tag_end] == b"/>" else 1)
        while k > 0 and tag[k - 1:k] in (b" ", b"\t", b"\n", b"\r"):
            k -= 1
        return el.start + k

    def prefix_for(self, el: Element, ns: str) -> str | None:
        """A prefix in force at ``el`` for ``ns`` ("" for the default namespace), or None."""
        for p, uri in el.scope.items():
            if uri == ns:
                return p
        return None

    def end_tag_end(self, el: Element) -> int:
        """Just past the element's end (its end tag's ``>``, or its own ``/>``)."""
        return el.tag_end if el.end is None else self.raw.index(b">", el.end) + 1

    def ancestor(self, i: int, ns: str, locals_: tuple[str, ...]) -> int | None:
        """The nearest element above ``i`` in namespace ``ns`` named one of ``locals_``, or None."""
        j = self.elements[i].parent
        while j is not None:
            if self.elements[j].ns == ns and self.elements[j].local in locals_:
                return j
            j = self.elements[j].parent
        return None

    def released(self, keep_raw: bool) -> Part:
        """The part without its elements (and without its bytes unless ``keep_raw``, for the parts that
        will be changed): what a document keeps of a part once its pictures are found, so that what it
        holds does not grow with the number of its parts."""
        return Part(self.name, self.raw if keep_raw else b"", [])

    def descendants(self, i: int) -> list[int]:
        out, todo = [], list(reversed(self.elements[i].children))
        while todo:
            j = todo.pop()
            out.append(j)
            todo += reversed(self.elements[j].children)
        return out


def escape(text: str) -> str:
    """Text safe inside a quoted attribute value and as element content."""
    text = _NOT_XML.sub("", text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def _check_encoding(name: str, raw: bytes) -> None:
    """PartError for a part in another encoding than UTF-8: CapDesk writes only UTF-8 parts."""
    m = _DECL.match(raw[:200])
    if m and m.group(1).decode("ascii").lower().replace("_", "-") not in ("utf-8", "utf8"):
        raise PartError(f"{name}: written in {m.group(1).decode('ascii')}, which CapDesk does not change")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise PartError(f"{name}: written in UTF-16, which CapDesk does not change")


def parse_part(name: str, raw: bytes, budget: ElementBudget | None = None) -> Part:
    """The part's elements in document order; ``PartError`` when it is not well-formed UTF-8 XML, or
    holds more elements than one part may (``MAX_PART_ELEMENTS``) or than ``budget`` has left."""
    _check_encoding(name, raw)
    p = expat.ParserCreate("utf-8", namespace_separator=" ")
    p.namespace_prefixes = True
    p.buffer_text = True
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    elements: list[Element] = []
    stack: list[int] = []
    pending: dict[str, str] = {}
    scopes: list[dict[str, str]] = [{"xml": XML_NS}]
    most = MAX_PART_ELEMENTS if budget is None else min(MAX_PART_ELEMENTS, budget.left)

    def entity_decl(*args) -> None:
        raise PartError(f"{name}: declares entities, which CapDesk does not read")

    def ns_start(prefix: str | None, uri: str | None) -> None:
        pending[prefix or ""] = uri or ""

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(elements) >= most:
            raise PartError(_too_many(name, budget))
        bits = tag.split(" ")
        ns, local, prefix = (bits + ["", ""])[:3] if len(bits) > 1 else ("", bits[0], "")
        # An element declaring no namespace shares its parent's scope (never changed once made): a copy
        # for every element costs elements x declarations, gigabytes for a root that declares thousands.
        scope = scopes[-1]
        if pending:
            scope = {**scope, **pending}
            pending.clear()
        scopes.append(scope)
        at = p.CurrentByteIndex
        stop = _tag_end(raw, at)
        el = Element(ns, local, prefix, {" ".join(k.split(" ")[:2]): v for k, v in attrs.items()}, at, stop,
                     p.CurrentLineNumber, p.CurrentColumnNumber + 1, raw[stop - 2:stop] == b"/>",
                     stack[-1] if stack else None, scope)
        if stack:
            elements[stack[-1]].children.append(len(elements))
        stack.append(len(elements))
        elements.append(el)

    def end(tag: str) -> None:
        i = stack.pop()
        el = elements[i]
        scopes.pop()
        if i in texts:
            el.text = "".join(texts.pop(i))
        if not el.self_closing:
            el.end = p.CurrentByteIndex

    # Text comes in pieces (one per line, entity or buffer): joined once at the element's end, not grown
    # piece by piece, which copies the text so far each time.
    texts: dict[int, list[str]] = {}

    def chars(data: str) -> None:
        if stack:
            texts.setdefault(stack[-1], []).append(data)

    p.EntityDeclHandler = entity_decl
    p.StartNamespaceDeclHandler = ns_start
    p.StartElementHandler = start
    p.EndElementHandler = end
    p.CharacterDataHandler = chars
    try:
        p.Parse(raw, True)
    except expat.ExpatError as exc:
        raise PartError(f"{name}: not well-formed XML ({expat.ErrorString(exc.code)}, line {exc.lineno})") from None
    except RecursionError:
        raise PartError(f"{name}: nested too deeply") from None
    finally:
        # The handlers refer to the parser and the parser to them: without this, the cycle (and every
        # element of a part that failed) would wait for the next full garbage collection.
        p = None  # noqa: F841
    if budget is not None:
        budget.left -= len(elements)
    return Part(name, raw, elements)


def _too_many(name: str, budget: ElementBudget | None) -> str:
    if budget is not None and budget.left < MAX_PART_ELEMENTS:
        return (f"{name}: its parts hold more than {budget.limit:,} XML elements together, more than CapDesk "
                "reads in one document")
    return f"{name}: more than {MAX_PART_ELEMENTS:,} XML elements in one part, more than CapDesk reads"


def _tag_end(raw: bytes, at: int) -> int:
    """Just past the ``>`` that closes the start tag beginning at ``at`` (quotes respected)."""
    quote = 0
    i = at + 1
    n = len(raw)
    while i < n:
        c = raw[i]
        if quote:
            if c == quote:
                quote = 0
        elif c in (0x22, 0x27):
            quote = c
        elif c == 0x3E:
            return i + 1
        i += 1
    raise PartError("a start tag that never ends")
