"""How far an image lies from the pictures a model was trained on.

Each bundle may carry ``domain.npz``: a probabilistic-PCA summary of the pooled, L2-normalised
encoder features of its training images (mean, top components and their variances, the residual
variance). The score is the PPCA negative log-likelihood up to constants, divided by the
feature size; the manifest's ``domain_gate.threshold`` was chosen on the val split so
that nearly all in-domain images pass. ``ratio = score / threshold``: under 1 is in domain,
and the lowest ratio among bundles names the model an image fits best. (Measured on the
shipped bundles' test splits, comparing ratios routes 99.8-100% of images to their own
model, far better than any single threshold separates the domains.)
"""

from __future__ import annotations

import io
import math
import zipfile
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from capdesk.limits import NEAR_DOMAIN_RATIO

ARRAY_MAX_BYTES = 64 << 20  # a 64-component summary of 1280 features is ~330 KB
ARRAYS = ("mean", "components", "variances", "residual")


class DomainFileError(ValueError):
    """``domain.npz`` that cannot be used; ``str()`` says why (the caller names the bundle)."""


def _load_arrays(data: bytes) -> dict[str, np.ndarray]:
    """The four arrays of a domain summary, read without pickles and without trusting sizes.

    An ``.npz`` is a zip of ``.npy`` files: each array's header (dtype, shape) is checked before
    its data is read, so a small file cannot expand into gigabytes, and object arrays (pickles,
    which could run code) are refused outright.
    """
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for key in ARRAYS:
                with zf.open(key + ".npy") as fh:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                    else:
                        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                    if dtype.hasobject or dtype.kind not in "fiu":
                        raise DomainFileError(f"holds {key} of type {dtype} (numbers expected; pickles are refused)")
                    nbytes = math.prod(shape) * dtype.itemsize
                    if nbytes > ARRAY_MAX_BYTES:
                        raise DomainFileError(f"declares a {key} array of {nbytes} bytes (over the limit)")
                    raw = fh.read(nbytes + 1)
                    if len(raw) != nbytes:
                        raise DomainFileError(f"{key} holds {len(raw)} bytes, its header says {nbytes}")
                    arr = np.frombuffer(raw, dtype=dtype)
                    out[key] = arr.reshape(shape, order="F" if fortran else "C")
    except DomainFileError:
        raise
    except KeyError as exc:
        raise DomainFileError(f"lacks an array ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError,
            RuntimeError) as exc:
        raise DomainFileError(f"is not a readable numpy archive ({type(exc).__name__}: {exc})") from None
    return out


@dataclass
class DomainModel:
    mean: np.ndarray  # [D]
    components: np.ndarray  # [k, D], orthonormal rows
    variances: np.ndarray  # [k]
    residual: float
    threshold: float

    @classmethod
    def from_bytes(cls, data: bytes, threshold: float, feature_dim: int | None = None) -> DomainModel:
        """The summary in ``data`` (an .npz); DomainFileError when it is damaged, hostile or the wrong shape."""
        z = _load_arrays(data)
        mean, comps, var, res = (z[k].astype(np.float32) for k in ARRAYS)
        d = feature_dim or (mean.shape[0] if mean.ndim == 1 else 0)
        if (mean.shape != (d,) or comps.ndim != 2 or comps.shape[1] != d or var.shape != (comps.shape[0],)
                or res.size != 1):
            raise DomainFileError(f"has arrays of the wrong shape for {d} features")
        residual = float(res.reshape(()))
        if not (np.isfinite(mean).all() and np.isfinite(comps).all() and (var > 0).all()
                and math.isfinite(residual) and residual > 0):
            raise DomainFileError("holds non-finite or non-positive values")
        return cls(mean, comps, var, residual, float(threshold))

    def score(self, pooled: np.ndarray) -> np.ndarray:
        """pooled [N, D] mean features -> [N] scores (higher: further from the training images)."""
        z = normalise(pooled) - self.mean
        proj = z @ self.components.T
        inside = (proj**2 / self.variances).sum(1)
        outside = np.maximum((z**2).sum(1) - (proj**2).sum(1), 0.0) / self.residual
        return (inside + outside) / z.shape[1]

    def ratio(self, pooled: np.ndarray) -> np.ndarray:
        return self.score(pooled) / self.threshold


@dataclass(frozen=True)
class Route:
    """Which model describes one picture, and whether the picture lies in that model's domain."""

    model: str
    ratio: float | None  # the model's distance ratio for the picture (< 1: inside its gate); None: no gate
    in_domain: bool | None  # None: the model carries no domain summary, so nobody can say
    near: bool = False  # just outside the gate (under NEAR_DOMAIN_RATIO) and claimed by no other model more


def route(ratios: Mapping[str, np.ndarray], n: int, primary: str, fixed: bool = False,
          choices: Collection[str] | None = None, inside_only: Collection[str] = ()) -> list[Route]:
    """The one place that decides, for each of ``n`` pictures, which model describes it and whether
    it is in domain. ``ratios``: each gated model's ratios for the pictures; ``primary``: the model
    to use when ``fixed`` (the user named it) or when no model has a gate; ``choices``: the models
    that can describe here (default: all); the others' gates still count.

    A picture is in a model's domain when it lies inside that model's own gate and no other
    model claims it more (a lower ratio): routed automatically, the model that fits best is used;
    with a named model that another fits better, the picture is out of the named model's domain.

    ``inside_only``: models (the user's fine-tunes) that claim a picture only inside their own gate:
    outside it they are neither chosen nor count against another model, so that a gate fitted on a
    few photos never takes a picture from the model that would have described it.
    """
    out = []
    for i in range(n):
        claims = {m: float(v[i]) for m, v in ratios.items() if m not in inside_only or float(v[i]) < 1.0}
        able = [m for m in claims if choices is None or m in choices]
        name = primary if fixed or not able else min(able, key=lambda m: claims[m])
        if name not in ratios:
            out.append(Route(name, None, None))
            continue
        r = float(ratios[name][i])
        best_other = min((v for m, v in claims.items() if m != name), default=math.inf)
        out.append(Route(name, round(r, 4), bool(r < 1.0 and r <= best_other),
                         bool(1.0 <= r < NEAR_DOMAIN_RATIO and r <= best_other)))
    return out


def fine_tuned(manifest: Mapping) -> bool:
    """Whether a bundle is one of the user's fine-tunes (``capdesk train finetune`` names its base)."""
    return "base_model" in manifest or "finetune" in manifest


def automatic(manifest: Mapping) -> bool:
    """Whether automatic routing may hand pictures to this bundle: any model but a fine-tune, and a
    fine-tune only when it proved itself against its base and was installed for automatic use. A
    fine-tune made before the proof existed never proved anything, so it is used only when named."""
    if not fine_tuned(manifest):
        return True
    ft = manifest.get("finetune")
    return isinstance(ft, Mapping) and ft.get("proved") is True and ft.get("automatic") is True


def normalise(pooled: np.ndarray) -> np.ndarray:
    x = np.asarray(pooled, np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-6)


def fit(pooled: np.ndarray, k: int = 64) -> dict[str, np.ndarray]:
    """The PPCA summary of [N, D] pooled training features."""
    x = normalise(pooled).astype(np.float64)
    mean = x.mean(0)
    z = x - mean
    _, s, vt = np.linalg.svd(z, full_matrices=False)
    var = s**2 / max(len(x) - 1, 1)
    k = int(min(k, len(var) - 1, x.shape[1] - 1))
    rest = var[k:]
    residual = float(rest.mean()) if rest.size else float(var[-1])
    residual = max(residual, 1e-6)
    return {"mean": mean.astype(np.float32), "components": vt[:k].astype(np.float32),
            "variances": np.maximum(var[:k], residual).astype(np.float32), "residual": np.float32(residual)}


def to_bytes(summary: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **summary)
    return buf.getvalue()
