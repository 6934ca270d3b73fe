"""Decoder kinds: the graphs that turn a picture's features into words, one word per call.

A bundle's manifest names the kind of its decoder (``decoder.kind``); a manifest without the field
means ``lstm-attention``, the only kind there was before kinds were named, so every bundle made
before then loads as it always did. Each kind is registered here under its name with the graphs its
manifest must list, and is built from those graphs. The beam search (``capdesk.model.beam``) speaks
to a decoder through ``beam.Decoder`` alone: what a kind keeps between words is its own affair, so
a new kind is a class and a ``register`` call, and the search is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from capdesk.model.beam import Decoder

LSTM_ATTENTION = "lstm-attention"
DEFAULT_KIND = LSTM_ATTENTION  # what a manifest without ``decoder.kind`` means

# A graph of the bundle by file name, checked against the manifest and loaded (an ONNX Runtime session).
GraphLoader = Callable[[str], Any]


class BundleDecoder(Decoder, Protocol):
    """A decoder built from a bundle: the beam's three calls, and which encoder output it takes."""

    input_name: str  # "features", or a trunk ("trunk", "trunkN") for a decoder carrying its own encoder top


@dataclass(frozen=True)
class Kind:
    name: str
    graphs: tuple[str, ...]  # the files its manifest must list, beside encoder.onnx and vocab.json
    build: Callable[[dict, GraphLoader], BundleDecoder]  # (the whole manifest, a graph loader) -> decoder


_KINDS: dict[str, Kind] = {}


def register(name: str, graphs: tuple[str, ...], build: Callable[[dict, GraphLoader], BundleDecoder]) -> None:
    """Make ``name`` a kind a manifest may name; a second registration of a name replaces the first."""
    _KINDS[name] = Kind(name, tuple(graphs), build)


def unregister(name: str) -> None:
    _KINDS.pop(name, None)


def known_kinds() -> list[str]:
    return sorted(_KINDS)


def kind_name(manifest: dict) -> object:
    """The kind a manifest names, as written (not yet checked); the default when it names none."""
    dec = manifest.get("decoder")
    kind = dec.get("kind") if isinstance(dec, dict) else None
    return DEFAULT_KIND if kind is None else kind


def unknown_kind(kind: object) -> str:
    """Why a kind cannot be run, in one line (the caller adds which bundle)."""
    shown = repr(kind[:80]) if isinstance(kind, str) else repr(kind)[:80]
    runs = ", ".join(known_kinds())
    return f"manifest 'decoder.kind' is {shown}, a decoder this CapDesk cannot run (it runs: {runs})"


def kind_of(manifest: dict) -> Kind:
    """The registered kind a manifest names; ValueError with ``unknown_kind``'s words otherwise."""
    kind = kind_name(manifest)
    found = _KINDS.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValueError(unknown_kind(kind))
    return found


def build(manifest: dict, load: GraphLoader) -> BundleDecoder:
    """The decoder of a bundle with this manifest, its graphs read through ``load``."""
    return kind_of(manifest).build(manifest, load)


class ArrayDecoder:
    """A decoder given as two functions over a tuple of arrays with one row per beam: ``begin(features)``
    gives the arrays of each image, ``step(words, *arrays, rows)`` gives (log-probabilities, *arrays,
    alpha). For a network driven from Python (the PyTorch decoder that the ONNX graphs are checked
    against) or made by hand; ``reorder`` takes the same rows of every array."""

    def __init__(self, begin: Callable[[Any], tuple[Any, ...]], step: Callable[..., tuple[Any, ...]]) -> None:
        self._begin, self._step = begin, step

    def begin(self, features: Any) -> tuple[Any, ...]:
        return tuple(self._begin(features))

    def step(self, words: np.ndarray, state: tuple[Any, ...], rows: np.ndarray) -> tuple[np.ndarray, tuple, np.ndarray]:
        logp, *arrays, alpha = self._step(words, *state, rows)
        return logp, tuple(arrays), alpha

    def reorder(self, state: tuple[Any, ...], rows: np.ndarray) -> tuple[Any, ...]:
        return tuple(a[rows] for a in state)


# -- lstm-attention ---------------------------------------------------------------------------------
class _Memory:
    """What every word of one search attends to, per picture, and its copy per beam row."""

    __slots__ = ("features", "projected", "rows", "row_features", "row_projected")

    def __init__(self, features: np.ndarray, projected: np.ndarray) -> None:
        self.features, self.projected = features, projected
        self.rows: np.ndarray | None = None
        self.row_features = self.row_projected = features

    def for_rows(self, rows: np.ndarray) -> None:
        # The search maps beams to pictures with one ``rows`` array for its whole run: the memory
        # of each beam is gathered once, not copied again at every word.
        self.rows = rows
        self.row_features = np.ascontiguousarray(self.features[rows])
        self.row_projected = np.ascontiguousarray(self.projected[rows])


class LstmAttention:
    """Show, Attend and Tell's decoder as two graphs: ``decoder_init.onnx`` (the decoder's input ->
    h0, c0, the projected memory, and optionally the memory itself) and ``decoder_step.onnx``
    (word, h, c, memory, projected -> log-probabilities, h, c, alpha). Its state is (h, c) and the
    search's memory; a beam carries h and c, and the memory stays per picture."""

    GRAPHS = ("decoder_init.onnx", "decoder_step.onnx")

    def __init__(self, init_graph: Any, step_graph: Any) -> None:
        self.init_graph, self.step_graph = init_graph, step_graph
        self.input_name: str = init_graph.get_inputs()[0].name

    @classmethod
    def from_bundle(cls, manifest: dict, load: GraphLoader) -> LstmAttention:
        return cls(*(load(fn) for fn in cls.GRAPHS))

    def run_init(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``decoder_init`` on the decoder's input: h0, c0, the projected memory, and the memory that
        the step graph attends to (its "features")."""
        features = np.ascontiguousarray(features, dtype=np.float32)
        h0, c0, proj, *rest = self.init_graph.run(None, {self.input_name: features})
        # A decoder with a refiner or a tuned encoder top attends to its own "memory" of the grid,
        # not to the encoder's features.
        return h0, c0, proj, np.ascontiguousarray(rest[0]) if rest else features

    def begin(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, _Memory]:
        h0, c0, proj, memory = self.run_init(features)
        return h0, c0, _Memory(memory, proj)

    def step(self, words: np.ndarray, state: tuple[np.ndarray, np.ndarray, _Memory], rows: np.ndarray
             ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, _Memory], np.ndarray]:
        h, c, mem = state
        if mem.rows is not rows:
            mem.for_rows(rows)
        logp, h, c, alpha = self.step_graph.run(None, {"word": words, "h": h, "c": c, "features": mem.row_features,
                                                       "projected": mem.row_projected})
        return logp, (h, c, mem), alpha

    def reorder(self, state: tuple[np.ndarray, np.ndarray, _Memory], rows: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, _Memory]:
        h, c, mem = state
        return h[rows], c[rows], mem


register(LSTM_ATTENTION, LstmAttention.GRAPHS, LstmAttention.from_bundle)
