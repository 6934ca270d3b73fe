"""The incremental update that gives a tagged PDF's Figures their ``/Alt``, and the check that the written
file still holds the same structure tree.

The update is appended after the file's last byte: each changed structure element, then a
cross-reference section of the kind the file already uses and a trailer whose ``/Prev`` points at the
original one, so the original bytes stay a prefix of the result and a signature over them stays intact.
A changed element is written from its own bytes in the file (or in its object stream) with only ``/Alt``
(and, where the text is marked English in a document in another language, ``/Lang``) put in or replaced:
every other value keeps its token text byte for byte (a reader that parses and writes the element again
rounds real numbers and re-encodes strings). An object the update adds (a cross-reference stream) takes a
number above every number the file uses, whatever its trailer's ``/Size`` says.
"""

from __future__ import annotations

import io
import re
import zlib

from capdesk.altfill.pdf_structure import CHANGEABLE, PdfRefused, Structure, comparable, snapshot

MAX_OBJECT_NUMBER = 8_388_607  # the largest object number a PDF reader need accept (ISO 32000-1, C.2)
MAX_NESTING = 64  # arrays and dictionaries inside a structure element's value, followed this deep

_WS = b"\x00\t\n\x0c\r "
_DELIMITERS = b"()<>[]{}/%"
_S = rb"[\x00\t\n\x0c\r ]"
_TOKEN_END = rb"(?![^\x00\t\n\x0c\r ()<>\[\]{}/%])"  # a white space, a delimiter or the end follows
_REF = re.compile(rb"\d+" + _S + rb"+\d+" + _S + rb"+R" + _TOKEN_END)
_HEADER = re.compile(_S + rb"*(\d+)" + _S + rb"+(\d+)" + _S + rb"+obj")
# An object defined or named anywhere in the bytes ("12 0 obj", "12 0 R"), found by the last digit of its
# number: a pattern that starts with a digit is searched for about seven times faster than one that starts
# with a look behind, and a file's bytes are mostly pictures.
_USED = re.compile(rb"[0-9]" + _S + rb"+[0-9]{1,5}" + _S + rb"+(?:obj|R)" + _TOKEN_END)
_DIGITS = b"0123456789"
_STARTXREF = re.compile(rb"startxref\s+(\d+)\s+%%EOF\s*$")


class _Unreadable(ValueError):
    """Bytes that are not the PDF value they should be."""


def _skip(data: bytes, i: int) -> int:
    """Past the white space and comments at ``i``."""
    n = len(data)
    while i < n:
        c = data[i]
        if c in _WS:
            i += 1
        elif c == 0x25:  # % to the end of the line
            while i < n and data[i] not in b"\r\n":
                i += 1
        else:
            break
    return i


def _end(data: bytes, i: int, depth: int = 0) -> int:
    """Where the value that starts at ``i`` ends."""
    if depth > MAX_NESTING or i >= len(data):
        raise _Unreadable("a value nested too deep, or cut short")
    c = data[i]
    if c == 0x28:  # (literal string), balanced parentheses, backslash escapes
        j, level = i, 0
        while j < len(data):
            if data[j] == 0x5C:
                j += 2
                continue
            level += {0x28: 1, 0x29: -1}.get(data[j], 0)
            j += 1
            if level == 0:
                return j
        raise _Unreadable("a string cut short")
    if data.startswith(b"<<", i):
        return _dict_entries(data, i, depth)[1] + 2
    if c == 0x3C:  # <hex string>
        j = data.find(b">", i)
        if j < 0:
            raise _Unreadable("a hex string cut short")
        return j + 1
    if c == 0x5B:
        j = _skip(data, i + 1)
        while not data.startswith(b"]", j):
            j = _skip(data, _end(data, j, depth + 1))
        return j + 1
    m = _REF.match(data, i)
    if m:
        return m.end()
    j = i + 1 if c == 0x2F else i  # a name, a number, true, false, null: up to a delimiter
    while j < len(data) and data[j] not in _WS and data[j] not in _DELIMITERS:
        j += 1
    if j == i:
        raise _Unreadable(f"no value at byte {i}")
    return j


def _name(token: bytes) -> bytes:
    """A name as it reads, its #xx escapes decoded."""
    return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), token)


def _dict_entries(data: bytes, i: int, depth: int = 0) -> tuple[list[tuple[bytes, int, int]], int]:
    """(name, value start, value end) for each entry of the dictionary at ``i``; where its ``>>`` is."""
    entries = []
    j = _skip(data, i + 2)
    while not data.startswith(b">>", j):
        if not data.startswith(b"/", j):
            raise _Unreadable(f"a dictionary key that is no name at byte {j}")
        k = _end(data, j, depth + 1)
        start = _skip(data, k)
        end = _end(data, start, depth + 1)
        entries.append((_name(data[j:k]), start, end))
        j = _skip(data, end)
    return entries, j


def with_values(text: bytes, values: dict[bytes, bytes]) -> bytes:
    """A dictionary's bytes with each of ``values`` (name -> its value's bytes) put in place of the value it
    has, or added before its ``>>``; nothing else in it changes."""
    entries, close = _dict_entries(text, 0)
    out, last = bytearray(), 0
    for name, start, end in entries:
        if name in values:
            out += text[last:start] + values[name]
            last = end
    out += text[last:close]
    had = {name for name, _, _ in entries}
    for name, value in values.items():
        if name not in had:
            out += b" " + name + b" " + value
    return bytes(out + text[close:])


def object_text(reader, raw: bytes, ref) -> bytes:
    """The bytes of the dictionary that the indirect object ``ref`` is, as the file (or the object stream
    holding it) has them: where the file's last cross-reference section says it is."""
    idnum, gen = ref.idnum, ref.generation
    if gen == 0 and idnum in reader.xref_objStm:  # the order pypdf reads them in
        stm = reader.get_object(reader.xref_objStm[idnum][0])
        data, first = stm.get_data(), int(stm["/First"])
        head = data[:first].split()
        if not all(t.isdigit() for t in head):
            raise _Unreadable("its object stream's index is not numbers")
        offsets = {int(n): int(at) for n, at in reversed(list(zip(head[0::2], head[1::2])))}  # the first wins
        if idnum not in offsets:
            raise _Unreadable("it is not in the object stream said to hold it")
        start = _skip(data, first + offsets[idnum])
    else:
        at = reader.xref.get(gen, {}).get(idnum)
        m = _HEADER.match(raw, at) if isinstance(at, int) else None
        if m is None or (int(m.group(1)), int(m.group(2))) != (idnum, gen):
            raise _Unreadable("it is not where the cross-reference section says")
        data, start = raw, _skip(raw, m.end())
    if not data.startswith(b"<<", start):
        raise _Unreadable("it is not a dictionary")
    end = _end(data, start)
    if data.startswith(b"stream", _skip(data, end)):
        raise _Unreadable("it is a stream")
    return data[start:end]


def next_object_number(reader, raw: bytes) -> int:
    """A number no object of the file has or is named by: above the trailer's ``/Size`` less one, every
    number its cross-reference sections list, and every "N G obj" and "N G R" in its bytes and in its object
    streams (a trailer's ``/Size`` may be below the numbers used)."""
    used = [int(reader.trailer.get("/Size", 0)) - 1]
    used += [max(nums) for nums in reader.xref.values() if nums]
    if reader.xref_objStm:
        used.append(max(reader.xref_objStm))
    texts = [raw] + [reader.get_object(n).get_data() for n in {s for s, _ in reader.xref_objStm.values()}]
    for text in texts:
        found = (_number_ending_at(text, m.start()) for m in _USED.finditer(text))
        used += [n for n in found if n <= MAX_OBJECT_NUMBER]
    number = max(used) + 1
    if number > MAX_OBJECT_NUMBER:
        raise PdfRefused("its object numbers are used up, so nothing can be added to it")
    return number


def _number_ending_at(text: bytes, last: int) -> int:
    start = last
    while start > 0 and text[start - 1] in _DIGITS and last - start < 8:
        start -= 1
    return int(text[start:last + 1])


def _serialize(obj) -> bytes:
    out = io.BytesIO()
    obj.write_to_stream(out)
    return out.getvalue()


def incremental_update(doc) -> bytes:
    """The file's bytes followed by one update: each edited Figure with its ``/Alt``, a cross-reference
    section of the file's own kind, and a trailer pointing back at the last one."""
    from pypdf.generic import TextStringObject

    reader, raw = doc.reader, doc.raw
    m = _STARTXREF.search(raw[-1024:])
    if m is None:
        raise PdfRefused("its end (startxref, %%EOF) is not where a PDF keeps it, so no update can follow it")
    prev = int(m.group(1))
    out = bytearray(raw if raw.endswith((b"\n", b"\r")) else raw + b"\n")
    offsets: dict[int, tuple[int, int]] = {}
    for fig, _row in sorted(doc.edits, key=lambda e: e[0].ref.idnum):
        values = {b"/Alt": _serialize(TextStringObject(fig.text))}
        if fig.lang:
            values[b"/Lang"] = _serialize(TextStringObject(fig.lang))
        try:
            text = with_values(object_text(reader, raw, fig.ref), values)
        except _Unreadable as exc:
            raise PdfRefused(f"the structure element of {fig.location} cannot be read as written ({exc})") from exc
        offsets[fig.ref.idnum] = (len(out), fig.ref.generation)
        out += f"{fig.ref.idnum} {fig.ref.generation} obj\n".encode() + text + b"\nendobj\n"
    trailer = reader.trailer
    own = next_object_number(reader, raw)
    keep = b"".join(k.encode() + b" " + _serialize(trailer.raw_get(k)) + b"\n"
                    for k in ("/Root", "/Info", "/ID") if k in trailer)
    if raw[prev:prev + 4] == b"xref":
        out += _xref_table(offsets, len(out), own, keep, prev)
    else:
        out += _xref_stream(offsets, len(out), own, keep, prev)
    return bytes(out)


def _runs(nums: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for n in nums:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def _xref_table(offsets: dict[int, tuple[int, int]], at: int, size: int, keep: bytes, prev: int) -> bytes:
    lines = [b"xref\n"]
    for run in _runs(sorted(offsets)):
        lines.append(f"{run[0]} {len(run)}\n".encode())
        lines += [f"{offsets[n][0]:010d} {offsets[n][1]:05d} n\r\n".encode() for n in run]
    lines.append(b"trailer\n<<\n/Size " + str(size).encode() + b"\n" + keep + b"/Prev " + str(prev).encode()
                 + b"\n>>\nstartxref\n" + str(at).encode() + b"\n%%EOF\n")
    return b"".join(lines)


def _xref_stream(offsets: dict[int, tuple[int, int]], at: int, own: int, keep: bytes, prev: int) -> bytes:
    entries = {**offsets, own: (at, 0)}  # the stream is an object too, listed in itself
    nums = sorted(entries)
    data = b"".join(b"\x01" + entries[n][0].to_bytes(4, "big") + entries[n][1].to_bytes(2, "big") for n in nums)
    index = b" ".join(f"{run[0]} {len(run)}".encode() for run in _runs(nums))
    packed = zlib.compress(data)
    return (f"{own} 0 obj\n<<\n/Type /XRef\n/Size {own + 1}\n".encode() + keep + b"/Index [" + index
            + b"]\n/W [1 4 2]\n/Filter /FlateDecode\n/Prev " + str(prev).encode() + b"\n/Length "
            + str(len(packed)).encode() + b"\n>>\nstream\n" + packed + b"\nendstream\nendobj\nstartxref\n"
            + str(at).encode() + b"\n%%EOF\n")


def changed_beyond_alt(doc, data: bytes, roles: dict[str, str]) -> str:
    """What the written ``data`` changed in the structure tree besides the edited Figures' ``/Alt`` (and the
    ``/Lang`` put with it), "" when nothing: the tree read back from ``data`` against the original's, node by
    node, and each edited Figure's ``/Alt`` read back as written."""
    from pypdf import PdfReader
    from pypdf.generic import TextStringObject

    before, alts = snapshot(doc.reader, Structure(roles))
    after_reader = PdfReader(io.BytesIO(data), strict=False)
    if after_reader.is_encrypted:
        return "it reads back encrypted"
    after, alts_after = snapshot(after_reader, Structure(roles))
    for fig, _row in doc.edits:
        key = (fig.ref.idnum, fig.ref.generation)
        lang = comparable(TextStringObject(fig.lang)) if fig.lang else alts.get(key, (None, None))[1]
        alts[key] = (comparable(TextStringObject(fig.text)), lang)
    if before != after:  # named by the first node that differs, in reading order
        where = next(k for k in [*before, *after] if before.get(k) != after.get(k))
        return f"its structure tree would change beyond /Alt (at {_where(where)})"
    if alts != alts_after:
        where = next(k for k in [*alts, *alts_after] if alts.get(k) != alts_after.get(k))
        return f"the {'/'.join(c.lstrip('/') for c in CHANGEABLE)} of {_where(where)} would not read back as written"
    return ""


def _where(key) -> str:
    while isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], tuple):
        key = key[0]
    if isinstance(key, tuple) and len(key) == 2 and all(isinstance(x, int) for x in key):
        return f"object {key[0]} {key[1]}"
    return str(key)
