"""XMP sidecars: the IPTC accessibility fields (``Iptc4xmpCore:AltTextAccessibility`` and, when
asked, ``Iptc4xmpCore:ExtDescrAccessibility``), set in a new packet or in an existing one whose
every other property is kept.

Parsed with ElementTree, which never fetches external entities or DTDs.

Text from a picture's words, a model's labels or a paste (PDF copies carry control characters) is
cleaned of what XML 1.0 cannot hold before it is written (``clean_text``): ElementTree would write
it raw, and the sidecar would no longer be XML. A sidecar that is not well-formed all the same (an
older version's, another tool's) is read back as damaged (``read_existing``), kept aside
(``set_aside``) and written anew, never a failure on every later run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from capdesk import __version__
from capdesk.describe.alttext import AltText
from capdesk.safe_files import private_or_like
from capdesk.sidecars.formats.base import read_sidecar

NS = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "Iptc4xmpCore": "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/",
    "capdesk": "https://capdesk.app/ns/1.0/",
    "xml": "http://www.w3.org/XML/1998/namespace",
}


# What XML 1.0 cannot hold (C0 controls but tab, line feed and carriage return; lone surrogates,
# which undecodable file names bring; U+FFFE, U+FFFF), and DEL and the C1 controls, which XML allows
# but terminals act on (0x9B opens a control sequence as ESC [ does).
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def clean_text(text: str) -> str:
    """``text`` without the characters an XML document (or a terminal) must not be given."""
    return _NOT_TEXT.sub("", text)


def one_line(text: str) -> str:
    """``clean_text`` on one line: tabs and line breaks become spaces (a report line, a ``.txt``)."""
    return re.sub(r"[\t\r\n]", " ", clean_text(text))


def clean_alt(alt: AltText) -> AltText:
    """``alt`` with every text field it writes cleaned (``clean_text``)."""
    return dataclasses.replace(alt, text=clean_text(alt.text), extended=clean_text(alt.extended),
                               model=clean_text(alt.model), source=clean_text(alt.source))


def read_existing(raw: bytes) -> tuple[str | None, str | None]:
    """(the sidecar's text, None) when it is a readable XMP packet (or blank); (None, why) when it
    is damaged: not UTF-8, or not well-formed XML."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 at byte {exc.start}"
    if not text.strip():
        return text, None
    try:
        _parse_xmp(text)
    except ET.ParseError as exc:
        return None, f"not well-formed XML ({str(exc).splitlines()[0]})"
    except ValueError as exc:
        return None, str(exc)
    return text, None


def set_aside(path: Path, raw: bytes, st: os.stat_result | None = None) -> Path:
    """A copy of ``raw`` (the damaged sidecar's bytes) as ``NAME.damaged-STAMP`` beside it, never over
    another file: what a person may want back is kept. ``st``: the sidecar's ``fstat`` as it was read.
    The copy has the sidecar's mode when the sidecar is the user's own, and a private file's (0600) when
    it is someone else's: the copy is the user's, and must not show their bytes to more people."""
    path = Path(path)
    if st is None:
        with contextlib.suppress(OSError):
            st = os.lstat(path)
    mode = private_or_like(st)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(100):
        aside = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as fh:
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(fh.fileno(), mode)
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(aside)
            raise
        return aside
    raise FileExistsError(f"{path.parent}: cannot find a free name to keep the damaged {path.name}")


def _q(prefix: str, local: str) -> str:
    return f"{{{NS[prefix]}}}{local}"


_EMPTY_XMP = (
    '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
    f'<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="CapDesk {__version__}">\n'
    ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
    '  <rdf:Description rdf:about=""/>\n'
    " </rdf:RDF>\n"
    "</x:xmpmeta>\n"
    '<?xpacket end="w"?>\n'
)


def _register_namespaces(data: str) -> None:
    """Keep the prefixes a file already uses (ElementTree would otherwise write ns0, ns1...)."""
    for prefix, uri in NS.items():
        if prefix != "xml":
            ET.register_namespace(prefix, uri)
    with contextlib.suppress(ET.ParseError):
        for _, (prefix, uri) in ET.iterparse(io.StringIO(data), events=("start-ns",)):
            if prefix and uri not in NS.values():
                with contextlib.suppress(ValueError):
                    ET.register_namespace(prefix, uri)


def _parse_xmp(data: str) -> ET.Element:
    body = data
    # The xpacket processing instructions are not part of the XML tree; strip and re-add them.
    start, end = body.find("<x:xmpmeta"), body.rfind("</x:xmpmeta>")
    if start >= 0 and end >= 0:
        body = body[start:end + len("</x:xmpmeta>")]
    elif "<rdf:RDF" in body:
        s, e = body.find("<rdf:RDF"), body.rfind("</rdf:RDF>")
        if e < s:  # cut short: read as empty, it would be replaced and what it held lost
            raise ValueError("not well-formed XML (the rdf:RDF element is never closed)")
        body = f'<x:xmpmeta xmlns:x="adobe:ns:meta/">{body[s:e + len("</rdf:RDF>")]}</x:xmpmeta>'
    root = ET.fromstring(body)
    if root.tag != _q("x", "xmpmeta"):
        raise ValueError("root element is not x:xmpmeta")
    return root


def _description(root: ET.Element) -> ET.Element:
    rdf = root.find(_q("rdf", "RDF"))
    if rdf is None:
        rdf = ET.SubElement(root, _q("rdf", "RDF"))
    descs = rdf.findall(_q("rdf", "Description"))
    for d in descs:  # prefer the one already holding IPTC Core or CapDesk fields
        if d.find(_q("Iptc4xmpCore", "AltTextAccessibility")) is not None:
            return d
    if descs:
        return descs[0]
    d = ET.SubElement(rdf, _q("rdf", "Description"))
    d.set(_q("rdf", "about"), "")
    return d


def _set_lang_alt(desc: ET.Element, prefix: str, local: str, text: str, lang: str) -> None:
    """Set a Lang Alt property: the ``x-default`` entry and the ``lang`` entry, others kept."""
    tag = _q(prefix, local)
    desc.attrib.pop(tag, None)
    prop = desc.find(tag)
    if prop is None:
        prop = ET.SubElement(desc, tag)
    alt = prop.find(_q("rdf", "Alt"))
    if alt is None:
        for child in list(prop):
            prop.remove(child)
        prop.text = None
        alt = ET.SubElement(prop, _q("rdf", "Alt"))
    wanted = ["x-default"] + ([lang] if lang and lang != "x-default" else [])
    for code in wanted:
        li = next((x for x in alt.findall(_q("rdf", "li")) if x.get(_q("xml", "lang")) == code), None)
        if li is None:
            li = ET.SubElement(alt, _q("rdf", "li"))
            li.set(_q("xml", "lang"), code)
        li.text = text


def _get_lang_alt(desc: ET.Element, prefix: str, local: str) -> str | None:
    tag = _q(prefix, local)
    if tag in desc.attrib:
        return desc.attrib[tag]
    prop = desc.find(tag)
    if prop is None:
        return None
    for li in prop.iter(_q("rdf", "li")):
        if li.get(_q("xml", "lang")) == "x-default":
            return li.text or ""
    li = next(prop.iter(_q("rdf", "li")), None)
    return (li.text or "") if li is not None else (prop.text or "")


def _set_simple(desc: ET.Element, prefix: str, local: str, value: str | None) -> None:
    """Set a simple property as an attribute (``None``: remove it, in either form)."""
    tag = _q(prefix, local)
    el = desc.find(tag)
    if el is not None:
        desc.remove(el)
    if value is None:
        desc.attrib.pop(tag, None)
    else:
        desc.set(tag, value)


def render_xmp(existing: str | None, alt: AltText, *, lang: str = "en", ext_descr: bool = False,
               mirror_dc: bool = False, review: bool | None = None, reason: str | None = None) -> str:
    """The XMP text with CapDesk's fields set; ``existing`` keeps all its other properties.

    ``ext_descr``: also write ``alt.extended`` as the extended description (when there is one).
    ``review``: whether a person should check the alt text (``capdesk:NeedsReview``, an XMP Boolean,
    with ``capdesk:ReviewReason`` saying why); None leaves both out, an earlier write's included."""
    alt = clean_alt(alt)
    source = existing if existing and existing.strip() else _EMPTY_XMP
    _register_namespaces(source)
    root = _parse_xmp(source)
    desc = _description(root)
    _set_lang_alt(desc, "Iptc4xmpCore", "AltTextAccessibility", alt.text, lang)
    if ext_descr and alt.extended:
        _set_lang_alt(desc, "Iptc4xmpCore", "ExtDescrAccessibility", alt.extended, lang)
    if mirror_dc:
        _set_lang_alt(desc, "dc", "description", alt.text, lang)
    # Where the alt text came from: the IPTC fields have no slot for it, so CapDesk's own namespace.
    _set_simple(desc, "capdesk", "AltTextSource", alt.source)
    if alt.model:
        _set_simple(desc, "capdesk", "Model", alt.model)
    if alt.confidence is not None:
        _set_simple(desc, "capdesk", "Confidence", f"{alt.confidence:.3f}")
    _set_simple(desc, "capdesk", "NeedsReview", None if review is None else ("True" if review else "False"))
    _set_simple(desc, "capdesk", "ReviewReason", clean_text(reason) if review and reason else None)
    _set_simple(desc, "capdesk", "Generator", f"CapDesk {__version__}")
    ET.indent(root, space=" ")
    body = ET.tostring(root, encoding="unicode")
    return f'<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n{body}\n<?xpacket end="w"?>\n'


def read_alt_text(xmp_path: Path) -> str | None:
    """The ``x-default`` alt text of an XMP sidecar, or None."""
    return read_iptc(xmp_path, "AltTextAccessibility")


def read_ext_descr(xmp_path: Path) -> str | None:
    """The ``x-default`` extended description of an XMP sidecar, or None."""
    return read_iptc(xmp_path, "ExtDescrAccessibility")


def read_review(xmp_path: Path) -> tuple[bool | None, str | None]:
    """(``capdesk:NeedsReview``, ``capdesk:ReviewReason``) of an XMP sidecar; (None, None) when it has
    no review flag (written by another tool, or by a CapDesk from before the flag)."""
    try:
        root = _parse_xmp(read_sidecar(Path(xmp_path)).decode("utf-8"))
    except (OSError, ValueError, ET.ParseError):
        return None, None
    for desc in root.iter(_q("rdf", "Description")):
        flag = _get_simple(desc, "capdesk", "NeedsReview")
        if flag is not None:
            return flag.strip().lower() == "true", _get_simple(desc, "capdesk", "ReviewReason")
    return None, None


def _get_simple(desc: ET.Element, prefix: str, local: str) -> str | None:
    tag = _q(prefix, local)
    if tag in desc.attrib:
        return desc.attrib[tag]
    el = desc.find(tag)
    return None if el is None else (el.text or "")


def read_iptc(xmp_path: Path, local: str) -> str | None:
    """The ``x-default`` entry of the IPTC Core Lang Alt property ``local``, or None."""
    try:
        root = _parse_xmp(read_sidecar(Path(xmp_path)).decode("utf-8"))
    except (OSError, ValueError, ET.ParseError):
        return None
    for desc in root.iter(_q("rdf", "Description")):
        v = _get_lang_alt(desc, "Iptc4xmpCore", local)
        if v is not None:
            return v
    return None
