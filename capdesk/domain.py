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
from dataclasses import dataclass

import numpy as np


@dataclass
class DomainModel:
    mean: np.ndarray  # [D]
    components: np.ndarray  # [k, D], orthonormal rows
    variances: np.ndarray  # [k]
    residual: float
    threshold: float

    @classmethod
    def from_bytes(cls, data: bytes, threshold: float) -> DomainModel:
        z = np.load(io.BytesIO(data))
        return cls(z["mean"].astype(np.float32), z["components"].astype(np.float32),
                   z["variances"].astype(np.float32), float(z["residual"]), float(threshold))

    def score(self, pooled: np.ndarray) -> np.ndarray:
        """pooled [N, D] mean features -> [N] scores (higher: further from the training images)."""
        z = normalise(pooled) - self.mean
        proj = z @ self.components.T
        inside = (proj**2 / self.variances).sum(1)
        outside = np.maximum((z**2).sum(1) - (proj**2).sum(1), 0.0) / self.residual
        return (inside + outside) / z.shape[1]

    def ratio(self, pooled: np.ndarray) -> np.ndarray:
        return self.score(pooled) / self.threshold


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
