"""Graphs as ONNX Runtime has optimised them, kept in the user's cache folder, so that a later process
loads them without optimising them again.

ONNX Runtime rewrites every graph it is given (constant folding, the float16 weights' casts folded,
fused operators, convolutions in the processor's blocked memory layout) before its first run. For one
cold picture that was most of the time spent making its six sessions (measured on two cores: 152 ms
against 66 ms for the same graphs saved once optimised and loaded with optimisation off). The saved
graph runs the same kernels on the same weights, so its outputs are the same bit for bit.

An entry is named by the original graph's sha256, the optimisation level, ONNX Runtime's version and
the processor's features (the blocked layout is chosen for the processor it was made on), and is used
only for the CPU provider. It is checked like a bundle's graph (``graphcheck``: no tensor stored outside
it) before ONNX Runtime sees it, once for each file as it is on disk (``_file_mark``); one that cannot be
read or loaded is removed and made again. A graph is
saved the second time it is loaded, not the first (``_first_sighting``). The cache
is the user's own folder, trusted as the user's model folder is. ``CAPDESK_GRAPH_CACHE=off`` turns it
off; a folder there puts it elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import mmap
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capdesk.model.graphcheck import GraphError, check_no_external_data

ENV = "CAPDESK_GRAPH_CACHE"
CPU_ONLY = ["CPUExecutionProvider"]

# (graph bytes or a path to them, session options) -> an ONNX Runtime session
Make = Callable[[bytes | str, Any], Any]


def folder() -> Path | None:
    """Where optimised graphs are kept; None when the cache is off."""
    chosen = os.environ.get(ENV, "")
    if chosen.lower() in ("0", "off", "no", "false"):
        return None
    if chosen:
        return Path(chosen)
    import platformdirs

    return Path(platformdirs.user_cache_dir("capdesk", appauthor=False)) / "graphs"


@functools.cache
def machine() -> str:
    """ONNX Runtime's version and the processor's features, digested: what an optimised graph depends on
    beyond the graph itself."""
    import onnxruntime as ort

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            features = next((line for line in fh if line.startswith(("flags", "Features"))), "")
    except OSError:  # not Linux: the machine's and processor's names stand for its features
        import platform

        features = platform.machine() + platform.processor()
    return hashlib.sha256(f"{ort.__version__}|{features}".encode()).hexdigest()[:16]


def entry(data: bytes, opts: Any, providers: list[str], key: str | None = None) -> Path | None:
    """The cache file for this graph loaded with these options, or None when it is not cached.
    ``key``: the graph's sha256 when the caller knows it (a bundle's manifest), else it is computed."""
    where = folder()
    if where is None or list(providers) != CPU_ONLY:
        return None
    key = key or hashlib.sha256(data).hexdigest()
    return where / f"{key[:32]}-{int(opts.graph_optimization_level)}-{machine()}.onnx"


def _checked_mark(name: str) -> Path | None:
    where = folder()
    return None if where is None else where / "checked" / name


def check_once(data: bytes | memoryview, digest: str) -> None:
    """``check_no_external_data`` for graph bytes whose sha256 is ``digest`` (already verified by the
    caller), done once: a mark in the cache says these bytes were found sound. The walk over a graph's
    protobuf took 0.1 s of a cold picture's 0.67 s for its dozen graphs; the mark lives in the same
    trusted folder as the optimised graphs, and names bytes, so it vouches for nothing else."""
    mark = _checked_mark(f"sha256-{digest}")
    if mark is not None and mark.is_file():
        return
    check_no_external_data(data)
    _leave(mark)


def _leave(mark: Path | None) -> None:
    if mark is None:
        return
    with contextlib.suppress(OSError):
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()


def _identity(path: Path, name: str) -> str | None:
    """``name`` and the file as it is on disk now: any write to it, or a file put in its place, changes
    its device, inode, size, modification or change time (which no one can set back), so a mark left
    before never vouches for what is there after."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{name}.{st.st_dev}.{st.st_ino}.{st.st_size}.{st.st_mtime_ns}.{st.st_ctime_ns}"


def _vouched_name(path: Path, digest: str) -> str | None:
    return _identity(path, f"file-{digest[:32]}")


def vouch(path: Path, digest: str) -> None:
    """Leave a mark that the file at ``path``, as it is now, was read whole and matched ``digest`` (and,
    for a graph, held all its tensors)."""
    name = _vouched_name(path, digest)
    _leave(None if name is None else _checked_mark(name))


def vouched(path: Path, digest: str, size: int) -> memoryview | None:
    """The file mapped read-only, when a mark says that it, as it is now, matched ``digest`` before;
    None otherwise (or when the cache is off), and the caller reads and hashes it."""
    if os.name == "nt":  # a mapped file cannot be removed there, and a model may be removed while the app runs
        return None
    name = _vouched_name(path, digest)
    mark = None if name is None else _checked_mark(name)
    if mark is None or not mark.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    if len(mapped) != size or _vouched_name(path, digest) != name:  # changed while it was being opened
        mapped.close()
        return None
    return memoryview(mapped)


def _file_mark(path: Path) -> Path | None:
    """The mark of a cache entry as it is on disk now (``_identity``)."""
    name = _identity(path, path.name)
    return None if name is None else _checked_mark(name)


def _sound(path: Path) -> bool:
    """Whether the saved graph can be read and holds every tensor inside it. Mapped, not read: the check
    skips over the weights, so most of the file is never touched here (reading it into Python would cost
    as much as the optimisation saved); and done once for the file as it is (``_file_mark``)."""
    mark = _file_mark(path)
    if mark is not None and mark.is_file():
        return True
    try:
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # gone, unreadable, or empty
        return False
    try:
        check_no_external_data(mapped)
    except GraphError:
        return False
    finally:
        with contextlib.suppress(BufferError):
            mapped.close()
    _leave(mark)
    return True


def _load_saved(path: Path, opts: Any, make: Make) -> Any | None:
    """A session for the optimised graph at ``path``, optimisation off; None when it cannot be used.
    ONNX Runtime reads the file itself; its external data would still be looked for only in the empty
    folder that ``engine.load_graph`` names."""
    import onnxruntime as ort

    level = opts.graph_optimization_level
    try:
        if _sound(path):
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            return make(str(path), opts)
    except Exception:  # noqa: BLE001  written by something else, or damaged: made again from the original
        pass
    finally:
        opts.graph_optimization_level = level
    _remove(path)
    return None


def _remove(path: Path) -> None:
    """Remove a cache file, and the marks of its checks; a folder that will not let it go only keeps the
    cache from helping."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
        for mark in (path.parent / "checked").glob(f"{path.name}.*"):
            mark.unlink(missing_ok=True)


def _load_and_save(data: bytes, path: Path, opts: Any, make: Make) -> Any:
    """A session for ``data``, its optimised graph saved to ``path`` on the way (beside it, then moved
    into place, so that a process reading the cache never sees half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return make(data, opts)
    part = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    opts.optimized_model_filepath = str(part)
    try:
        session = make(data, opts)
    except Exception:  # noqa: BLE001  a folder it cannot write to must not stop the model: load it unsaved
        _remove(part)
        opts.optimized_model_filepath = ""
        return make(data, opts)
    try:
        os.replace(part, path)
    except OSError:
        _remove(part)
    _forget_others(path)
    return session


def _forget_others(path: Path) -> None:
    """Remove the same graph's entries made by another ONNX Runtime or optimisation level, so that the
    cache holds one copy of each graph (an upgrade of ONNX Runtime would otherwise leave the old ones)."""
    graph = path.name.split("-", 1)[0]
    for other in path.parent.glob(f"{graph}-*.onnx*"):
        if other.name not in (path.name, path.name + ".seen"):
            _remove(other)


def _first_sighting(path: Path) -> bool:
    """True the first time a graph is met (a mark is left for the next time). Saving costs more than it
    saves once (about 0.15 s of writing for a picture's six graphs), so a graph loaded only once, as by
    a one-off command or a test in a fresh cache folder, is never written."""
    mark = path.with_name(path.name + ".seen")
    if mark.exists():
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass
    return True


def session(data: bytes | memoryview, opts: Any, providers: list[str], make: Make, key: str | None = None) -> Any:
    """``make(data, opts)``, or the same graph already optimised from the cache (saved there the second
    time it is loaded). ``data`` may be mapped from the disk (``vouched``): it is read only when ONNX
    Runtime must be given the original graph."""
    path = entry(data, opts, providers, key)
    if path is not None and path.is_file():
        loaded = _load_saved(path, opts, make)
        if loaded is not None:
            return loaded
    data = data if isinstance(data, bytes) else bytes(data)
    if path is None or _first_sighting(path):
        return make(data, opts)
    return _load_and_save(data, path, opts, make)
