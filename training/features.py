"""Encoder features for a whole data set, computed once through the ONNX encoder and cached.

Layout of a cache folder: ``index.json`` (image paths, in row order, and the images that
could not be read), ``features.npy`` ([N, L, D] float16) and, with ``flip=True``,
``features_flip.npy`` (the same of the mirrored image, a cheap augmentation).
A half-written cache resumes where it stopped: ``done.npy`` marks finished rows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import ImageOps

from capdesk.imageio import ImageError, Preprocess

log = logging.getLogger("training.features")


def file_digest(path: Path, n: int = 16) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:n]


class FeatureCache:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        index = json.loads((self.folder / "index.json").read_text(encoding="utf-8"))
        self.paths: list[str] = index["paths"]
        self.failed: dict[str, str] = index["failed"]
        # Looked up by absolute path, so a data set named by a relative path still finds its rows.
        self.row = {os.path.abspath(p): i for i, p in enumerate(self.paths)}
        self.failed = {os.path.abspath(p): why for p, why in self.failed.items()}
        self.features = np.load(self.folder / "features.npy", mmap_mode="r")
        flip = self.folder / "features_flip.npy"
        self.features_flip = np.load(flip, mmap_mode="r") if flip.exists() else None

    def __contains__(self, path: object) -> bool:
        key = os.path.abspath(str(path))
        return key in self.row and key not in self.failed

    def get(self, path: str | Path, flip: bool = False) -> np.ndarray:
        src = self.features_flip if flip and self.features_flip is not None else self.features
        return np.asarray(src[self.row[os.path.abspath(str(path))]], dtype=np.float32)

    def load_all(self, paths: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """Rows for ``paths`` in memory (fp16), for fast training."""
        rows = np.array([self.row[os.path.abspath(str(p))] for p in paths], dtype=np.int64)
        f = np.asarray(self.features[rows]) if len(rows) else np.zeros((0, *self.features.shape[1:]), np.float16)
        ff = np.asarray(self.features_flip[rows]) if self.features_flip is not None and len(rows) else None
        return f, ff


def build_cache(image_paths: list[Path], encoder_onnx: Path, preprocess: Preprocess,
                cache_root: Path, name: str, flip: bool = False, batch_size: int = 16,
                progress: bool = True, output: str = "features") -> FeatureCache:
    """Compute (or resume, or reuse) the cache of the encoder's ``output`` for ``image_paths``."""
    import onnxruntime as ort
    from tqdm import tqdm

    paths = sorted({str(p) for p in image_paths})
    key = hashlib.sha256(("\n".join(paths) + file_digest(Path(encoder_onnx)) +
                          repr(preprocess) + str(flip) + ("" if output == "features" else output)
                          ).encode()).hexdigest()[:12]
    folder = Path(cache_root) / f"{name}-{key}"
    if (folder / "index.json").exists():
        log.info("feature cache reused: %s", folder)
        return FeatureCache(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sess = ort.InferenceSession(str(encoder_onnx), providers=_providers())
    probe = sess.run([output], {"image": np.zeros((1, 3, preprocess.size, preprocess.size), np.float32)})[0]
    shape = (len(paths), *probe.shape[1:])
    feats = _open_rows(folder / "features.npy", shape)
    feats_f = _open_rows(folder / "features_flip.npy", shape) if flip else None
    done_file = folder / "done.npy"
    done = np.load(done_file) if done_file.exists() else np.zeros(len(paths), bool)
    failed: dict[str, str] = {}

    def load(i: int):
        try:
            img = preprocess.resize(_load(paths[i], preprocess))
            arrs = [preprocess.to_array(img)]
            if flip:
                arrs.append(preprocess.to_array(ImageOps.mirror(img)))
            return i, arrs, None
        except ImageError as exc:
            return i, None, exc.reason

    todo = [i for i in range(len(paths)) if not done[i]]
    bar = tqdm(total=len(paths), initial=len(paths) - len(todo), desc=f"features {name}",
               unit="img", disable=not progress)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for start in range(0, len(todo), batch_size):
            chunk = list(pool.map(load, todo[start:start + batch_size]))
            ok = [(i, a) for i, a, err in chunk if err is None]
            for i, _, err in chunk:
                if err is not None:
                    failed[paths[i]] = err
                    log.warning("%s: %s; skipped", paths[i], err)
                    done[i] = True
            if ok:
                idx = np.array([i for i, _ in ok])
                out = sess.run([output], {"image": np.stack([a[0] for _, a in ok])})[0]
                feats[idx] = out.astype(np.float16)
                if flip:
                    out_f = sess.run([output], {"image": np.stack([a[1] for _, a in ok])})[0]
                    feats_f[idx] = out_f.astype(np.float16)
                done[idx] = True
            if start // batch_size % 20 == 0:
                feats.flush()
                np.save(done_file, done)
            bar.update(len(chunk))
    bar.close()
    feats.flush()
    if feats_f is not None:
        feats_f.flush()
    (folder / "index.json").write_text(json.dumps({"paths": paths, "failed": failed}), encoding="utf-8")
    done_file.unlink(missing_ok=True)
    return FeatureCache(folder)


def _load(path: str, preprocess: Preprocess):
    from capdesk.imageio import load_image

    return load_image(path, draft_size=(preprocess.size * 2, preprocess.size * 2))


def _open_rows(path: Path, shape: tuple[int, ...]) -> np.ndarray:
    if path.exists():
        arr = np.load(path, mmap_mode="r+")
        if arr.shape == shape:
            return arr
    return np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=shape)


def _providers() -> list[str]:
    import onnxruntime as ort

    avail = ort.get_available_providers()
    return [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in avail]
