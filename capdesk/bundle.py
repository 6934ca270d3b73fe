"""Model bundles: finding them, validating their manifest and checking every file's sha256.

A bundle is a folder (or a ``.zip`` of one) holding ``manifest.json``, ``encoder.onnx``,
``decoder_init.onnx``, ``decoder_step.onnx`` and ``vocab.json``. The manifest records the
sha256 of each file; a file that does not match is refused, so a tampered or truncated
model never runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

FORMAT_VERSION = 1
REQUIRED_FILES = ("encoder.onnx", "decoder_init.onnx", "decoder_step.onnx", "vocab.json")
DEFAULT_MODEL = "everyday"


class BundleError(Exception):
    """A bundle that cannot be used; ``str()`` names the bundle and the reason."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def user_models_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("capdesk", appauthor=False)) / "models"


def shipped_models_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    cands = [here.parent / "models", here / "models", Path(sys.prefix) / "share" / "capdesk" / "models"]
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        cands.insert(0, Path(frozen) / "models")
    return [c for c in dict.fromkeys(cands) if c.is_dir()]


def search_dirs() -> list[tuple[Path, str]]:
    """(folder, source) pairs, searched in this order; earlier ones win on a name clash."""
    out: list[tuple[Path, str]] = []
    for p in os.environ.get("CAPDESK_MODELS", "").split(os.pathsep):
        if p:
            out.append((Path(p), "env"))
    out.append((user_models_dir(), "user"))
    out.extend((p, "shipped") for p in shipped_models_dirs())
    return out


@dataclass
class Bundle:
    path: Path
    manifest: dict
    source: str = "path"
    _zip_root: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", self.path.stem))

    @property
    def encoder(self) -> dict:
        return self.manifest["encoder"]

    def read(self, filename: str) -> bytes:
        if self._zip_root is not None:
            with zipfile.ZipFile(self.path) as zf:
                return zf.read(self._zip_root + filename)
        return (self.path / filename).read_bytes()

    def read_verified(self, filename: str) -> bytes:
        """The file's bytes, refused unless they match the manifest's sha256 and size."""
        entry = self.manifest.get("files", {}).get(filename)
        if entry is None:
            raise BundleError(f"{self.path}: manifest lists no {filename}")
        try:
            data = self.read(filename)
        except (OSError, KeyError):
            raise BundleError(f"{self.path}: {filename} is missing") from None
        if "size" in entry and len(data) != entry["size"]:
            raise BundleError(f"{self.path}: {filename} is {len(data)} bytes, manifest says "
                              f"{entry['size']} (truncated or replaced)")
        if sha256_bytes(data) != entry["sha256"]:
            raise BundleError(f"{self.path}: {filename} does not match its sha256 (modified or corrupt)")
        return data

    def vocab(self) -> list[str]:
        data = json.loads(self.read_verified("vocab.json").decode("utf-8"))
        itos = data["itos"] if isinstance(data, dict) else data
        if len(itos) != self.manifest["vocab"]["size"]:
            raise BundleError(f"{self.path}: vocab.json has {len(itos)} words, manifest says "
                              f"{self.manifest['vocab']['size']}")
        return itos

    def verify(self) -> list[str]:
        """Every problem with this bundle (empty when it is sound)."""
        problems = []
        for fn in self.manifest.get("files", {}):
            try:
                self.read_verified(fn)
            except BundleError as exc:
                problems.append(str(exc))
        if not problems:
            try:
                self.vocab()
            except (BundleError, KeyError, ValueError, TypeError) as exc:
                problems.append(f"{self.path}: vocab.json is not a valid vocabulary ({exc})")
        return problems

    def summary(self) -> dict:
        m = self.manifest
        return {"name": self.name, "path": str(self.path), "source": self.source,
                "description": m.get("description", ""), "domain": m.get("domain", ""),
                "metrics": m.get("metrics", {})}


def _check_manifest(where: Path, m: object) -> dict:
    if not isinstance(m, dict):
        raise BundleError(f"{where}: manifest.json is not a JSON object")
    ver = m.get("format_version")
    if ver != FORMAT_VERSION:
        raise BundleError(f"{where}: manifest format_version {ver!r} is not supported (expected {FORMAT_VERSION})")
    for key in ("name", "encoder", "decoder", "vocab", "files"):
        if key not in m:
            raise BundleError(f"{where}: manifest.json lacks {key!r}")
    for key in ("input_size", "mean", "std", "grid", "feature_dim"):
        if key not in m["encoder"]:
            raise BundleError(f"{where}: manifest encoder section lacks {key!r}")
    missing = [f for f in REQUIRED_FILES if f not in m["files"]]
    if missing:
        raise BundleError(f"{where}: manifest lists no {', '.join(missing)}")
    return m


def open_bundle(path: str | os.PathLike[str], source: str = "path") -> Bundle:
    """Open a bundle folder or zip and validate its manifest (file hashes are checked on read)."""
    p = Path(path)
    if p.is_dir():
        mf = p / "manifest.json"
        if not mf.is_file():
            raise BundleError(f"{p}: not a model bundle (no manifest.json)")
        try:
            m = json.loads(mf.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BundleError(f"{p}: manifest.json is unreadable ({exc})") from None
        return Bundle(p, _check_manifest(p, m), source)
    if p.is_file() and zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as zf:
            names = [n for n in zf.namelist() if n.endswith("manifest.json")]
            if not names:
                raise BundleError(f"{p}: zip holds no manifest.json")
            name = min(names, key=len)
            try:
                m = json.loads(zf.read(name).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BundleError(f"{p}: manifest.json is unreadable ({exc})") from None
        return Bundle(p, _check_manifest(p, m), source, name[: -len("manifest.json")])
    if not p.exists():
        raise BundleError(f"{p}: no such model folder or zip")
    raise BundleError(f"{p}: not a model bundle (expected a folder or .zip)")


def discover() -> tuple[list[Bundle], list[str]]:
    """All installed bundles (first of each name wins) and the problems met on the way."""
    found: dict[str, Bundle] = {}
    problems: list[str] = []
    for folder, source in search_dirs():
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith(".") or not (entry.is_dir() or entry.suffix == ".zip"):
                continue
            try:
                b = open_bundle(entry, source)
            except BundleError as exc:
                problems.append(str(exc))
                continue
            found.setdefault(b.name, b)
    return list(found.values()), problems


def resolve(name_or_path: str | None = None) -> Bundle:
    """A bundle by name (installed) or by folder/zip path; ``None`` picks the default."""
    if name_or_path and (os.sep in name_or_path or "/" in name_or_path or Path(name_or_path).exists()):
        return open_bundle(name_or_path)
    bundles, problems = discover()
    by_name = {b.name: b for b in bundles}
    want = name_or_path or DEFAULT_MODEL
    if want in by_name:
        return by_name[want]
    if name_or_path is None and bundles:
        return bundles[0]
    known = ", ".join(sorted(by_name)) or "none"
    extra = f" ({'; '.join(problems)})" if problems else ""
    raise BundleError(f"model {want!r} not found; installed: {known}{extra}")
