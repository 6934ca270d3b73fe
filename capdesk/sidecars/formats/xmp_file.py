"""``photo.jpg.xmp``: the IPTC accessibility fields in an XMP packet, set in an existing packet whose
every other property is kept (``capdesk.sidecars.xmp`` reads and writes the XML)."""

from __future__ import annotations

from pathlib import Path

from capdesk.sidecars.formats.base import Request, SidecarFormat


class XmpSidecar(SidecarFormat):
    name = "xmp"
    extension = "xmp"
    default_naming = "ext"
    naming_notes = {"ext": "cannot collide", "stem": "Lightroom style"}
    label = "&XMP sidecars"
    detail = "IPTC alt text"
    action = "Write XMP sidecars"
    on_by_default = True
    merges = True  # other tools keep their own properties in the same packet

    # The XML code loads once a sidecar is written or read, not when the command line lists the formats.
    def render(self, req: Request, existing: str | None) -> bytes:
        from capdesk.sidecars import xmp

        return xmp.render_xmp(existing, req.alt, lang=req.lang, ext_descr=req.ext_descr, mirror_dc=req.mirror_dc,
                              review=req.review, reason=req.reason).encode()

    def read(self, path: Path) -> str | None:
        from capdesk.sidecars import xmp

        return xmp.read_alt_text(path)

    def check(self, raw: bytes) -> tuple[str | None, str | None]:
        from capdesk.sidecars import xmp

        return xmp.read_existing(raw)
