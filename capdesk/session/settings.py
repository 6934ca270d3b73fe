"""User settings, kept as JSON in the platform's config folder (no Qt here: the CLI reads them too).

Nothing in the settings file can stop the app from starting. A file that cannot be read at
all (not JSON, nested too deep, too large, not an object, not a regular file) is reported, set aside
as ``settings.json.corrupt`` (so nothing the user had is lost) and replaced by defaults. It is opened
without waiting (a FIFO there would hold the service and the window up before they start, deaf to
SIGTERM) and judged on the descriptor: only a regular file is read, and at most
``limits.SETTINGS_MAX_BYTES`` of it. A file
that reads but holds a bad value (a beam of 5000, a sidecar format ``exe``, a naming of
``../../x``) keeps its good values: each bad one is reported and replaced by its default,
checked against the ranges in ``capdesk.limits``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from capdesk import limits
from capdesk.safe_files import RefusedFile, open_regular
from capdesk.sidecars import formats
from capdesk.sidecars.writer import SidecarOptions, atomic_write


@dataclass
class Settings:
    model: str = ""  # "" = automatic: route each picture to the model it fits
    provider: str = "auto"
    beam: int | None = None  # None: each model's own tuned beam (its manifest's decoding.beam)
    sidecar_formats: list[str] = field(default_factory=lambda: list(formats.defaults()))
    txt_name: str = "stem"
    xmp_name: str = "ext"
    lang: str = "en"
    speech: str = "auto"  # auto: announce to a screen reader if one runs, else speak; speak; announce; off
    voice: str = ""
    rate: int = 175
    volume: float = 1.0
    watch_folders: list[str] = field(default_factory=list)
    watch_write_sidecars: bool = True
    ext_descr: bool = False  # also write the longer description to XMP sidecars (IPTC ExtDescrAccessibility)
    clipboard: bool = False
    confidence_threshold: float = limits.DEFAULT_CONFIDENCE_THRESHOLD
    tags: str = "auto"
    ocr: str = "auto"  # text reading, as --ocr: auto (read where a quick look finds text), always, never
    last_folder: str = ""
    # The key that runs `capdesk screen --focus --speak` from anywhere, in GNOME's notation ("<Super>d");
    # "" = none. The Settings dialog also binds it in GNOME; a desktop without GNOME's settings reads it here.
    screen_shortcut: str = ""
    # The main window's size when it was last closed, [width, height] in Qt's logical pixels; [] = the
    # default. It is fitted into the screen it opens on, so a size kept from a larger monitor never
    # pushes controls off a smaller one.
    window_size: list[int] = field(default_factory=list)

    @staticmethod
    def path() -> Path:
        override = os.environ.get("CAPDESK_SETTINGS")
        if override:
            return Path(override)
        import platformdirs

        return Path(platformdirs.user_config_dir("capdesk", appauthor=False)) / "settings.json"

    @classmethod
    def load(cls, path: Path | None = None) -> tuple[Settings, str | None]:
        """(settings, problem): problem is a one-line message when a value or the file was replaced."""
        p = path or cls.path()
        try:
            if not p.exists():
                return cls(), None
            data = _read_json(p)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            reason = ("nested too deeply" if isinstance(exc, RecursionError) else
                      exc.strerror if isinstance(exc, RefusedFile) else str(exc).splitlines()[0])
            return cls(), f"{p}: settings could not be read ({reason}); using defaults " \
                          f"(old file kept as {_set_aside(p)})"
        kw, bad = validate(data)
        if not bad:
            return cls(**kw), None
        return cls(**kw), f"{p}: {'; '.join(bad)}; {'that value was' if len(bad) == 1 else 'those values were'} " \
                          "replaced by the default"

    def sidecar_options(self, **overrides: Any) -> SidecarOptions:
        """The sidecar writer's options these settings give (``overrides``: a dialog's own choices)."""
        kw: dict[str, Any] = dict(formats=tuple(self.sidecar_formats) or (formats.FALLBACK,), txt_name=self.txt_name,
                                  xmp_name=self.xmp_name, lang=self.lang, ext_descr=self.ext_descr)
        return SidecarOptions(**{**kw, **overrides})

    def save(self, path: Path | None = None) -> None:
        p = path or self.path()
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, json.dumps(asdict(self), indent=2).encode("utf-8"))


def _read_json(p: Path) -> dict:
    fd, _ = open_regular(p, follow=True)  # the user's own config: a link there (dotfiles) is theirs
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(limits.SETTINGS_MAX_BYTES + 1)
    if len(raw) > limits.SETTINGS_MAX_BYTES:
        raise ValueError(f"larger than {limits.SETTINGS_MAX_BYTES // 1024} KiB")
    # json's C scanner recurses once per nesting level: 200,000 '[' raise RecursionError, caught above.
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _set_aside(p: Path) -> str:
    backup = p.with_name(p.name + ".corrupt")
    try:
        os.replace(p, backup)
    except OSError:
        return p.name
    return backup.name


# -- one check per field: each returns the cleaned value or raises ValueError(reason) ---------------
def _text(max_len: int) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str):
            raise ValueError("has the wrong type (text expected)")
        if len(v) > max_len or "\0" in v:
            raise ValueError("is too long or holds a NUL character")
        return v
    return check


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return v
    return check


def _int_range(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"has the wrong type (a whole number from {lo} to {hi} expected)")
        if not lo <= v <= hi:
            raise ValueError(f"is out of range (must be from {lo} to {hi})")
        return v
    return check


def _float_range(lo: float, hi: float) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"has the wrong type (a number from {lo:g} to {hi:g} expected)")
        if not math.isfinite(v) or not lo <= v <= hi:
            raise ValueError(f"is out of range (must be a number from {lo:g} to {hi:g})")
        return float(v)
    return check


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``check``, or None (null in the file: "not chosen", e.g. the model's own beam)."""
    return lambda v: None if v is None else check(v)


def _flag(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("has the wrong type (true or false expected)")
    return v


def _provider(v: Any) -> str:
    if isinstance(v, str) and (v.lower() in limits.PROVIDER_CHOICES
                               or re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,40}ExecutionProvider", v)):
        return v
    raise ValueError(f"must be one of {', '.join(limits.PROVIDER_CHOICES)} or an ONNX Runtime provider name")


def _formats(v: Any) -> list[str]:
    known = formats.names()
    if not isinstance(v, list) or not v or not all(isinstance(f, str) for f in v):
        raise ValueError(f"must be a list of {' and/or '.join(known)}")
    bad = [f for f in v if f not in known]
    if bad:
        raise ValueError(f"holds an unknown format {bad[0][:40]!r} (choose {', '.join(known)})")
    return list(dict.fromkeys(v))


def _lang(v: Any) -> str:
    if isinstance(v, str) and re.fullmatch(limits.LANG_PATTERN, v):
        return v
    raise ValueError("must be a language tag such as en or pt-BR")


def _shortcut(v: Any) -> str:
    from capdesk.screen.shortcut import ShortcutError, normalize

    if not isinstance(v, str):
        raise ValueError("has the wrong type (a key such as <Super>d expected)")
    try:
        return normalize(v)
    except ShortcutError as exc:
        raise ValueError(f"is not a key that can be bound: {exc}") from None


def _window_size(v: Any) -> list[int]:
    if v == []:
        return []
    if (isinstance(v, list) and len(v) == 2 and all(type(n) is int for n in v)
            and all(limits.WINDOW_SIDE_MIN <= n <= limits.WINDOW_SIDE_MAX for n in v)):
        return list(v)
    raise ValueError(f"must be [width, height], each from {limits.WINDOW_SIDE_MIN} to {limits.WINDOW_SIDE_MAX}")


def _folders(v: Any) -> list[str]:
    if not isinstance(v, list) or len(v) > limits.WATCH_FOLDERS_MAX:
        raise ValueError(f"must be a list of at most {limits.WATCH_FOLDERS_MAX} folders")
    text = _text(4096)
    return [text(f) for f in v]


CHECKS: dict[str, Callable[[Any], Any]] = {
    "model": _text(4096),
    "provider": _provider,
    "beam": _optional(_int_range(limits.BEAM_MIN, limits.BEAM_MAX)),
    "sidecar_formats": _formats,
    "txt_name": _choice(formats.NAMINGS),
    "xmp_name": _choice(formats.NAMINGS),
    "lang": _lang,
    "speech": _choice(limits.SPEECH_MODES),
    "voice": _text(256),
    "rate": _int_range(limits.SPEECH_RATE_MIN, limits.SPEECH_RATE_MAX),
    "volume": _float_range(limits.VOLUME_MIN, limits.VOLUME_MAX),
    "watch_folders": _folders,
    "watch_write_sidecars": _flag,
    "ext_descr": _flag,
    "clipboard": _flag,
    "confidence_threshold": _float_range(limits.CONFIDENCE_MIN, limits.CONFIDENCE_MAX),
    "tags": _choice(limits.TAGS_MODES),
    "ocr": _choice(limits.OCR_MODES),
    "last_folder": _text(4096),
    "screen_shortcut": _shortcut,
    "window_size": _window_size,
}


def validate(data: dict) -> tuple[dict[str, Any], list[str]]:
    """(the good values, one message per bad value); unknown keys are ignored (older or newer versions)."""
    good: dict[str, Any] = {}
    bad: list[str] = []
    for key, check in CHECKS.items():
        if key not in data:
            continue
        try:
            good[key] = check(data[key])
        except ValueError as exc:
            bad.append(f"{key!r} {exc}")
    return good, bad
