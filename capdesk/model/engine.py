"""The captioning engine: a model bundle run through ONNX Runtime, decoded by beam search.

Nothing here imports torch. One ``Engine`` holds a bundle's encoder and its decoder (of the kind
the manifest names, ``capdesk.model.decoders``) and turns pixels (or precomputed encoder features,
for evaluation) into a ``Caption``. Whether a
picture lies in the model's domain, and what is said about it, is decided by
``capdesk.describe.describer.Describer``: the one path from a file to a description for the CLI, batch,
watch, clipboard and GUI.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from capdesk.imageio import Preprocess, load_image
from capdesk.limits import DEFAULT_BEAM
from capdesk.model import decoders, graphcache
from capdesk.model import providers as prov
from capdesk.model.beam import Hypothesis, beam_finalists
from capdesk.model.bundle import Bundle, BundleError, resolve
from capdesk.model.concepts import load_concepts
from capdesk.model.graphcheck import GraphError, _fields


@dataclass
class Caption:
    text: str
    words: list[str]
    logprob: float  # sum over the words and the end token
    confidence: float  # geometric-mean word probability, 0..1
    attention: np.ndarray  # [len(words), L]
    grid: tuple[int, int]  # attention grid rows, cols
    finished: bool = True
    class_logits: np.ndarray | None = field(default=None, repr=False)
    finalists: list[str] = field(default_factory=list, repr=False)  # the beam's other finished captions
    finalist_confidences: list[float] = field(default_factory=list, repr=False)  # theirs, in the same order

    def attention_map(self, word_index: int) -> np.ndarray:
        """The attention of one word as a [rows, cols] grid that sums to 1."""
        return self.attention[word_index].reshape(self.grid)


def tuned_beam(manifest: dict) -> int:
    """The beam width the model was tuned with (manifest ``decoding.beam``), else the default."""
    return int(manifest.get("decoding", {}).get("beam", DEFAULT_BEAM))


def session_options(threads: int = 0) -> Any:
    """ONNX Runtime options for one of a bundle's graphs. ``threads`` 0: all cores.

    Idle worker threads do not spin: on a shared or busy machine spinning threads fight the other
    work for the cores (measured: the encoder at 2 spinning threads took 9 ms instead of 5 beside a
    busy process). The decoder graphs get one thread: a step is a few small matrix products over
    a handful of rows, which a second thread only slows by its hand-over.
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if threads:
        opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3
    return opts


# ONNX Runtime's setting for where a graph given as bytes finds its external data (else: the current folder).
EXTERNAL_DATA_FOLDER = "session.model_external_initializers_file_folder_path"


def load_graph(data: bytes | memoryview, opts: Any, providers: list, key: str | None = None) -> Any:
    """An ONNX Runtime session for a graph's bytes (already checked by ``Bundle.read_verified``); on the
    CPU, the graph as optimised once before when the cache has it (``graphcache``; ``key``: its sha256).

    A second wall behind that check: ONNX Runtime is told that the graph's external data lives in
    a fresh, empty, private folder, so whatever the current folder is (the home folder, with its
    ``.ssh``), no tensor can be read from a file: ONNX Runtime refuses any path that leaves the
    folder (it resolves links) and finds nothing inside it. The folder only matters while loading.
    """
    import onnxruntime as ort

    def make(graph: bytes | str, options: Any) -> Any:
        return ort.InferenceSession(graph, sess_options=options, providers=providers)

    with tempfile.TemporaryDirectory(prefix="capdesk-no-external-") as empty:
        opts.add_session_config_entry(EXTERNAL_DATA_FOLDER, empty)
        return graphcache.session(data, opts, providers, make, key)


_MODEL_GRAPH, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT = 7, 5, 11, 12  # onnx.proto's field numbers
_VALUE_NAME, _TENSOR_NAME = 1, 8


def graph_io_names(data: bytes | memoryview) -> tuple[list[str], list[str]]:
    """The names of an ONNX model's inputs (less its initializers, as ONNX Runtime lists them) and
    outputs, read from its wire data; GraphError when it cannot be read."""
    buf = memoryview(data)
    graph = next((v for num, wire, v in _fields(buf, 0, len(buf)) if num == _MODEL_GRAPH and wire == 2), None)
    if graph is None:
        raise GraphError("has no graph")
    names: dict[int, list[str]] = {_GRAPH_INPUT: [], _GRAPH_OUTPUT: [], _GRAPH_INITIALIZER: []}
    for num, wire, span in _fields(buf, *graph):
        if num in names and wire == 2:
            want = _TENSOR_NAME if num == _GRAPH_INITIALIZER else _VALUE_NAME
            name = next((bytes(buf[v[0]:v[1]]).decode("utf-8") for n, w, v in _fields(buf, *span)
                         if n == want and w == 2), "")
            names[num].append(name)
    held = set(names[_GRAPH_INITIALIZER])
    return [n for n in names[_GRAPH_INPUT] if n not in held], names[_GRAPH_OUTPUT]


@dataclass(frozen=True)
class GraphArg:
    """An input or output of a graph not yet loaded: its name, as ONNX Runtime's ``NodeArg`` gives it."""

    name: str


class LazySession:
    """An ONNX Runtime session made at its first run, from a graph's bytes already checked by the bundle.

    Its inputs' and outputs' names are known at once (read from the graph), so a model can be checked
    and routed to without loading it: a picture loads only the graphs that describe it (the aerial model's
    encoder is never run beside the everyday one's, and its decoder only for an aerial photo). Creating a
    session costs 30-150 ms of a cold single picture each; ``capdesk batch`` and the service pay it once."""

    def __init__(self, data: bytes | memoryview, make: Any) -> None:
        self._data: bytes | memoryview | None = data
        self._make = make
        self._session: Any = None
        self._lock = threading.Lock()
        self._io = graph_io_names(data)

    def loaded(self) -> Any:
        """The ONNX Runtime session, made now if it was not yet."""
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._session = self._make(self._data)
                    self._data = None  # ONNX Runtime holds its own copy of the weights
                    self.run = self._session.run  # a decoding step calls it 20-60 times a picture: no detour
        return self._session

    def get_inputs(self) -> list:
        return self._session.get_inputs() if self._session is not None else [GraphArg(n) for n in self._io[0]]

    def get_outputs(self) -> list:
        return self._session.get_outputs() if self._session is not None else [GraphArg(n) for n in self._io[1]]

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self.loaded().run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # everything else a session offers (get_providers, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.loaded(), name)


# Pictures the encoder runs at once on the CPU. Measured on two cores, one thread, 16 pictures (medians of 5):
# 9.8, 9.9, 9.6, 11.1 and 12.3 ms a picture at 1, 2, 4, 8 and 16 at once; past four the activations leave the
# processor's cache. A GPU takes the batch whole.
ENCODE_AT_ONCE = 4


class Engine:
    def __init__(self, bundle: Bundle | str | None = None, provider: str | None = None,
                 beam: int | None = None, threads: int = 0) -> None:
        """``beam``: the width the user chose; None (not chosen) uses the model's tuned width."""
        self.bundle = bundle if isinstance(bundle, Bundle) else resolve(bundle)
        m = self.bundle.manifest
        self.preprocess = Preprocess.from_manifest(m["encoder"])
        self.vocab = self.bundle.vocab()
        sp = m["vocab"]["specials"]
        self.start, self.end, self.pad, self.unk = sp["<start>"], sp["<end>"], sp["<pad>"], sp["<unk>"]
        dec = m.get("decoding", {})
        self.max_len = int(m.get("max_caption_length", 24))
        self.length_alpha = float(dec.get("length_alpha", 1.0))
        self.block_ngram = int(dec.get("block_ngram", 0))
        self.beam = tuned_beam(m) if beam is None else int(beam)
        g = int(m["encoder"]["grid"])
        side = math.isqrt(g)
        self.grid = (side, g // side) if side * side == g else (1, g)
        self.requested_providers = prov.choose(provider)
        # Decode one picture per call when the decoder's activations are quantised per call (shrunk bundles).
        self.per_picture = "int8" in str(m.get("weights", {}).get("kind", ""))
        # Such a decoder's steps run on the CPU whatever the provider: CUDA has no kernels for its dynamically
        # quantised products, so ONNX Runtime copies between GPU and CPU 16 times a step (on an H200 a
        # folder went at 16.8 pictures/s on CUDA against 23.5 on the CPU; docs/performance.md).
        self.decoder_providers = (["CPUExecutionProvider"] if self.per_picture
                                  else self.requested_providers)

        def session(fn: str, opts, providers: list[str] | None = None):
            data = self.bundle.read_graph(fn)  # checked now (or before, unchanged), whether or not it is run
            digest = self.bundle.manifest["files"][fn]["sha256"]

            def make(graph: bytes):
                try:
                    return load_graph(graph, opts, providers or self.requested_providers, digest)
                except Exception as exc:  # onnxruntime raises its own exception types
                    why = str(exc).splitlines()[0]
                    raise BundleError(f"{self.bundle.path}: {fn} cannot be loaded ({why})") from None

            try:
                return LazySession(data, make)
            except (GraphError, UnicodeDecodeError):  # names unreadable here: ONNX Runtime says what is wrong
                return make(data)

        try:
            kind = decoders.kind_of(m)
        except ValueError as exc:
            raise BundleError(f"{self.bundle.path}: {exc}") from None
        # Options of their own for each graph: each load names its own empty external-data folder.
        self.encoder = session("encoder.onnx", session_options(threads))
        self.decoder = kind.build(m, lambda fn: session(fn, session_options(1), self.decoder_providers))
        self.encoder_outputs = [o.name for o in self.encoder.get_outputs()]
        # "features" for most decoders; "trunk" (the encoder's last block input) for one that carries
        # its own tuned copy of the encoder's top (training/encoder.py EncoderTop)
        self.decoder_input_name = self.decoder.input_name
        if self.decoder_input_name not in self.encoder_outputs:
            what = kind.graphs[0] if kind.graphs else f"its {kind.name} decoder"
            raise BundleError(f"{self.bundle.path}: {what} takes the encoder's "
                              f"{self.decoder_input_name!r}, which encoder.onnx does not give")
        self.labels: list[str] | None = self.bundle.labels()
        self.concepts = load_concepts(self.bundle, lambda fn: session(fn, session_options(1)))
        self.domain = self.bundle.domain_model()
        self._lock = threading.Lock()

    @property
    def provider(self) -> str:
        """The provider that actually runs the encoder (ONNX Runtime may have fallen back)."""
        return self.encoder.get_providers()[0]

    @property
    def name(self) -> str:
        return self.bundle.name

    # -- the three stages ---------------------------------------------------------
    def encode(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The encoder's features (what routing and the domain gate read) and class logits."""
        named = self.encode_named(batch)
        return named["features"], named.get("class_logits")

    def encode_named(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Every output of the encoder, by name. A batch runs ``ENCODE_AT_ONCE`` pictures at a time, with the
        same outputs to the bit as one run (the pictures of a batch never meet in the network)."""
        batch = batch.astype(np.float32, copy=False)
        if len(batch) <= ENCODE_AT_ONCE or self.provider != "CPUExecutionProvider":
            return dict(zip(self.encoder_outputs, self.encoder.run(None, {"image": batch})))
        parts = [self.encoder.run(None, {"image": batch[i:i + ENCODE_AT_ONCE]})
                 for i in range(0, len(batch), ENCODE_AT_ONCE)]
        return {name: np.concatenate([p[k] for p in parts]) for k, name in enumerate(self.encoder_outputs)}

    def decoder_input(self, named: dict[str, np.ndarray]) -> np.ndarray:
        """What ``decode`` takes, out of ``encode_named``'s outputs."""
        return named[self.decoder_input_name]

    def caption_input(self, batch: np.ndarray) -> np.ndarray:
        """What ``decode`` takes, for a batch of preprocessed images."""
        return self.decoder_input(self.encode_named(batch))

    def finalists(self, feats: np.ndarray, beam: int | None = None,
                  bias: np.ndarray | None = None) -> list[list[Hypothesis]]:
        """Every caption the beam finishes for each picture of ``feats`` (what ``decode`` takes), best first.
        ``bias`` [B, V]: added to each picture's word scores while ranking (grounding, ``beam_finalists``)."""
        if self.per_picture and len(feats) > 1:
            # int8 dynamic quantisation scales each call's activations by their range over the whole
            # call, so pictures decoded together would sway each other's words: a folder's alt text
            # must be what the picture gets on its own. Batched decoding was no faster on the CPU.
            return [pool for i in range(len(feats))
                    for pool in self.finalists(feats[i:i + 1], beam, None if bias is None else bias[i:i + 1])]
        return beam_finalists(self.decoder, feats, beam or self.beam, self.max_len,
                              self.start, self.end, self.length_alpha, self.block_ngram,
                              banned=(self.pad, self.start, self.unk), bias=bias)

    def decode(self, feats: np.ndarray, beam: int | None = None,
               class_logits: np.ndarray | None = None, bias: np.ndarray | None = None) -> list[Caption]:
        """Captions for ``feats``: the encoder's output that this decoder takes (``decoder_input``)."""
        return self.captions(self.finalists(feats, beam, bias), feats, class_logits)

    def captions(self, pools: list[list[Hypothesis]], feats: np.ndarray,
                 class_logits: np.ndarray | None = None) -> list[Caption]:
        """The best of each picture's finalists as a ``Caption``, the others' texts kept beside it."""
        hyps = [pool[0] for pool in pools]
        out = []
        for i, hy in enumerate(hyps):
            words = [self.vocab[w] for w in hy.ids]
            lp = float(sum(hy.logprobs))
            conf = math.exp(lp / len(hy.logprobs)) if hy.logprobs else 0.0
            att = hy.alphas if len(hy.alphas) == len(words) else np.zeros((len(words), feats.shape[1]))
            others = [" ".join(self.vocab[w] for w in o.ids) for o in pools[i][1:]]
            confs = [math.exp(sum(o.logprobs) / len(o.logprobs)) if o.logprobs else 0.0 for o in pools[i][1:]]
            out.append(Caption(_sentence(words), words, lp, conf, att.astype(np.float32), self.grid,
                               hy.finished, None if class_logits is None else class_logits[i], others, confs))
        return out

    def caption_arrays(self, batch: np.ndarray, beam: int | None = None) -> list[Caption]:
        with self._lock:
            named = self.encode_named(batch)
            return self.decode(self.decoder_input(named), beam, named.get("class_logits"))

    def caption_image(self, img: Image.Image, beam: int | None = None) -> Caption:
        return self.caption_arrays(self.preprocess.to_array(img)[None], beam)[0]

    def caption_file(self, path: str | os.PathLike[str], beam: int | None = None) -> Caption:
        return self.caption_image(load_image(path), beam)


def _sentence(words: list[str]) -> str:
    if not words:
        return ""
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."
