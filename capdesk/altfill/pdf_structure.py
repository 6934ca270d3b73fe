"""The structure tree of a tagged PDF as alt-fill walks it: its elements in reading order, an element's kids
and the elements below it, and a snapshot of the whole tree to compare a written file with its original.

A structure tree comes from the file's author and may hold itself (a ``/K`` naming an array that lists
itself, an element listing itself beside its kids) or be built to be walked for ever. Every walk keeps a
set of the objects it has been to (by object number and generation), so each is visited once, and every
walk of one document spends one budget of ``MAX_VISITS`` nodes: a tree that needs more is named and the
document left, the rest of the run goes on.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

MAX_ELEMENTS = 200_000  # structure elements walked; a real book has a few thousand
# Nodes (elements, arrays, references) visited by all the walks of one document together: the element
# walk, the caption and context walks and the read-back snapshot. A book of a thousand pictures takes a
# few tens of thousands; a tree built to be walked for ever reaches this and its document is left.
MAX_VISITS = 2_000_000
BELOW_DEPTH = 8  # a caption is a paragraph, not a book: the elements below one are read this deep
SNAPSHOT_DEPTH = 32  # direct values nested deeper than this are compared by their kind only


class PdfRefused(Exception):
    """A PDF that cannot be filled as a whole (encrypted, unreadable, not tagged, signed, too large)."""


def role_map(tree) -> dict[str, str]:
    rm = tree.get("/RoleMap")
    rm = rm.get_object() if rm is not None else {}
    return {str(k): str(v) for k, v in rm.items()} if hasattr(rm, "items") else {}


def standard(kind: str, roles: dict[str, str]) -> str:
    seen = set()
    while kind in roles and kind not in seen and roles[kind] != kind:
        seen.add(kind)
        kind = roles[kind]
    return kind


def _key(raw, obj) -> tuple:
    """What makes a node the same node again: its object number and generation, or, for a direct object
    (which cannot hold itself), the object."""
    idnum = getattr(raw, "idnum", None)
    return (idnum, raw.generation) if idnum is not None else ("direct", id(obj))


class Structure:
    """One PDF's structure tree as the walks see it: each element's kids listed once, every walk on one
    budget of visits (``limit``, ``MAX_VISITS`` unless given)."""

    def __init__(self, roles: dict[str, str], limit: int | None = None) -> None:
        self.roles = roles
        self.limit = MAX_VISITS if limit is None else limit
        self.visits = 0
        self._kids: dict[int, tuple[list[tuple[tuple, object]], list]] = {}  # (key, kid) pairs, and the kids
        self._figures: dict[int, int] = {}

    def visit(self, n: int = 1) -> None:
        self.visits += n
        if self.visits > self.limit:
            raise PdfRefused(f"its structure tree takes more than {self.limit:,} steps to walk (it may hold "
                             "itself): not read")

    def kind(self, el) -> str:
        return standard(str(el.get("/S")), self.roles)

    def is_figure(self, el) -> bool:
        return self.kind(el) == "/Figure"

    def kid_pairs(self, el) -> list[tuple[tuple, object]]:
        """(key, element) for the structure elements among an element's kids, in order; listed once."""
        from pypdf.generic import ArrayObject, DictionaryObject

        if id(el) in self._kids:
            return self._kids[id(el)][0]
        k = el.get("/K") if hasattr(el, "get") else None
        kids = k.get_object() if k is not None else []
        kids = list(kids) if isinstance(kids, ArrayObject) else [k]
        self.visit(len(kids))
        out = []
        for raw in kids:
            obj = raw.get_object() if hasattr(raw, "get_object") else raw
            if isinstance(obj, DictionaryObject) and "/S" in obj:
                out.append((_key(raw, obj), obj))
        self._kids[id(el)] = out, [obj for _, obj in out]
        return out

    def kids(self, el) -> list:
        """The structure elements among an element's kids, in order (one list, for every caller)."""
        self.kid_pairs(el)
        return self._kids[id(el)][1]

    def below(self, el, depth: int = BELOW_DEPTH) -> Iterator[object]:
        """The element and every element below it, to ``depth``, in reading order; each once."""
        seen: set[tuple] = {("direct", id(el))}
        stack: list[tuple[object, int]] = [(el, 0)]
        while stack:
            node, d = stack.pop()
            self.visit()
            yield node
            if d < depth:
                for key, kid in reversed(self.kid_pairs(node)):
                    if key not in seen and ("direct", id(kid)) not in seen:
                        seen.add(key)
                        stack.append((kid, d + 1))

    def figures_below(self, el) -> int:
        """How many Figures ``el`` is or holds (to the depth ``below`` reads); counted once per element."""
        if id(el) not in self._figures:
            self._figures[id(el)] = sum(1 for e in self.below(el) if self.is_figure(e))
        return self._figures[id(el)]


def elements(tree, structure: Structure) -> Iterator[tuple[object, object, object, object]]:
    """(reference, element, its page, its parent) for every structure element, in reading order; each once."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    stack: list[tuple[object, object, object]] = [(tree.get("/K"), None, tree)]
    seen: set[tuple[int, int]] = set()
    count = 0
    while stack:
        kid, pg, parent = stack.pop()
        if kid is None:
            continue
        structure.visit()
        ref = kid if isinstance(kid, IndirectObject) else None
        if ref is not None:  # an array or an element met again: its nodes were walked the first time
            key = (ref.idnum, ref.generation)
            if key in seen:
                continue
            seen.add(key)
        obj = kid.get_object()
        if isinstance(obj, ArrayObject):
            stack.extend((k, pg, parent) for k in reversed(obj))
            continue
        if not isinstance(obj, DictionaryObject) or "/S" not in obj:
            continue  # an MCID, a marked-content or object reference: content, not an element
        count += 1
        if count > MAX_ELEMENTS:
            raise PdfRefused(f"more than {MAX_ELEMENTS:,} structure elements: not read")
        page = obj.get("/Pg", pg)
        yield ref, obj, page, parent
        stack.append((obj.get("/K"), page, obj))


# What an update may change in an element: its alternative text, and the language that text is in.
CHANGEABLE = ("/Alt", "/Lang")


@functools.cache
def _kinds() -> tuple[type, ...]:
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, IndirectObject, StreamObject

    return IndirectObject, DictionaryObject, StreamObject, ArrayObject, FloatObject


def _kind(obj) -> str:
    _, dictionary, stream, array, _ = _kinds()
    return "stream" if isinstance(obj, stream) else "dict" if isinstance(obj, dictionary) else \
        "array" if isinstance(obj, array) else type(obj).__name__


def comparable(v, depth: int = 0) -> object:
    """A PDF value as a comparable Python value: a reference by its number (never followed), a number by
    its exact value, a string by its bytes, a dictionary by its entries in any order."""
    indirect, dictionary, stream, array, real = _kinds()
    if isinstance(v, indirect):
        return ("R", v.idnum, v.generation)
    if depth > SNAPSHOT_DEPTH:
        return (type(v).__name__,)
    if isinstance(v, dictionary):
        return ("stream" if isinstance(v, stream) else "dict", {str(k): comparable(x, depth + 1) for k, x in v.items()})
    if isinstance(v, array):
        return ("array", [comparable(x, depth + 1) for x in v])
    if isinstance(v, real):
        return ("real", float(v))
    if isinstance(v, (bytes, str)) and hasattr(v, "original_bytes"):
        return ("string", bytes(v.original_bytes))
    return (type(v).__name__, str(v))


def snapshot(reader, structure: Structure) -> tuple[dict, dict]:
    """The structure tree as a written file must keep it: (every node's value but its ``/Alt`` and
    ``/Lang``, by where it was met; each element's ``/Alt`` and ``/Lang``, by its object number). The
    catalog, the tree root, every array and element reached through ``/K``, and the kind of each object an
    element names (its page, its attributes) are in it: a node that now resolves to another object differs."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    root = reader.trailer["/Root"].get_object()
    tree = root.get("/StructTreeRoot") if isinstance(root, DictionaryObject) else None
    nodes: dict = {"catalog": comparable(root)}
    alts: dict = {}
    stack: list[tuple[object, object, bool]] = [(tree, "tree", True)] if tree is not None else []
    seen: set[tuple[int, int]] = set()
    while stack:
        raw, where, is_root = stack.pop()
        structure.visit()
        if isinstance(raw, IndirectObject):
            where = (raw.idnum, raw.generation)
            if where in seen:
                continue
            seen.add(where)
        obj = raw.get_object() if hasattr(raw, "get_object") else raw
        if isinstance(obj, ArrayObject):
            nodes[where] = comparable(obj)
            stack.extend((x, (where, i), False) for i, x in reversed(list(enumerate(obj))))
            continue
        if not isinstance(obj, DictionaryObject):
            nodes[where] = comparable(obj)
            continue
        nodes[where] = (_kind(obj), {str(k): comparable(v, 1) for k, v in obj.items() if k not in CHANGEABLE})
        alts[where] = tuple(comparable(obj[k]) if k in obj else None for k in CHANGEABLE)
        for k, v in obj.items():
            if isinstance(v, IndirectObject) and k not in ("/K", "/P"):  # what it names is still what it was
                nodes[(where, str(k))] = _kind(v.get_object())
        if (is_root or "/S" in obj) and "/K" in obj:  # the tree root and each element: their kids are the tree
            stack.append((obj.get("/K"), (where, "/K"), False))  # get: the reference as it is, not resolved
    return nodes, alts
