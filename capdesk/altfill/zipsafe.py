"""A document's zip (EPUB, DOCX, PPTX, ODT, ODP) read with bounds, and written back with only
some entries changed.

The zip is someone else's file: an entry may say it is small and inflate to gigabytes, several
entries may share the same compressed bytes (an overlapping zip bomb), a name may climb out of the
archive (``../../x``, ``/etc/x``), an entry may be encrypted. All of these are refused before any
entry is read. Reading inflates at most the size an entry declares (a lying header is caught), and
checks its CRC.

Writing copies every entry that does not change as its raw bytes (local header, compressed data,
data descriptor), in the same order, and the central directory records as they were with only
their offsets moved: an EPUB's ``mimetype`` stays first and stored, and every other entry is the
same byte for byte. A changed entry keeps its name, its header fields and its compression method.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from capdesk.altfill.file_checks import MAX_DOCUMENT_BYTES
from capdesk.altfill.xmlscan import ElementBudget

MAX_ENTRIES = 50_000
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # one part or picture, inflated
MAX_TOTAL_BYTES = 1024 * 1024 * 1024  # every entry, inflated
MAX_RATIO = 200  # inflated / compressed, past which a big entry is a bomb (XML rarely passes 20)
RATIO_FROM_BYTES = 1024 * 1024  # small entries may compress a lot (a run of spaces) and cost nothing

_EOCD = struct.Struct("<4s4H2IH")
_CENTRAL = struct.Struct("<4s6H3I5H2I")
_LOCAL = struct.Struct("<4s5H3I2H")
_CD_SIG, _LOCAL_SIG, _EOCD_SIG = b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # a compound file: how Office stores a password-protected document


class ZipRefused(Exception):
    """A zip CapDesk will not open or change; ``str()`` is one line for the user."""


@dataclass
class Entry:
    name: str
    offset: int  # of its local header
    flags: int
    method: int
    crc: int
    csize: int
    usize: int
    cd_at: int  # where its central directory record starts
    cd_len: int
    data_at: int = 0  # where its compressed data starts


def _name_escapes(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return (name.startswith(("/", "\\")) or "\\" in name or "\x00" in name or ".." in parts
            or (len(name) > 1 and name[1] == ":"))


class ZipDoc:
    """The entries of a zip held in memory, checked; ``read`` one, ``rebuild`` with some changed."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.budget = ElementBudget()  # the XML elements its parts may hold, all read together
        if raw.startswith(OLE_MAGIC):
            raise ZipRefused("password-protected (an encrypted Office file is no zip), so it was left as it is")
        if not raw.startswith(_LOCAL_SIG):
            raise ZipRefused("not a zip file, as this kind of document must be")
        if len(raw) > MAX_DOCUMENT_BYTES:
            raise ZipRefused(f"too large ({len(raw):,} bytes)")
        at = raw.rfind(_EOCD_SIG, max(0, len(raw) - 65557))
        if at < 0 or at + _EOCD.size > len(raw):
            raise ZipRefused("a damaged zip (no end of central directory)")
        self.eocd_at = at
        _, disk, cd_disk, n_here, n, cd_size, cd_at, comment = _EOCD.unpack_from(raw, at)
        if at + _EOCD.size + comment != len(raw):
            raise ZipRefused("a damaged zip (data after its end)")
        if 0xFFFF in (n, n_here) or 0xFFFFFFFF in (cd_size, cd_at):
            raise ZipRefused("a Zip64 archive, which a document of this size never needs")
        if disk or cd_disk or n != n_here:
            raise ZipRefused("a zip split over several files")
        if n > MAX_ENTRIES:
            raise ZipRefused(f"a zip of {n:,} entries: refused as a zip bomb")
        if cd_at + cd_size != at:
            raise ZipRefused("a damaged zip (its directory is not where it says)")
        self.cd_at, self.cd_end = cd_at, at
        self.entries: list[Entry] = []
        self._by_name: dict[str, Entry] = {}
        p = cd_at
        for _ in range(n):
            self._central(p)
            p = self.entries[-1].cd_at + self.entries[-1].cd_len
        if p != at:
            raise ZipRefused("a damaged zip (its directory is not where it says)")
        self._check_layout()

    def _central(self, p: int) -> None:
        raw = self.raw
        if p + _CENTRAL.size > self.cd_end or raw[p:p + 4] != _CD_SIG:
            raise ZipRefused("a damaged zip (its directory is broken)")
        fields = _CENTRAL.unpack_from(raw, p)
        flags, method, crc, csize, usize, nlen, elen, clen, offset = fields[3:5] + fields[7:13] + fields[16:]
        name_raw = raw[p + _CENTRAL.size:p + _CENTRAL.size + nlen]
        name = name_raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        if 0xFFFFFFFF in (csize, usize, offset):
            raise ZipRefused("a Zip64 archive, which a document of this size never needs")
        if _name_escapes(name):
            raise ZipRefused(f"an entry's name leads out of the zip ({name[:80]!r}), so it was left as it is")
        if name in self._by_name:
            raise ZipRefused(f"two entries are named {name[:80]!r}")
        if flags & 0x1:
            raise ZipRefused("encrypted (a password-protected zip), so it was left as it is")
        if usize > MAX_ENTRY_BYTES or (usize > RATIO_FROM_BYTES and usize > MAX_RATIO * max(csize, 1)):
            raise ZipRefused(f"a zip bomb: {name[:80]!r} would inflate to {usize:,} bytes from {csize:,}")
        e = Entry(name, offset, flags, method, crc, csize, usize, p, _CENTRAL.size + nlen + elen + clen)
        if e.cd_at + e.cd_len > self.cd_end:
            raise ZipRefused("a damaged zip (its directory is broken)")
        self.entries.append(e)
        self._by_name[name] = e

    def _check_layout(self) -> None:
        """Each entry's bytes lie in a range of their own, before the directory; the sizes add up."""
        if sum(e.usize for e in self.entries) > MAX_TOTAL_BYTES:
            raise ZipRefused("a zip bomb: its entries would inflate past "
                             f"{MAX_TOTAL_BYTES // (1 << 20)} MiB")
        order = sorted(self.entries, key=lambda e: e.offset)
        if order and order[0].offset != 0:
            raise ZipRefused("a zip with data before its first entry")
        for i, e in enumerate(order):
            p = e.offset
            if p + _LOCAL.size > self.cd_at or self.raw[p:p + 4] != _LOCAL_SIG:
                raise ZipRefused(f"a damaged zip ({e.name[:80]!r} is not where the directory says)")
            _, _, _, _, _, _, _, _, _, nlen, elen = _LOCAL.unpack_from(self.raw, p)
            if self.raw[p + _LOCAL.size:p + _LOCAL.size + nlen].decode("utf-8", "replace") != e.name and \
                    self.raw[p + _LOCAL.size:p + _LOCAL.size + nlen].decode("cp437", "replace") != e.name:
                raise ZipRefused(f"a zip whose entry {e.name[:80]!r} has another name in its own header")
            e.data_at = p + _LOCAL.size + nlen + elen
            nxt = order[i + 1].offset if i + 1 < len(order) else self.cd_at
            if e.data_at + e.csize > nxt:  # two entries sharing bytes: the overlapping zip bomb
                raise ZipRefused(f"a zip bomb or a damaged zip ({e.name[:80]!r} overlaps what follows)")

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def has(self, name: str) -> bool:
        return name in self._by_name

    def entry(self, name: str) -> Entry | None:
        return self._by_name.get(name)

    def read(self, name: str) -> bytes:
        """An entry's bytes, inflated no further than it declares and checked against its CRC."""
        e = self._by_name.get(name)
        if e is None:
            raise ZipRefused(f"no entry {name!r} in the zip")
        data = self.raw[e.data_at:e.data_at + e.csize]
        if e.method == 0:
            out = data
        elif e.method == 8:
            d = zlib.decompressobj(-15)
            try:
                out = d.decompress(data, e.usize + 1)
            except zlib.error as exc:
                raise ZipRefused(f"a damaged zip ({name[:80]!r}: {exc})") from None
        else:
            raise ZipRefused(f"{name[:80]!r} is compressed in a way documents do not use (method {e.method})")
        if len(out) != e.usize or zlib.crc32(out) != e.crc:
            raise ZipRefused(f"a damaged zip ({name[:80]!r} is not what its header says)")
        return out

    def _descriptor(self, e, end: int, crc: int, csize: int, usize: int) -> bytes | None:
        """The data descriptor to follow an entry's new data, in the form its old one had (with or
        without its signature); None when it had none, or one of another form (ZIP64)."""
        if not e.flags & 0x8:
            return None
        old = self.raw[e.data_at + e.csize:end]
        signed = old[:4] == b"PK\x07\x08"
        if len(old) != (16 if signed else 12):
            return None
        return (b"PK\x07\x08" if signed else b"") + struct.pack("<3I", crc, csize, usize)

    def rebuild(self, changed: dict[str, bytes]) -> bytes:
        """The zip with the entries named in ``changed`` holding those bytes; every other entry's
        bytes, and the order of all, as they were."""
        order = sorted(self.entries, key=lambda e: e.offset)
        out = bytearray()
        moved: dict[str, tuple[int, int, int, int, int]] = {}  # name -> new offset, flags, crc, csize, usize
        for i, e in enumerate(order):
            end = order[i + 1].offset if i + 1 < len(order) else self.cd_at
            new_at = len(out)
            if e.name not in changed:
                out += self.raw[e.offset:end]
                moved[e.name] = (new_at, e.flags, e.crc, e.csize, e.usize)
                continue
            data = changed[e.name]
            if e.method == 8:
                c = zlib.compressobj(9, zlib.DEFLATED, -15)
                packed = c.compress(data) + c.flush()
            elif e.method == 0:
                packed = data
            else:
                raise ZipRefused(f"{e.name[:80]!r} cannot be written back (method {e.method})")
            crc = zlib.crc32(data)
            head = bytearray(self.raw[e.offset:e.data_at])
            descriptor = self._descriptor(e, end, crc, len(packed), len(data))
            # An entry written with a data descriptor (flag bit 3, as LibreOffice writes content.xml) keeps
            # it, in its own form; one whose descriptor is of a form not known here is written without.
            flags = e.flags if descriptor is not None else e.flags & ~0x8
            struct.pack_into("<H", head, 6, flags)
            if descriptor is None or any(struct.unpack_from("<3I", head, 14)):
                struct.pack_into("<3I", head, 14, crc, len(packed), len(data))
            out += head + packed + (descriptor or b"")
            moved[e.name] = (new_at, flags, crc, len(packed), len(data))
        cd_at = len(out)
        for e in self.entries:
            rec = bytearray(self.raw[e.cd_at:e.cd_at + e.cd_len])
            offset, flags, crc, csize, usize = moved[e.name]
            struct.pack_into("<H", rec, 8, flags)
            struct.pack_into("<3I", rec, 16, crc, csize, usize)
            struct.pack_into("<I", rec, 42, offset)
            out += rec
        tail = bytearray(self.raw[self.eocd_at:])
        struct.pack_into("<2I", tail, 12, len(out) - cd_at, cd_at)
        return bytes(out + tail)
