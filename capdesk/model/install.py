"""Installing a model bundle (a folder or a zip) into the user's model folder, and removing one:
one service for ``capdesk models import``/``remove`` and the Models dialog.

Installing a model is running someone else's file through our code, so:

* the manifest is read first (size-capped) and checked against its schema; its ``name`` must be
  a plain identifier, so it can only ever name one folder inside the model folder;
* only the files the manifest lists (and ``manifest.json``) are copied; every zip entry is
  checked before anything is written: no absolute, drive-letter, ``..`` or empty path parts,
  no links, devices or other special files, no duplicates; a folder's files must be plain
  files (no symbolic or hard links), and nothing is followed into sub-folders;
* each file is copied as a stream that stops at the size the manifest gives (a zip entry's
  declared size is never trusted) and is hashed on the way;
* everything is unpacked into a hidden temporary folder inside the model folder and renamed
  into place in one step only when all of it checked out; on any failure the temporary
  folder is removed, so a failed import leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from capdesk.model.bundle import (
    ZIP_ERRORS,
    Bundle,
    BundleError,
    cannot_open,
    discover,
    is_graph,
    manifest_from_bytes,
    open_bundle,
    stream_limited,
    unsafe_member_name,
    user_models_dir,
    zip_root,
)
from capdesk.model.manifest import MANIFEST_MAX_BYTES

TEMP_PREFIX = ".import-"
STALE_SECONDS = 3600  # a temporary folder this old was left by an import that was killed
TOTAL_MAX_BYTES = 8 << 30  # whatever the manifest says, one import never writes more than this


@dataclass
class Installed:
    name: str
    path: Path
    skipped: list[str] = field(default_factory=list)  # source files the manifest does not list

    def message(self) -> str:
        extra = ""
        if self.skipped:
            shown = ", ".join(self.skipped[:5]) + (" ..." if len(self.skipped) > 5 else "")
            extra = f" (not copied, the manifest does not list them: {shown})"
        return f"imported model {self.name!r} to {self.path}{extra}"


def install(src: str | os.PathLike[str], models_dir: Path | None = None,
            check: Callable[[Bundle], None] | None = None) -> Installed:
    """Check the bundle at ``src`` and install it; BundleError (one line) when it is refused. ``check``: a
    further check of the staged bundle by a room above this one (the policy section its settings read),
    which refuses it by raising BundleError before anything is installed."""
    try:
        return _install(Path(src), models_dir, check)
    except OSError as exc:  # the model folder cannot be made or written, the source vanished...
        where = exc.filename or src
        raise BundleError(f"{src}: cannot be installed ({where}: {exc.strerror or exc})") from None


def _install(src: Path, models_dir: Path | None, check: Callable[[Bundle], None] | None) -> Installed:
    dest_root = Path(models_dir) if models_dir is not None else user_models_dir()
    try:
        st = os.stat(src)
    except (FileNotFoundError, NotADirectoryError):
        raise BundleError(f"{src}: no such model folder or zip") from None
    except OSError as exc:  # a folder above it the user may not enter: said in one line
        raise BundleError(cannot_open(src, exc)) from None
    if stat.S_ISDIR(st.st_mode):
        source: _Source = _FolderSource(src)
    elif stat.S_ISREG(st.st_mode):
        source = _ZipSource(src)
    else:
        raise BundleError(f"{src}: not a model bundle (expected a folder or .zip)")
    with source:
        bundle = source.bundle()  # the manifest, read and checked against the schema
        name = bundle.name
        _refuse_clash(name, dest_root)
        files = dict(bundle.manifest["files"])
        source.check_members(set(files))
        total = sum(e["size"] for e in files.values())
        if total > TOTAL_MAX_BYTES:
            raise BundleError(f"{src}: the manifest lists {total} bytes, more than a model may hold")
        dest_root.mkdir(parents=True, exist_ok=True)
        _sweep_stale(dest_root)
        free = shutil.disk_usage(dest_root).free
        if total > free:
            raise BundleError(f"{src}: needs {total >> 20} MiB and {dest_root} has {free >> 20} MiB free")
        tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=dest_root))
        try:
            for fn, entry in files.items():
                with source.open(fn) as fh:
                    _copy_checked(src, fn, fh, tmp / fn, entry["size"], entry["sha256"])
            _write_new(tmp / "manifest.json", source.manifest_bytes)
            _check_staged(open_bundle(tmp, "user"), files, check)
            dest = dest_root / name
            if os.path.lexists(dest):
                raise BundleError(f"a model named {name!r} is already installed at {dest}")
            os.rename(tmp, dest)  # one step: the model is there whole, or not at all
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, BundleError):
                raise BundleError(str(exc).replace(str(tmp), str(src))) from None
            if isinstance(exc, OSError):
                raise BundleError(f"{src}: cannot be installed into {dest_root} "
                                  f"({exc.strerror or exc})") from None
            raise
        _fsync_dir(dest_root)
        return Installed(name, dest, source.skipped)


def _check_staged(staged: Bundle, files: dict, check: Callable[[Bundle], None] | None) -> None:
    # A graph that points outside itself (external data) is refused here, before it is ever run.
    for fn in files:
        if is_graph(fn):
            staged.check_file(fn)
    for readable in (staged.vocab, staged.labels, staged.domain_model):
        readable()
    if check is not None:
        check(staged)


def _refuse_clash(name: str, dest_root: Path) -> None:
    dest = dest_root / name
    if os.path.lexists(dest):
        raise BundleError(f"a model named {name!r} is already installed at {dest}")
    # Names are folder names: on a case-insensitive disk 'Everyday' is 'everyday'.
    with contextlib.suppress(OSError):
        for other in dest_root.iterdir():
            if other.name.lower() == name.lower():
                raise BundleError(f"a model named {other.name!r} is already installed at {other}")
    for b in discover()[0]:
        if b.name.lower() == name.lower():
            raise BundleError(f"a model named {b.name!r} is already installed ({b.source}: {b.path}); "
                              "a bundle of the same name would hide it: rename the bundle first")


def _sweep_stale(dest_root: Path) -> None:
    now = time.time()
    for p in [*dest_root.glob(TEMP_PREFIX + "*"), *dest_root.glob(".removing-*")]:
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink() and now - p.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(p, ignore_errors=True)


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _copy_checked(src: Path, fn: str, fh: IO[bytes], dest: Path, size: int, sha256: str) -> None:
    """Copy ``fh`` to ``dest``, never more than ``size`` bytes, and refuse it unless its sha256 matches."""
    import hashlib

    h = hashlib.sha256()
    n = 0
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = fh.read(min(1 << 20, size + 1 - n))
            if not chunk:
                break
            n += len(chunk)
            if n > size:
                raise BundleError(f"{src}: {fn} is over {size} bytes, manifest says {size} "
                                  "(replaced, or a decompression bomb)")
            h.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    if n != size:
        raise BundleError(f"{src}: {fn} is {n} bytes, manifest says {size} (truncated or replaced)")
    if h.hexdigest() != sha256:
        raise BundleError(f"{src}: {fn} does not match its sha256 (modified or corrupt)")


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- where the files come from --------------------------------------------------------------------
class _Source:
    manifest_bytes: bytes = b""
    skipped: list[str]

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped = []

    def __enter__(self) -> _Source:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def bundle(self) -> Bundle:
        raise NotImplementedError

    def _from_manifest(self, fh: IO[bytes], zip_root: str | None = None) -> Bundle:
        """The manifest is read once, size-capped, and these very bytes are checked and installed."""
        _, _, raw, over = stream_limited(fh, MANIFEST_MAX_BYTES, keep=True)
        if over or raw is None:
            raise BundleError(f"{self.path}: manifest.json is larger than {MANIFEST_MAX_BYTES >> 20} MiB")
        self.manifest_bytes = raw
        return Bundle(self.path, manifest_from_bytes(self.path, raw), "path", zip_root)

    def check_members(self, listed: set[str]) -> None:
        raise NotImplementedError

    def open(self, fn: str) -> contextlib.AbstractContextManager[IO[bytes]]:
        raise NotImplementedError


class _FolderSource(_Source):
    def bundle(self) -> Bundle:
        self._plain_file(self.path / "manifest.json")
        with self.open("manifest.json") as fh:
            return self._from_manifest(fh)

    def _plain_file(self, p: Path) -> os.stat_result:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            raise BundleError(f"{self.path}: {p.name} is missing") from None
        except OSError as exc:
            raise BundleError(f"{self.path}: {p.name} cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISLNK(st.st_mode):
            raise BundleError(f"{self.path}: {p.name} is a symbolic link; a bundle holds plain files only")
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{self.path}: {p.name} is not a plain file (a folder, device or pipe)")
        if st.st_nlink > 1:
            raise BundleError(f"{self.path}: {p.name} is a hard link; a bundle holds plain files only")
        return st

    def check_members(self, listed: set[str]) -> None:
        for fn in sorted(listed):
            self._plain_file(self.path / fn)
        try:
            # Only the top level is looked at: nothing is followed into sub-folders or links.
            present = sorted(e.name for e in os.scandir(self.path))
        except OSError as exc:
            raise BundleError(f"{self.path}: cannot list the folder ({exc.strerror or exc})") from None
        self.skipped = [n for n in present if n not in listed and n != "manifest.json"]

    @contextlib.contextmanager
    def open(self, fn: str):
        p = self.path / fn
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped for something else since the check
                raise BundleError(f"{self.path}: {fn} is not a plain file")
            yield fh


class _ZipSource(_Source):
    def __enter__(self) -> _ZipSource:
        try:
            self.zf = zipfile.ZipFile(self.path)
            self.infos = self.zf.infolist()
        except ZIP_ERRORS as exc:
            raise BundleError(f"{self.path}: not a readable zip ({type(exc).__name__}: {str(exc)[:200]})") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.zf.close()

    def bundle(self) -> Bundle:
        self.root = zip_root(self.path, [i.filename for i in self.infos])
        with self.open("manifest.json") as fh:
            return self._from_manifest(fh, self.root)

    def check_members(self, listed: set[str]) -> None:
        """Every entry of the zip, whether it would be copied or not: one hostile name refuses the whole zip."""
        seen: set[str] = set()
        wanted = listed | {"manifest.json"}
        for info in self.infos:
            name = info.filename
            why = unsafe_member_name(name)
            if why:
                raise BundleError(f"{self.path}: zip entry {name[:200]!r} {why}; nothing was installed")
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise BundleError(f"{self.path}: zip entry {name!r} is a symbolic link; nothing was installed")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise BundleError(f"{self.path}: zip entry {name!r} is a device, pipe or other special file; "
                                  "nothing was installed")
            if name in seen:
                raise BundleError(f"{self.path}: zip entry {name!r} appears twice; nothing was installed")
            seen.add(name)
            if info.is_dir():
                if name != self.root:
                    self.skipped.append(name)
                continue
            rel = name[len(self.root):] if name.startswith(self.root) else None
            if rel is None or rel not in wanted:
                self.skipped.append(name)
        missing = sorted(fn for fn in listed if self.root + fn not in seen)
        if missing:
            raise BundleError(f"{self.path}: {missing[0]} is missing from the zip")

    def _open_member(self, name: str):
        try:
            return self.zf.open(name)
        except ZIP_ERRORS as exc:
            raise BundleError(f"{self.path}: {name} cannot be read ({type(exc).__name__}: {exc})") from None

    @contextlib.contextmanager
    def open(self, fn: str):
        try:
            with self._open_member(self.root + fn) as fh:
                yield fh
        except BundleError:
            raise
        except ZIP_ERRORS as exc:
            if isinstance(exc, OSError) and not isinstance(exc, zipfile.BadZipFile):
                raise  # the disk we write to, not the zip: reported by install()
            raise BundleError(f"{self.path}: {fn} cannot be read from the zip ({type(exc).__name__}: "
                              f"{exc})") from None


# -- removing ----------------------------------------------------------------------------------
REMOVE_PREFIX = ".removing-"


@dataclass
class Removed:
    name: str
    path: Path

    def message(self) -> str:
        return (f"removed model {self.name!r} ({self.path}); the descriptions it wrote next to your pictures "
                "are kept")


def removable(name: str, models_dir: Path | None = None) -> Path:
    """Where the user's model ``name`` is, so it can be named in a question before ``remove``;
    BundleError saying why when it is not the user's to remove (shipped, from CAPDESK_MODELS, unknown)."""
    from capdesk.model.manifest import is_model_name

    user_dir = Path(models_dir) if models_dir is not None else user_models_dir()
    if not is_model_name(name):
        raise BundleError(f"{name[:80]!r} is not a model name")
    bundles, _ = discover()
    hit = next((b for b in bundles if b.name == name), None)
    if hit is not None and hit.source == "shipped":
        raise BundleError(f"{name!r} is shipped with CapDesk ({hit.path}) and cannot be removed; "
                          "choose another model to stop using it")
    if hit is not None and hit.source == "env":
        raise BundleError(f"{name!r} comes from a folder in CAPDESK_MODELS ({hit.path}), not your model folder; "
                          "remove it there or take that folder out of CAPDESK_MODELS")
    cands = [hit.path] if hit is not None and hit.source == "user" else []
    # A damaged model cannot be opened, but it is still the user's to remove, by its folder's name.
    cands += [user_dir / name, user_dir / f"{name}.zip"]
    for c in cands:
        if os.path.lexists(c) and c.parent.resolve() == user_dir.resolve() and not c.name.startswith("."):
            return c
    known = ", ".join(sorted(b.name for b in bundles if b.source == "user")) or "none"
    raise BundleError(f"no model named {name!r} is in your model folder {user_dir} (yours: {known})")


def remove(name: str, models_dir: Path | None = None) -> Removed:
    """Take the user's model ``name`` out of their model folder; BundleError (one line) when it cannot be.
    Only the bundle goes: sidecars and the settings are the callers' (a model in use falls back to
    Automatic there)."""
    target = removable(name, models_dir)
    # One rename takes it out of every listing at once; the files are deleted after.
    gone = target.with_name(f"{REMOVE_PREFIX}{target.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(target, gone)
    except OSError as exc:
        raise BundleError(f"{target}: cannot be removed ({exc.strerror or exc})") from None
    _fsync_dir(target.parent)
    try:
        if gone.is_dir() and not gone.is_symlink():
            shutil.rmtree(gone)
        else:
            gone.unlink()  # a zip, or a link the user made: the link goes, never what it points to
    except OSError as exc:
        raise BundleError(f"model {name!r} was removed from the list, but {gone} could not be deleted "
                          f"({exc.strerror or exc}); delete it by hand") from None
    return Removed(name, target)
