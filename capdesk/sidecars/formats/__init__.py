"""The sidecar formats CapDesk can write, by name: each is one module here and one ``register`` line
below. The writer, the settings, the command line and the dialogs offer what is registered, in the
order it was registered.

May import: the rest of sidecars/ below the writer (``xmp``), describe/ and the shared vocabulary.
"""

from __future__ import annotations

from pathlib import Path

from capdesk.sidecars.formats.base import NAMINGS, SIDECAR_MAX_BYTES, Request, SidecarFormat, read_sidecar
from capdesk.sidecars.formats.text_file import TextSidecar
from capdesk.sidecars.formats.xmp_file import XmpSidecar

__all__ = ["FALLBACK", "NAMINGS", "SIDECAR_MAX_BYTES", "Request", "SidecarFormat", "defaults", "for_file", "get",
           "known", "names", "read_back", "read_sidecar", "register", "unregister"]

_REGISTERED: dict[str, SidecarFormat] = {}


def register(fmt: SidecarFormat) -> SidecarFormat:
    """Offer ``fmt`` from now on (after those registered before it)."""
    if not fmt.name or fmt.name in _REGISTERED:
        raise ValueError(f"a sidecar format needs a name of its own (not {fmt.name!r})")
    if fmt.default_naming not in NAMINGS:
        raise ValueError(f"{fmt.name}: unknown default naming {fmt.default_naming!r} (choose {', '.join(NAMINGS)})")
    _REGISTERED[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def known() -> tuple[SidecarFormat, ...]:
    return tuple(_REGISTERED.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTERED)


def defaults() -> tuple[str, ...]:
    """The formats written when nobody chose (a new settings file, ``--sidecar`` left out)."""
    return tuple(f.name for f in _REGISTERED.values() if f.on_by_default)


def get(name: str) -> SidecarFormat:
    try:
        return _REGISTERED[name]
    except KeyError:
        raise ValueError(f"unknown sidecar format {name!r} (choose {', '.join(_REGISTERED)})") from None


def for_file(path: Path) -> SidecarFormat:
    """The format whose sidecars are named as ``path`` is (the longest extension that fits)."""
    fits = [f for f in _REGISTERED.values() if f.owns_file(path)]
    if not fits:
        raise ValueError(f"{Path(path).name}: not named as any sidecar format's files are")
    return max(fits, key=lambda f: len(f.extension))


def read_back(path: Path) -> str | None:
    """The alt text of the sidecar ``path`` (see ``SidecarFormat.read``)."""
    return for_file(path).read(path)


register(TextSidecar())
register(XmpSidecar())

# Written when every format was unchosen: every program can read plain text.
FALLBACK = "txt"
