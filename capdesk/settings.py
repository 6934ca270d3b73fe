"""User settings, kept as JSON in the platform's config folder (no Qt here: the CLI reads them too).

A settings file that cannot be read is reported, set aside as ``settings.json.corrupt``
(so nothing the user had is lost) and replaced by defaults; it never stops the app.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from capdesk.sidecars import atomic_write


@dataclass
class Settings:
    model: str = ""  # "" = automatic: route each picture to the model it fits
    provider: str = "auto"
    beam: int = 3
    sidecar_formats: list[str] = field(default_factory=lambda: ["txt", "xmp"])
    txt_name: str = "stem"
    xmp_name: str = "ext"
    lang: str = "en"
    speech: str = "auto"  # auto: announce to a screen reader if one runs, else speak; speak; announce; off
    voice: str = ""
    rate: int = 175
    volume: float = 1.0
    watch_folders: list[str] = field(default_factory=list)
    watch_write_sidecars: bool = True
    clipboard: bool = False
    confidence_threshold: float = 0.35
    tags: str = "auto"
    ocr: str = "auto"
    last_folder: str = ""

    @staticmethod
    def path() -> Path:
        override = os.environ.get("CAPDESK_SETTINGS")
        if override:
            return Path(override)
        import platformdirs

        return Path(platformdirs.user_config_dir("capdesk", appauthor=False)) / "settings.json"

    @classmethod
    def load(cls, path: Path | None = None) -> tuple[Settings, str | None]:
        """(settings, problem): problem is a one-line message when the file had to be replaced."""
        p = path or cls.path()
        if not p.exists():
            return cls(), None
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            known = {f.name: f for f in fields(cls)}
            kw = {}
            for k, v in data.items():
                if k in known:
                    default = getattr(cls(), k)
                    if isinstance(default, bool) != isinstance(v, bool) or (
                        not isinstance(v, type(default)) and not (isinstance(default, float) and isinstance(v, int))
                    ):
                        raise ValueError(f"{k!r} has the wrong type")
                    kw[k] = v
            return cls(**kw), None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            backup = p.with_name(p.name + ".corrupt")
            try:
                os.replace(p, backup)
            except OSError:
                backup = p
            return cls(), f"{p}: settings could not be read ({exc}); using defaults (old file kept as {backup.name})"

    def save(self, path: Path | None = None) -> None:
        p = path or self.path()
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, json.dumps(asdict(self), indent=2).encode("utf-8"))
