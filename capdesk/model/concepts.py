"""A bundle's concept head (``concepts.onnx``, ``concepts.json``): for each picture, the probability
that a person describing it would use each of the head's words (objects, people, animals, colours,
actions). Optional: a bundle without one loads and describes as before.

The manifest's ``concepts`` section names the files; ``grounding`` (alpha, tau) says how strongly the
beam search is steered away from object words the concepts do not support.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capdesk.model.bundle import Bundle, BundleError

MAX_WORDS = 5000  # a head of thousands of words is already far past what the training captions can teach


@dataclass
class Grounding:
    alpha: float
    tau: float


class Concepts:
    def __init__(self, session: Any, words: list[str], threshold: float, grounding: Grounding | None) -> None:
        self.session = session
        self.words = words
        self.threshold = threshold
        self.grounding = grounding
        self.input_name = session.get_inputs()[0].name

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """[B, L, D] encoder features -> [B, len(words)] probabilities."""
        out = self.session.run(None, {self.input_name: np.ascontiguousarray(features, dtype=np.float32)})[0]
        if out.shape != (len(features), len(self.words)):
            raise BundleError(f"concepts.onnx gave {out.shape}, not one probability per word")
        return out


def load_concepts(bundle: Bundle, session: Callable[[str], Any]) -> Concepts | None:
    """The bundle's concept head, or None when it has none; a malformed section is a ``BundleError``."""
    sec = bundle.manifest.get("concepts")
    if not sec:
        return None
    where = f"{bundle.path}: manifest.json concepts"
    if not isinstance(sec, dict) or not isinstance(sec.get("file"), str) or not isinstance(sec.get("words"), str):
        raise BundleError(f"{where}: needs 'file' and 'words'")
    data = bundle.read_json(sec["words"])
    words = data.get("words") if isinstance(data, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words) or not 0 < len(words) <= MAX_WORDS:
        raise BundleError(f"{where}: {sec['words']} is not a list of at most {MAX_WORDS} words")
    threshold = sec.get("threshold", 0.5)
    g = bundle.manifest.get("grounding")
    grounding = None
    if g:
        try:
            grounding = Grounding(float(g["alpha"]), float(g["tau"]))
        except (KeyError, TypeError, ValueError):
            raise BundleError(f"{bundle.path}: manifest.json grounding needs numbers 'alpha' and 'tau'") from None
        if not (0.0 <= grounding.alpha <= 20.0 and 0.0 < grounding.tau <= 1.0):
            raise BundleError(f"{bundle.path}: manifest.json grounding: alpha must be 0..20 and tau 0..1")
    if not isinstance(threshold, (int, float)) or not 0.0 < threshold < 1.0:
        raise BundleError(f"{where}: threshold must be between 0 and 1")
    return Concepts(session(sec["file"]), words, float(threshold), grounding)


def copy_without_concepts(bundle: Path, dest: Path, name: str | None = None) -> Path:
    """A copy of a bundle without its concept head, grounding, trust and fact check (which reads the concept
    head), its manifest's hashes kept for the rest: it describes by the older confidence rule. The baseline
    of bench/bench_trust.py, and what tests of the session's mechanics (not of the trust rule) run."""
    import json
    import shutil

    shutil.copytree(bundle, dest)
    m = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    for key in ("concepts", "grounding", "trust", "fact_check"):
        m.pop(key, None)
    for fn in ("concepts.onnx", "concepts.json"):
        m["files"].pop(fn, None)
        (dest / fn).unlink(missing_ok=True)
    if name:
        m["name"] = name
    (dest / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    return dest
