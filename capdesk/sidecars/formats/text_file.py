"""``photo.txt``: the alt text alone, on one line, UTF-8; the file is the alt text, replaced whole."""

from __future__ import annotations

from pathlib import Path

from capdesk.sidecars.formats.base import Request, SidecarFormat, read_sidecar


class TextSidecar(SidecarFormat):
    name = "txt"
    extension = "txt"
    default_naming = "stem"  # what other tools look for beside photo.jpg
    label = "&Text sidecars"
    detail = ".txt"
    action = "Write text sidecars"
    on_by_default = True

    def render(self, req: Request, existing: str | None) -> bytes:
        from capdesk.sidecars.xmp import one_line  # (the XML code loads once something is written)

        return (one_line(req.alt.text).strip() + "\n").encode("utf-8")

    def read(self, path: Path) -> str | None:
        return read_sidecar(Path(path)).decode("utf-8")
