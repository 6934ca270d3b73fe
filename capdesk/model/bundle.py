"""Model bundles: finding them, validating their manifest and checking every file's sha256.

A bundle is a folder (or a ``.zip`` of one) holding ``manifest.json``, ``encoder.onnx``,
``decoder_init.onnx``, ``decoder_step.onnx`` and ``vocab.json``. The manifest is checked
against its schema (``capdesk.model.manifest``) before anything in it is used, and records the
sha256 and size of each file; a file is read as a stream that stops at the size the manifest
gives, so neither a tampered file nor a zip bomb is ever unpacked whole. A bundle that
cannot be used is reported once by discovery and never stops the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from capdesk.model import manifest as schema
from capdesk.model.graphcheck import GraphError
from capdesk.model.manifest import FORMAT_VERSION, REQUIRED_FILES  # noqa: F401  (part of this module's API)

DEFAULT_MODEL = "everyday"
# Folders beside the caption models that hold another kind of model with a manifest of its own
# (the object detector, capdesk.describe.detector): never caption bundles, never reported as broken ones.
OTHER_MODEL_FOLDERS = frozenset({"detector"})
CHUNK = 1 << 20
# What a damaged or hostile zip can raise from the standard library while being listed or read.
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError,
              RuntimeError, ValueError, KeyError, OSError)


class BundleError(Exception):
    """A bundle that cannot be used; ``str()`` names the bundle and the reason."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def user_models_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("capdesk", appauthor=False)) / "models"


def shipped_models_dirs() -> list[Path]:
    package = Path(__file__).resolve().parents[1]  # capdesk/, this file being capdesk/model/bundle.py
    cands = [package.parent / "models", package / "models", Path(sys.prefix) / "share" / "capdesk" / "models"]
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


def stream_limited(fh: IO[bytes], limit: int, keep: bool) -> tuple[int, str, bytes | None, bool]:
    """(bytes seen, their sha256, the bytes if ``keep``, whether there were more than ``limit``).

    Reads at most ``limit + 1`` bytes whatever a header claims: the count is of real bytes.
    """
    if keep:  # one read into one buffer, hashed at once: chunks gathered and joined cost twice the copying
        data = fh.read(limit + 1)
        if len(data) > limit:
            return len(data), "", None, True
        return len(data), hashlib.sha256(data).hexdigest(), data, False
    h = hashlib.sha256()
    n = 0
    while True:
        chunk = fh.read(min(CHUNK, limit + 1 - n))
        if not chunk:
            break
        n += len(chunk)
        if n > limit:
            return n, "", None, True
        h.update(chunk)
    return n, h.hexdigest(), None, False


@dataclass
class Bundle:
    path: Path
    manifest: dict
    source: str = "path"
    _zip_root: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def encoder(self) -> dict:
        return self.manifest["encoder"]

    @property
    def features_key(self) -> str:
        """Equal for two bundles whose encoders compute the same features: the digest of the encoder
        graph, less a "trunk" output it may also give (the manifest's ``features_sha256``)."""
        return str(self.encoder.get("features_sha256") or self.manifest["files"]["encoder.onnx"]["sha256"])

    @contextmanager
    def _open(self, filename: str) -> Iterator[IO[bytes]]:
        if self._zip_root is not None:
            with zipfile.ZipFile(self.path) as zf:
                info = zf.getinfo(self._zip_root + filename)
                if info.is_dir() or not _zip_regular(info):
                    raise BundleError(f"{self.path}: {filename} in the zip is not a regular file")
                with zf.open(info) as fh:
                    yield fh
            return
        p = self.path / filename
        # A FIFO or device named encoder.onnx would block or never end; only regular files are read.
        if not stat.S_ISREG(os.stat(p).st_mode):
            raise BundleError(f"{self.path}: {filename} is not a regular file")
        with open(p, "rb") as fh:
            yield fh

    def _checked(self, filename: str, keep: bool) -> bytes | None:
        entry = self.manifest["files"].get(filename)
        if entry is None:
            raise BundleError(f"{self.path}: manifest lists no {filename}")
        size = entry["size"]
        try:
            with self._open(filename) as fh:
                n, digest, data, over = stream_limited(fh, size, keep)
        except BundleError:
            raise
        except (FileNotFoundError, KeyError):
            raise BundleError(f"{self.path}: {filename} is missing") from None
        except ZIP_ERRORS as exc:
            raise BundleError(f"{self.path}: {filename} cannot be read ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else 'damaged'})") from None
        if over:
            raise BundleError(f"{self.path}: {filename} is over {size} bytes, manifest says {size} "
                              "(replaced, or a decompression bomb)")
        if n != size:
            raise BundleError(f"{self.path}: {filename} is {n} bytes, manifest says {size} (truncated or replaced)")
        if digest != entry["sha256"]:
            raise BundleError(f"{self.path}: {filename} does not match its sha256 (modified or corrupt)")
        return data

    def read_verified(self, filename: str) -> bytes:
        """The file's bytes, refused unless they match the manifest's sha256 and size; an ONNX graph
        (``*.onnx``) is also refused when any of its tensors is stored outside it (``graphcheck``)."""
        data = self._checked(filename, keep=True)
        assert data is not None
        if is_graph(filename):
            from capdesk.model.graphcache import check_once

            try:
                check_once(data, self.manifest["files"][filename]["sha256"])
            except GraphError as exc:
                raise BundleError(f"{self.path}: {filename} {exc}") from None
        return data

    def read_graph(self, filename: str) -> bytes | memoryview:
        """A graph's bytes as ``read_verified`` gives them, or, when this very file was read and found
        sound before (``graphcache.vouched``: same device, inode, size, modification and change time;
        any write or replacement changes one of them), mapped from the disk without reading or hashing
        it again: a cold picture read and hashed 50 MB of graphs that ONNX Runtime then loads from the
        cache of optimised graphs, not from these bytes. ``verify`` always reads and hashes."""
        from capdesk.model import graphcache

        digest = self.manifest["files"].get(filename, {}).get("sha256", "")
        path = None if self._zip_root is not None else self.path / filename
        if path is not None and digest:
            mapped = graphcache.vouched(path, digest, self.manifest["files"][filename]["size"])
            if mapped is not None:
                return mapped
        data = self.read_verified(filename)
        if path is not None and digest:
            graphcache.vouch(path, digest)
        return data

    def check_file(self, filename: str) -> None:
        """Hash the file as a stream against the manifest (nothing kept in memory); a graph is read
        whole, as ``read_verified`` does, so that what it points to is checked too."""
        if is_graph(filename):
            self.read_verified(filename)
        else:
            self._checked(filename, keep=False)

    def read_json(self, filename: str) -> Any:
        try:
            return json.loads(self.read_verified(filename).decode("utf-8"))
        except RecursionError:
            raise BundleError(f"{self.path}: {filename} is nested too deeply") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BundleError(f"{self.path}: {filename} is not valid JSON ({exc})") from None

    def vocab(self) -> list[str]:
        data = self.read_json("vocab.json")
        itos = data.get("itos") if isinstance(data, dict) else data
        if not isinstance(itos, list) or not all(isinstance(w, str) for w in itos):
            raise BundleError(f"{self.path}: vocab.json is not a list of words")
        _refuse_unprintable(self.path, "vocab.json", itos)
        if len(itos) != self.manifest["vocab"]["size"]:
            raise BundleError(f"{self.path}: vocab.json has {len(itos)} words, manifest says "
                              f"{self.manifest['vocab']['size']}")
        return itos

    def labels(self) -> list[str] | None:
        """The ImageNet tag names, when the bundle has them."""
        fn = self.manifest.get("tags", {}).get("file")
        if not fn:
            return None
        data = self.read_json(fn)
        if not isinstance(data, list) or not all(isinstance(w, str) for w in data):
            raise BundleError(f"{self.path}: {fn} is not a list of tag names")
        _refuse_unprintable(self.path, fn, data)
        return data

    def domain_model(self):
        """The domain gate (``capdesk.model.domain.DomainModel``), when the bundle has one."""
        gate = self.manifest.get("domain_gate")
        if not gate:
            return None
        from capdesk.model.domain import DomainFileError, DomainModel

        try:
            return DomainModel.from_bytes(self.read_verified(gate["file"]), gate["threshold"],
                                          self.manifest["encoder"]["feature_dim"])
        except DomainFileError as exc:
            raise BundleError(f"{self.path}: {gate['file']} {exc}") from None

    def verify(self) -> list[str]:
        """Every problem with this bundle (empty when it is sound)."""
        problems = []
        for fn in self.manifest["files"]:
            try:
                self.check_file(fn)
            except BundleError as exc:
                problems.append(str(exc))
        if not problems:
            for check in (self.vocab, self.labels, self.domain_model):
                try:
                    check()
                except BundleError as exc:
                    problems.append(str(exc))
        return problems

    def summary(self) -> dict:
        m = self.manifest
        return {"name": self.name, "path": str(self.path), "source": self.source,
                "description": m.get("description", ""), "domain": m.get("domain", ""),
                "metrics": m.get("metrics", {})}


def _refuse_unprintable(where: Path, fn: str, words: list[str]) -> None:
    """A model's words go into sidecars, pages and the terminal: none may hold a control character
    (an ESC that recolours the terminal, a NUL that ends the XMP), a bidi override or a line break."""
    for i, w in enumerate(words):
        if not w.isprintable():
            raise BundleError(f"{where}: {fn} entry {i} ({ascii(w)[:60]}) holds a control or invisible character")


def is_graph(filename: str) -> bool:
    """Whether a bundle's file is an ONNX graph that ONNX Runtime could be given."""
    return filename.lower().endswith(".onnx")


def _zip_regular(info: zipfile.ZipInfo) -> bool:
    """Unix mode bits in a zip entry: none (DOS-made zips), or a plain file or folder; no links, devices."""
    mode = info.external_attr >> 16
    return stat.S_IFMT(mode) in (0, stat.S_IFREG, stat.S_IFDIR)


_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_member_name(name: str) -> str | None:
    """Why a zip entry's name could land outside the folder it is unpacked into (None: it cannot)."""
    if "\0" in name or "\\" in name:
        return "holds a backslash or NUL"
    if name.startswith("/") or _DRIVE.match(name):
        return "is an absolute path"
    parts = name.rstrip("/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "has an empty, '.' or '..' part"
    return None


def zip_root(where: Path, names: list[str]) -> str:
    """The folder prefix ('' or 'name/') whose manifest.json is the bundle's: the top level, or one folder."""
    cands = [n for n in names if n == "manifest.json" or (n.count("/") == 1 and n.endswith("/manifest.json"))]
    cands = [n for n in cands if unsafe_member_name(n) is None]
    if not cands:
        raise BundleError(f"{where}: zip holds no manifest.json (at its top level or in one folder)")
    if len(set(cands)) > 1:
        raise BundleError(f"{where}: zip holds more than one manifest.json ({', '.join(sorted(set(cands))[:3])})")
    return cands[0][: -len("manifest.json")]


def manifest_from_bytes(where: Path, raw: bytes) -> dict:
    """The checked manifest in ``raw``; BundleError naming ``where`` and the first wrong field."""
    try:
        return schema.validate(schema.parse(raw))
    except schema.ManifestError as exc:
        raise BundleError(f"{where}: {exc}") from None


def read_limited(path: Path, limit: int) -> bytes:
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(f"{path.name} is not a regular file")
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path.name} is larger than {limit} bytes")
    return data


def cannot_open(path: Path, exc: OSError) -> str:
    """One line for a model path that cannot be looked at: "cannot open model folder /root/m: permission
    denied" (a folder above it the user may not enter, a link loop...)."""
    what = "model zip" if path.suffix.lower() == ".zip" else "model folder"
    why = (exc.strerror or str(exc)).lower()
    return f"cannot open {what} {path}: {why}"


def _stat_or_none(path: Path, bundle: Path) -> os.stat_result | None:
    """``path``'s stat; None when nothing is there; BundleError naming ``bundle`` when it cannot be asked."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # EACCES, ELOOP, ENAMETOOLONG...: a reason, never a traceback
        raise BundleError(cannot_open(bundle, exc)) from None


def open_bundle(path: str | os.PathLike[str], source: str = "path") -> Bundle:
    """Open a bundle folder or zip and validate its manifest (file hashes are checked on read)."""
    p = Path(path)
    st = _stat_or_none(p, p)
    if st is not None and stat.S_ISDIR(st.st_mode):
        mf = p / "manifest.json"
        mst = _stat_or_none(mf, p)
        if mst is None or not stat.S_ISREG(mst.st_mode):
            raise BundleError(f"{p}: not a model bundle (no manifest.json)")
        try:
            raw = read_limited(mf, schema.MANIFEST_MAX_BYTES)
        except OSError as exc:
            raise BundleError(f"{p}: manifest.json is unreadable ({exc})") from None
        return Bundle(p, manifest_from_bytes(p, raw), source)
    if st is not None and stat.S_ISREG(st.st_mode) and (p.suffix.lower() == ".zip" or zipfile.is_zipfile(p)):
        try:
            with zipfile.ZipFile(p) as zf:
                root = zip_root(p, zf.namelist())
                info = zf.getinfo(root + "manifest.json")
                with zf.open(info) as fh:
                    n, _, raw, over = stream_limited(fh, schema.MANIFEST_MAX_BYTES, keep=True)
        except BundleError:
            raise
        except PermissionError as exc:
            raise BundleError(cannot_open(p, exc)) from None
        except ZIP_ERRORS as exc:
            raise BundleError(f"{p}: not a readable zip ({type(exc).__name__}: {str(exc)[:200]})") from None
        if over or raw is None:
            raise BundleError(f"{p}: manifest.json is larger than {schema.MANIFEST_MAX_BYTES >> 20} MiB")
        return Bundle(p, manifest_from_bytes(p, raw), source, root)
    if st is None:
        raise BundleError(f"{p}: no such model folder or zip")
    raise BundleError(f"{p}: not a model bundle (expected a folder or .zip)")


def discover() -> tuple[list[Bundle], list[str]]:
    """All installed bundles (first of each name wins) and the problems met on the way.

    Each bundle is opened on its own: whatever one holds, the others are still found.
    """
    found: dict[str, Bundle] = {}
    problems: list[str] = []
    for folder, source in search_dirs():
        try:
            if not folder.is_dir():
                continue
            entries = sorted(folder.iterdir())
        except OSError as exc:
            problems.append(f"{folder}: cannot list model folder ({exc.strerror or exc})")
            continue
        for entry in entries:
            try:
                # '.'-names are hidden, and are where an import in progress unpacks.
                if entry.name.startswith(".") or not (entry.is_dir() or entry.suffix.lower() == ".zip"):
                    continue
                if entry.name in OTHER_MODEL_FOLDERS:
                    continue
                b = open_bundle(entry, source)
            except BundleError as exc:
                problems.append(str(exc))
                continue
            except Exception as exc:  # one hostile bundle must never stop discovery of the others
                problems.append(f"{entry}: cannot be read ({type(exc).__name__}: {str(exc)[:200]})")
                continue
            found.setdefault(b.name, b)
    return list(found.values()), problems


def looks_like_path(name_or_path: str) -> bool:
    """Whether ``--model`` was given a path (``./NAME``, ``/...``, anything with a separator, a
    ``.zip``) rather than a model's name.

    Decided by the text alone, never by what the current folder holds: a folder named like an
    installed model (in an unpacked archive, say) must not silently stand in for it.
    """
    seps = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return (name_or_path in (".", "..") or any(s in name_or_path for s in seps)
            or name_or_path.lower().endswith(".zip") or Path(name_or_path).is_absolute())


def resolve(name_or_path: str | None = None) -> Bundle:
    """A bundle by name (installed models only) or by a folder/zip path that looks like one
    (``looks_like_path``); ``None`` picks the default."""
    if name_or_path and looks_like_path(name_or_path):
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
    hint = ""
    if name_or_path and os.path.lexists(name_or_path):
        hint = f"; for the bundle in this folder, give its path: ./{name_or_path}"
    raise BundleError(f"model {want!r} not found; installed: {known}{hint}{extra}")
