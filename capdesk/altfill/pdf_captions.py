"""The caption of a tagged PDF's Figure, and the text around it, read from its structure tree and the text
drawn in its marked content (by MCID).

A Figure's caption is a ``Caption`` element (or one named as a caption paragraph style, as LibreOffice
names its ``Caption`` and ``Illustration`` paragraphs) inside the Figure, right after it (or after the
paragraph it is alone in), or right before it when that caption is not the one of the figure before; or
the caption paragraph the Figure is alone in (LibreOffice's captioned frame). Its text is the element's
``/ActualText`` or ``/Alt``, else the text drawn in its marked content, read by MCID; a marked-content piece
whose text cannot be told apart from another's is left out, and a caption left with no text is none.
Every walk here goes through the document's ``Structure`` (each node once, one budget for all).
"""

from __future__ import annotations

from capdesk.altfill.context import said_around
from capdesk.altfill.pdf_structure import PdfRefused, Structure

# Caption paragraph styles that LibreOffice names its structure elements after (role-mapped to /P), as
# the OpenDocument caption styles of ``context``; a standard /Caption counts whatever its name.
_CAPTION_NAMES = {"caption", "illustration", "drawing"}
_LIFTED = {"/P", "/Div"}  # a Figure alone in one of these is captioned beside it
CAPTION_CHARS = 2000  # more than any caption: a longer "caption" is a mistagged page


def join_text(pieces: list[str]) -> str:
    """Text drawn in pieces (a caption's label, its number and its words are often marked apart), joined as
    read: a space between two pieces unless one already has it or the next starts with punctuation."""
    out = ""
    for p in pieces:
        if out and p and not out[-1].isspace() and not p[0].isspace() and p[0] not in ".,;:!?)]}»”’":
            out += " "
        out += p
    return " ".join(out.split())


class Captions:
    """The caption of each Figure of one PDF, its pages' text read by MCID once each."""

    def __init__(self, reader, structure: Structure, pages: dict[int, int]) -> None:
        self.reader, self.st, self.pages = reader, structure, pages
        self.texts: dict[int, dict[int, str]] = {}
        self._at: dict[int, dict[int, int]] = {}  # each parent's kids: where each one is among them
        self._said: dict[tuple[int, int, int], str] = {}
        self._holding: dict[int, int] = {}  # each parent's kids that are or hold a Figure

    def is_caption(self, el) -> bool:
        kind = str(el.get("/S"))
        return self.st.kind(el) == "/Caption" or kind.lstrip("/").lower() in _CAPTION_NAMES

    def _has_figure(self, el) -> bool:
        return self.st.figures_below(el) > 0

    def of(self, fig, parent, pg) -> str:
        """The caption of the Figure ``fig`` (a kid of ``parent``), "" when it has none or its text cannot be
        had; never an error but a tree too large to walk (a caption is a help, the figure is filled without
        one)."""
        try:
            found = self._find(fig, parent)
            return self._text(*found, pg) if found is not None else ""
        except PdfRefused:
            raise
        except Exception:  # noqa: BLE001 (a structure or content a reader cannot follow: no caption)
            return ""

    def _position(self, up, unit) -> tuple[list, int | None]:
        """``up``'s kids, and where ``unit`` is among them (its first place)."""
        kids = self.st.kids(up) if up is not None else []
        if id(up) not in self._at:
            at: dict[int, int] = {}
            for i, k in enumerate(kids):
                at.setdefault(id(k), i)
            self._at[id(up)] = at
        return kids, self._at[id(up)].get(id(unit))

    def _find(self, fig, parent) -> tuple[object, object | None] | None:
        """(the caption element, the Figure to leave out of its text when the caption holds it)."""
        own = next((k for k in self.st.kids(fig) if self.is_caption(k)), None)
        if own is not None:
            return own, None
        figures = self.st.figures_below(parent) if parent is not None and "/S" in parent else 0
        if figures == 1 and self.is_caption(parent):  # the caption paragraph the picture is drawn in
            return parent, fig
        unit, up = fig, parent
        if figures == 1 and self.st.kind(parent) in _LIFTED:
            unit, up = parent, self._parent_of(parent)
        kids, at = self._position(up, unit)
        if at is None:
            return None
        if at + 1 < len(kids) and self.is_caption(kids[at + 1]):
            return kids[at + 1], None
        # A caption above the figure, unless it is the caption below the figure before it.
        if at >= 1 and self.is_caption(kids[at - 1]) and not (at >= 2 and self._has_figure(kids[at - 2])):
            return kids[at - 1], None
        return None

    def around(self, fig, parent, pg) -> str:
        """The text of the nearest element before and after the Figure among its neighbours (captions and
        other figures passed over), "" when it cannot be had. Evidence for the person reviewing: it changes
        no alt text (the caption alone is context the wording takes)."""
        try:
            unit, up = fig, parent
            if parent is not None and "/S" in parent and (self.is_caption(parent) or self.st.kind(
                    parent) in _LIFTED) and not self._other_figures(parent, fig):
                unit, up = parent, self._parent_of(parent)
            kids, at = self._position(up, unit)
            if at is None:
                return ""
            return said_around(self._nearest(reversed(kids[max(0, at - 6):at]), pg),
                               self._nearest(kids[at + 1:at + 7], pg))
        except PdfRefused:
            raise
        except Exception:  # noqa: BLE001 (a structure or content a reader cannot follow: no text around)
            return ""

    def _other_figures(self, parent, fig) -> bool:
        """Whether a kid of ``parent`` other than ``fig`` is or holds a Figure (counted once per parent)."""
        if id(parent) not in self._holding:
            self._holding[id(parent)] = sum(1 for k in self.st.kids(parent) if self._has_figure(k))
        return self._holding[id(parent)] - (self._position(parent, fig)[1] is not None) > 0

    def _nearest(self, kids, pg) -> str:
        for k in kids:
            if not self.is_caption(k) and not self._has_figure(k):
                text = self._text(k, None, pg)
                if text:
                    return text
        return ""

    def _parent_of(self, el):
        p = el.get("/P")
        return p.get_object() if p is not None else None

    def _text(self, cap, leave_out, pg) -> str:
        key = (id(cap), id(leave_out), id(pg))  # a paragraph between two figures is read for both
        if key not in self._said:
            self._said[key] = self._read_text(cap, leave_out, pg)
        return self._said[key]

    def _read_text(self, cap, leave_out, pg) -> str:
        for key in ("/ActualText", "/Alt"):
            said = " ".join(str(cap.get(key) or "").split())
            if said:
                return said[:CAPTION_CHARS]
        skip = {id(e) for e in self.st.below(leave_out)} if leave_out is not None else set()
        pieces: list[str] = []
        own_page = cap.get("/Pg", pg)  # what the elements below it that name no page are on
        for el in self.st.below(cap):
            if id(el) in skip:
                continue
            page = el.get("/Pg", own_page)
            n = self.pages.get(page.idnum) if page is not None and hasattr(page, "idnum") else None
            if n is not None:
                by_mcid = self._page_text(n)
                pieces += [by_mcid[m] for m in mcids(el, page) if m in by_mcid]
        return join_text(pieces)[:CAPTION_CHARS]

    def _page_text(self, n: int) -> dict[int, str]:
        if n not in self.texts:
            self.texts[n] = text_by_mcid(self.reader.pages[n])
        return self.texts[n]


def text_by_mcid(page) -> dict[int, str]:
    """The text drawn in each marked-content sequence of a page, by MCID, as pypdf reads the page's text.
    pypdf hands text on in runs; a run that holds the text of more than one MCID cannot be shared out, so
    those MCIDs are left out. A page with forms that carry MCIDs of their own (which may repeat the
    page's) is not read: {}."""
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject", {}).get_object() if resources is not None else {}
    for x in xobjects.values():
        x = x.get_object()
        if x.get("/Subtype") == "/Form" and b"/MCID" in x.get_data():
            return {}
    marks: list[int | None] = []
    pending: set[int | None] = set()
    pieces: dict[int, list[str]] = {}
    mixed: set[int | None] = set()

    def before(op: bytes, operands, _cm, _tm) -> None:
        if follow_marks(op, operands, resources, marks):
            return
        if op in (b"Tj", b"TJ", b"'", b'"'):
            pending.add(next((m for m in reversed(marks) if m is not None), None))

    def text(t: str, *_rest) -> None:
        if not t:
            return
        if len(pending) == 1:
            mcid = next(iter(pending))
            if mcid is not None:
                pieces.setdefault(mcid, []).append(t)
        else:
            mixed.update(pending)
        pending.clear()

    page.extract_text(visitor_operand_before=before, visitor_text=text)
    return {m: join_text(p) for m, p in pieces.items() if m not in mixed}


def mcids(el, pg) -> list[int]:
    """The MCIDs an element's ``/K`` names on the page ``pg``."""
    from pypdf.generic import ArrayObject, DictionaryObject

    k = el.get("/K")
    kids = k.get_object() if k is not None else []
    kids = list(kids) if isinstance(kids, ArrayObject) else [kids]
    out = []
    for kid in kids:
        obj = kid.get_object() if hasattr(kid, "get_object") else kid
        if isinstance(obj, int):
            out.append(int(obj))
        elif isinstance(obj, DictionaryObject) and obj.get("/Type") == "/MCR" and "/MCID" in obj:
            same = obj.get("/Pg") is None or getattr(obj.get("/Pg"), "idnum", None) == getattr(pg, "idnum", None)
            if same:
                out.append(int(obj["/MCID"]))
    return out


def _mcid_of(operands, resources) -> int | None:
    props = operands[1] if len(operands) > 1 else None
    if props is not None and not hasattr(props, "get"):
        named = resources.get("/Properties", {}).get_object() if resources is not None else {}
        props = named.get(str(props)) if hasattr(named, "get") else None
    props = props.get_object() if props is not None else None
    mcid = props.get("/MCID") if hasattr(props, "get") else None
    return None if mcid is None else int(mcid)


def follow_marks(op: bytes, operands, resources, marks: list[int | None]) -> bool:
    """Keep ``marks`` (the open marked-content sequences' MCIDs, None for one without) up to date with a
    content stream's operator; whether the operator was one of them."""
    if op == b"BDC":
        marks.append(_mcid_of(operands, resources))
    elif op == b"BMC":
        marks.append(None)
    elif op == b"EMC":
        if marks:
            marks.pop()
    else:
        return False
    return True
