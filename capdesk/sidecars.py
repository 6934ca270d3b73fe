"""Alt-text sidecars: ``photo.txt`` and XMP with the IPTC accessibility fields.

Rules that protect what users have:
* every write is atomic (a temp file in the same folder, then ``os.replace``);
* a sidecar is overwritten only if CapDesk wrote it and nobody edited it since
  (the ledger remembers the sha256 of what was written), or with ``overwrite=True``;
* an existing XMP sidecar is updated in place: every other property it holds is kept;
* images are never modified, except by ``embed_in_image`` when the user asks, and then the
  original bytes are kept beside it (``photo.jpg_original``, exiftool's convention).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from capdesk import __version__
from capdesk.ledger import Ledger

NS = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "Iptc4xmpCore": "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/",
    "capdesk": "https://capdesk.app/ns/1.0/",
    "xml": "http://www.w3.org/XML/1998/namespace",
}
SIDECAR_SUFFIXES = (".txt", ".xmp")


class SidecarError(Exception):
    """A sidecar that could not be written; ``str()`` names the file and the reason."""


@dataclass
class SidecarOptions:
    formats: tuple[str, ...] = ("txt", "xmp")
    txt_name: str = "stem"  # photo.txt | "ext": photo.jpg.txt
    xmp_name: str = "ext"  # photo.jpg.xmp (cannot collide) | "stem": photo.xmp
    lang: str = "en"
    ext_descr: bool = False  # also write Iptc4xmpCore:ExtDescrAccessibility
    mirror_dc: bool = False  # also write dc:description
    overwrite: bool = False

    def __post_init__(self) -> None:
        bad = [f for f in self.formats if f not in ("txt", "xmp")]
        if bad:
            raise ValueError(f"unknown sidecar format {bad[0]!r} (choose txt, xmp)")
        for name in (self.txt_name, self.xmp_name):
            if name not in ("ext", "stem"):
                raise ValueError(f"unknown sidecar naming {name!r} (choose ext, stem)")


@dataclass
class AltText:
    text: str  # what goes into alt text
    source: str = "machine"  # "machine" or "human"
    model: str = ""
    confidence: float | None = None
    extended: str = ""  # longer description, optional
    extra: dict = field(default_factory=dict)


def sidecar_path(image: Path, fmt: str, naming: str) -> Path:
    image = Path(image)
    return image.with_name(image.name + "." + fmt) if naming == "ext" else image.with_suffix("." + fmt)


def is_sidecar(path: Path) -> bool:
    return Path(path).suffix.lower() in SIDECAR_SUFFIXES


def sha256_text(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            if path.exists():
                shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- XMP ---------------------------------------------------------------------------------------
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
        s, e = body.find("<rdf:RDF"), body.rfind("</rdf:RDF>") + len("</rdf:RDF>")
        body = f'<x:xmpmeta xmlns:x="adobe:ns:meta/">{body[s:e]}</x:xmpmeta>'
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


def _set_simple(desc: ET.Element, prefix: str, local: str, value: str) -> None:
    tag = _q(prefix, local)
    el = desc.find(tag)
    if el is not None:
        desc.remove(el)
    desc.set(tag, value)


def render_xmp(existing: str | None, alt: AltText, opts: SidecarOptions) -> str:
    """The XMP text with CapDesk's fields set; ``existing`` keeps all its other properties."""
    source = existing if existing and existing.strip() else _EMPTY_XMP
    _register_namespaces(source)
    root = _parse_xmp(source)
    desc = _description(root)
    _set_lang_alt(desc, "Iptc4xmpCore", "AltTextAccessibility", alt.text, opts.lang)
    if opts.ext_descr and alt.extended:
        _set_lang_alt(desc, "Iptc4xmpCore", "ExtDescrAccessibility", alt.extended, opts.lang)
    if opts.mirror_dc:
        _set_lang_alt(desc, "dc", "description", alt.text, opts.lang)
    # Where the alt text came from: the IPTC fields have no slot for it, so CapDesk's own namespace.
    _set_simple(desc, "capdesk", "AltTextSource", alt.source)
    if alt.model:
        _set_simple(desc, "capdesk", "Model", alt.model)
    if alt.confidence is not None:
        _set_simple(desc, "capdesk", "Confidence", f"{alt.confidence:.3f}")
    _set_simple(desc, "capdesk", "Generator", f"CapDesk {__version__}")
    ET.indent(root, space=" ")
    body = ET.tostring(root, encoding="unicode")
    return f'<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n{body}\n<?xpacket end="w"?>\n'


def read_alt_text(xmp_path: Path) -> str | None:
    """The ``x-default`` alt text of an XMP sidecar, or None."""
    try:
        root = _parse_xmp(Path(xmp_path).read_text(encoding="utf-8"))
    except (OSError, ValueError, ET.ParseError):
        return None
    for desc in root.iter(_q("rdf", "Description")):
        v = _get_lang_alt(desc, "Iptc4xmpCore", "AltTextAccessibility")
        if v is not None:
            return v
    return None


# -- the writer --------------------------------------------------------------------------------
@dataclass
class WriteOutcome:
    path: Path
    action: str  # "written", "unchanged", "kept" (not ours / edited), "failed"
    reason: str = ""


class SidecarWriter:
    def __init__(self, opts: SidecarOptions | None = None, ledger: Ledger | None = None) -> None:
        self.opts = opts or SidecarOptions()
        self.ledger = ledger or Ledger.default()

    def paths(self, image: Path) -> dict[str, Path]:
        o = self.opts
        return {f: sidecar_path(image, f, o.txt_name if f == "txt" else o.xmp_name) for f in o.formats}

    def ownership(self, sidecar: Path) -> str:
        """'absent', 'ours' (written by CapDesk, unchanged since) or 'foreign' (a person's or another tool's)."""
        try:
            data = sidecar.read_bytes()
        except FileNotFoundError:
            return "absent"
        except OSError:
            return "foreign"
        rec = self.ledger.get(sidecar)
        return "ours" if rec is not None and rec["sha256"] == sha256_text(data) else "foreign"

    def is_current(self, image: Path) -> bool:
        """Every chosen sidecar exists and was made for the image as it is now (or a person owns it)."""
        sig = image_signature(image)
        for p in self.paths(image).values():
            own = self.ownership(p)
            if own == "absent":
                return False
            if own == "ours" and self.ledger.get(p)["image"] != sig:
                return False
        return True

    def write(self, image: Path, alt: AltText, force: bool | None = None) -> list[WriteOutcome]:
        overwrite = self.opts.overwrite if force is None else force
        image = Path(image)
        sig = image_signature(image)
        out = []
        for fmt, p in self.paths(image).items():
            try:
                out.append(self._write_one(image, fmt, p, alt, sig, overwrite))
            except (OSError, ValueError, ET.ParseError) as exc:
                out.append(WriteOutcome(p, "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]))
        return out

    def _write_one(self, image: Path, fmt: str, p: Path, alt: AltText, sig: str, overwrite: bool) -> WriteOutcome:
        own = self.ownership(p)
        if fmt == "txt":
            if own == "foreign" and not overwrite:
                return WriteOutcome(p, "kept", "exists and was not written by CapDesk (or was edited); "
                                              "use --overwrite to replace it")
            data = (alt.text.replace("\n", " ").strip() + "\n").encode("utf-8")
        else:
            existing = p.read_text(encoding="utf-8") if own != "absent" else None
            current = read_alt_text(p) if existing is not None else None
            rec = self.ledger.get(p)
            # Other tools may add properties to the file; what matters is whose alt text it holds.
            theirs = current is not None and current.strip() and (rec is None or rec["alt_text"] != current)
            if theirs and not overwrite:
                return WriteOutcome(p, "kept", "holds alt text not written by CapDesk (or edited); "
                                              "use --overwrite to replace it")
            data = render_xmp(existing, alt, self.opts).encode("utf-8")
        if p.exists() and p.read_bytes() == data:
            self.ledger.put(p, sha256_text(data), sig, image, alt)
            return WriteOutcome(p, "unchanged")
        atomic_write(p, data)
        self.ledger.put(p, sha256_text(data), sig, image, alt)
        return WriteOutcome(p, "written")

    def status(self, image: Path) -> str:
        """'none', 'generated', 'edited' (a person's text) for the GUI and reports."""
        states = [self.ownership(p) for p in self.paths(image).values()]
        if all(s == "absent" for s in states):
            return "none"
        for p in self.paths(image).values():
            rec = self.ledger.get(p)
            if rec is not None and rec.get("source") == "human" and self.ownership(p) == "ours":
                return "edited"
        return "edited" if "foreign" in states else "generated"


def image_signature(image: Path) -> str:
    """Size and modification time: cheap, and changes whenever the picture is replaced."""
    try:
        st = Path(image).stat()
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def embed_in_image(image: Path, xmp_sidecar: Path) -> Path:
    """Copy the sidecar's XMP into the image with exiftool, keeping ``<image>_original``.

    Only on the user's request; raises SidecarError when exiftool is missing or fails.
    """
    exe = shutil.which("exiftool")
    if exe is None:
        raise SidecarError(f"{image}: embedding needs exiftool (Debian: libimage-exiftool-perl)")
    backup = Path(str(image) + "_original")
    if backup.exists():
        raise SidecarError(f"{image}: {backup.name} already exists; move it away before embedding again")
    r = subprocess.run([exe, "-q", "-tagsfromfile", str(xmp_sidecar), "-xmp:all", str(image)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SidecarError(f"{image}: exiftool failed ({(r.stderr or r.stdout).strip().splitlines()[0]})")
    return backup
