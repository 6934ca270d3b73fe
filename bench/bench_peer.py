"""A peer in the same run: CapDesk against the architecture of Firefox's offline alt text.

The peer is distilvit's architecture: a ViT-B/16 encoder (224 px, 12 layers, 768 wide) and a
6-layer GPT-2 decoder with cross-attention (vocabulary 50,257), about 182M parameters. Speed does
not depend on the weights, so it is built with random weights (fixed seed) from the ``transformers``
configuration classes and exported to ONNX here, as three graphs with a key/value cache, the way
CapDesk's own bundle is split:

* ``encoder.onnx``: pixels -> the 197 patch states;
* ``decoder_init.onnx``: the first token and the patch states -> its log-probabilities, the
  self-attention cache, and every layer's cross-attention keys/values (computed once per image);
* ``decoder_step.onnx``: one token per beam, the self-attention cache and the cross keys/values ->
  log-probabilities and the cache grown by one position.

Both models then run in this process on the same image, with ONNX Runtime on the same threads and
the same session settings (``capdesk.model.engine.session_options``), decoded by the same numpy search
(``capdesk.model.beam.beam_search``), greedy and beam 3, median of several runs after warm-up runs. Random
weights never say a meaningful end, so both are forced to the same fixed number of decoding steps
(the end token is banned): by default CapDesk's own mean caption length on the sample pictures, in
steps (words + end). CapDesk's natural captions (ending when the model says so) are timed too.
The peer gets the weight recipe of the CapDesk bundle under test: float32 against a float32 bundle,
and against a shrunk one (``capdesk train shrink``) the same recipe, int8-dynamic decoder and
float16-stored encoder (``training.shrink``).

The app's own environment does not get ``transformers``: the bench runs from a benchmark-only one.

    python -m venv /work/peer-venv
    /work/peer-venv/bin/pip install torch==2.13.0 transformers onnx \\
        onnxruntime==$(python -c 'import onnxruntime; print(onnxruntime.__version__)') \\
        numpy pillow platformdirs
    PYTHONPATH=. /work/peer-venv/bin/python bench/bench_peer.py [--model NAME] [--threads 2,1] \\
        [--runs 7] [--tokens 0] [--image PATH] [--json out.json]

The exported graphs are kept in the user cache folder (``--cache``), keyed by the configuration.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from capdesk.imageio import Preprocess  # noqa: E402
from capdesk.model.beam import beam_search  # noqa: E402
from capdesk.model.decoders import ArrayDecoder  # noqa: E402
from capdesk.model.engine import Engine, session_options  # noqa: E402

SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.[pj][np]g"))
SEED = 17
OPSET = 17
VIT = dict(image_size=224, patch_size=16, num_channels=3, hidden_size=768, num_hidden_layers=12,
           num_attention_heads=12, intermediate_size=3072)
GPT2 = dict(n_layer=6, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257, add_cross_attention=True,
            is_decoder=True, bos_token_id=50256, eos_token_id=50256)
# ViTImageProcessor's defaults: 224 px, pixels scaled to [-1, 1].
PEER_PREPROCESS = Preprocess(224, (127.5, 127.5, 127.5), (127.5, 127.5, 127.5))


# -- the peer model ---------------------------------------------------------------
def build_peer():
    """distilvit's architecture with random weights: VisionEncoderDecoderModel(ViT-B/16, GPT-2 x6)."""
    import torch
    from transformers import GPT2Config, VisionEncoderDecoderConfig, VisionEncoderDecoderModel, ViTConfig

    torch.manual_seed(SEED)
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(ViTConfig(**VIT), GPT2Config(**GPT2))
    config.decoder_start_token_id = config.pad_token_id = GPT2["bos_token_id"]
    return VisionEncoderDecoderModel(config=config).eval().requires_grad_(False)


def peer_modules(model):
    """The encoder and the two decoder graphs as plain torch modules (tensors in, tensors out).

    The decoder is GPT-2's block written out over its own layers, so that the caches are plain
    tensors an exporter can take: ``past`` [rows, 2 * layers, heads, T, 64] (keys and values of each
    layer), ``cross`` [rows, 2 * layers, heads, 197, 64]."""
    import torch
    from torch import nn

    gpt = model.decoder.transformer
    head = model.decoder.lm_head
    heads = GPT2["n_head"]
    width = GPT2["n_embd"]
    dim = width // heads

    def split(x):  # [R, T, width] -> [R, heads, T, dim]
        return x.view(x.shape[0], x.shape[1], heads, dim).transpose(1, 2)

    def merge(x):  # [R, heads, T, dim] -> [R, T, width]
        return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], width)

    def attend(q, k, v):  # one query position: it may see every key, no mask needed
        w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * dim ** -0.5, dim=-1)
        return torch.matmul(w, v)

    def run_blocks(words, position, past, cross):
        x = gpt.wte(words[:, None]) + gpt.wpe(position)[None]
        presents = []
        for i, blk in enumerate(gpt.h):
            q, k, v = blk.attn.c_attn(blk.ln_1(x)).split(width, dim=2)
            q, k, v = split(q), split(k), split(v)
            if past is not None:
                k = torch.cat([past[:, 2 * i], k], dim=2)
                v = torch.cat([past[:, 2 * i + 1], v], dim=2)
            presents += [k, v]
            x = x + blk.attn.c_proj(merge(attend(q, k, v)))
            q = split(blk.crossattention.q_attn(blk.ln_cross_attn(x)))
            x = x + blk.crossattention.c_proj(merge(attend(q, cross[:, 2 * i], cross[:, 2 * i + 1])))
            x = x + blk.mlp(blk.ln_2(x))
        logits = head(gpt.ln_f(x)[:, -1])
        return torch.log_softmax(logits, dim=-1), torch.stack(presents, dim=1)

    class Graph(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model  # its weights become the graph's initializers, not traced constants

    class Encoder(Graph):
        def forward(self, image):
            return model.encoder(pixel_values=image).last_hidden_state

    class DecoderInit(Graph):
        def forward(self, word, states):
            kv = []
            for blk in gpt.h:
                k, v = blk.crossattention.c_attn(states).split(width, dim=2)
                kv += [split(k), split(v)]
            cross = torch.stack(kv, dim=1)
            logp, past = run_blocks(word, torch.zeros(1, dtype=torch.int64), None, cross)
            return logp, past, cross

    class DecoderStep(Graph):
        def forward(self, word, past, cross):
            # arange over the cache's length, so that the exported graph reads the position from it
            position = torch.arange(past.shape[3], past.shape[3] + 1)
            return run_blocks(word, position, past, cross)

    return Encoder().eval(), DecoderInit().eval(), DecoderStep().eval()


def check_against_transformers(model, enc, init, step, tokens: int = 4) -> float:
    """Largest difference between the cached decoder and transformers' own forward pass (no cache)
    on the same token sequence: the written-out blocks must be the same network."""
    import torch

    with torch.no_grad():
        image = torch.randn(1, 3, 224, 224)
        ids = torch.randint(0, GPT2["vocab_size"], (1, tokens))
        ref = torch.log_softmax(model(pixel_values=image, decoder_input_ids=ids).logits, dim=-1)[0]
        states = enc(image)
        logp, past, cross = init(ids[:, 0], states)
        worst = float((logp[0] - ref[0]).abs().max())
        for t in range(1, tokens):
            logp, past = step(ids[:, t], past, cross)
            worst = max(worst, float((logp[0] - ref[t]).abs().max()))
    return worst


def check_graphs(folder: Path, enc, init, step, tokens: int = 4) -> float:
    """Largest difference between the exported graphs in ONNX Runtime and the torch modules, over a
    few decoding steps (the cache grows, so the graphs' dynamic lengths are exercised)."""
    import onnxruntime as ort
    import torch

    s = {n: ort.InferenceSession(str(folder / f"{n}.onnx"), providers=["CPUExecutionProvider"])
         for n in ("encoder", "decoder_init", "decoder_step")}
    image = torch.randn(2, 3, 224, 224)
    ids = torch.randint(0, GPT2["vocab_size"], (2, tokens))
    with torch.no_grad():
        states = enc(image)
        logp, past, cross = init(ids[:, 0], states)
        (o_states,) = s["encoder"].run(None, {"image": image.numpy()})
        o_logp, o_past, o_cross = s["decoder_init"].run(None, {"word": ids[:, 0].numpy(), "states": o_states})
        worst = float(np.abs(o_logp - logp.numpy()).max())
        for t in range(1, tokens):
            logp, past = step(ids[:, t], past, cross)
            o_logp, o_past = s["decoder_step"].run(None, {"word": ids[:, t].numpy(), "past": o_past, "cross": o_cross})
            worst = max(worst, float(np.abs(o_logp - logp.numpy()).max()))
    return worst


def prepare_peer(folder: Path, shrink: bool) -> dict:
    """The three peer graphs (and, with ``shrink``, their shrunk forms), exported unless already there."""
    info_file = folder / "peer.json"
    info = json.loads(info_file.read_text()) if info_file.exists() else None
    if info is None:
        info = export_peer(folder)
        info_file.write_text(json.dumps(info, indent=2))
    if shrink and not info.get("shrunk"):
        shrink_peer(folder)
        info["shrunk"] = True
        info_file.write_text(json.dumps(info, indent=2))
    return info


def export_peer(folder: Path) -> dict:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    model = build_peer()
    enc, init, step = peer_modules(model)
    params = sum(p.numel() for p in model.parameters())
    diff = check_against_transformers(model, enc, init, step)
    print(f"peer: {params / 1e6:.1f}M parameters; cached decoder vs transformers' forward: max diff {diff:.2e}")
    with torch.no_grad():
        image = torch.randn(2, 3, 224, 224)
        states = enc(image)
        word = torch.full((2,), GPT2["bos_token_id"], dtype=torch.int64)
        _, past, cross = init(word, states)
        graphs = [
            ("encoder.onnx", enc, (image,), ["image"], ["states"], {"image": {0: "rows"}, "states": {0: "rows"}}),
            ("decoder_init.onnx", init, (word, states), ["word", "states"], ["logprobs", "past", "cross"],
             {n: {0: "rows"} for n in ("word", "states", "logprobs", "past", "cross")}),
            ("decoder_step.onnx", step, (word, past, cross), ["word", "past", "cross"], ["logprobs", "present"],
             {"word": {0: "rows"}, "past": {0: "rows", 3: "past"}, "cross": {0: "rows"}, "logprobs": {0: "rows"},
              "present": {0: "rows", 3: "present"}}),
        ]
        for name, module, args, ins, outs, dyn in graphs:
            t0 = time.perf_counter()
            torch.onnx.export(module, args, str(folder / name), input_names=ins, output_names=outs,
                              dynamic_axes=dyn, opset_version=OPSET, dynamo=False)
            print(f"exported {name} in {time.perf_counter() - t0:.0f} s")
    onnx_diff = check_graphs(folder, enc, init, step)
    print(f"peer graphs in ONNX Runtime vs torch: max log-probability diff {onnx_diff:.2e}")
    return {"parameters": params, "max_diff_vs_transformers": diff, "max_diff_onnx_vs_torch": onnx_diff,
            "seed": SEED, "vit": VIT, "gpt2": GPT2, "torch": torch.__version__, "shrunk": False}


def shrink_peer(folder: Path) -> None:
    """The recipe of ``capdesk train shrink``: float16-stored encoder, int8-dynamic decoder graphs."""
    import onnx

    from training.shrink import float16_storage, quantise_decoder

    small = folder / "shrunk"
    small.mkdir(exist_ok=True)
    onnx.save(float16_storage(onnx.load(str(folder / "encoder.onnx"))), str(small / "encoder.onnx"))
    for name in ("decoder_init.onnx", "decoder_step.onnx"):
        quantise_decoder(folder / name, small / name)


def cache_folder(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    import platformdirs
    import torch

    key = hashlib.sha256(json.dumps([VIT, GPT2, SEED, torch.__version__], sort_keys=True).encode()).hexdigest()[:12]
    return Path(platformdirs.user_cache_dir("capdesk")) / "bench-peer" / key


# -- running both -------------------------------------------------------------------
class Peer:
    """The exported peer in ONNX Runtime, decoded by CapDesk's own search."""

    def __init__(self, folder: Path, threads: int, decoder_threads: int) -> None:
        import onnxruntime as ort

        def load(name, n):
            return ort.InferenceSession(str(folder / name), sess_options=session_options(n),
                                        providers=["CPUExecutionProvider"])

        self.encoder = load("encoder.onnx", threads)
        self.dec_init = load("decoder_init.onnx", decoder_threads)
        self.dec_step = load("decoder_step.onnx", decoder_threads)

    def caption(self, image: np.ndarray, beam: int, steps: int) -> list[int]:
        (states,) = self.encoder.run(None, {"image": image})
        start = np.full(len(image), GPT2["bos_token_id"], np.int64)
        logp, past, cross = self.dec_init.run(None, {"word": start, "states": states})
        first = {"done": False}
        gathered: dict = {}
        none = np.zeros((1, 1), np.float32)

        # The init graph has already read the start word, so the search's first call (with the start
        # word) is answered from its output: both models run the same number of token positions.
        def step(words, h, c, rows):
            if not first["done"]:
                first["done"] = True
                return logp[rows], past[rows], c, np.zeros((len(rows), 1), np.float32)
            if gathered.get("rows") is not rows:  # the cross keys/values of each beam, once per search
                gathered.update(rows=rows, cross=np.ascontiguousarray(cross[rows]))
            out, present = self.dec_step.run(None, {"word": words, "past": h, "cross": gathered["cross"]})
            return out, present, c, np.zeros((len(rows), 1), np.float32)

        eos = GPT2["eos_token_id"]
        hyps = beam_search(ArrayDecoder(lambda _: (past, np.broadcast_to(none, (len(image), 1))), step), image, beam,
                           steps, GPT2["bos_token_id"], eos, banned=(eos,))
        return hyps[0].ids


def capdesk_fixed(eng: Engine, image: np.ndarray, beam: int, steps: int) -> list[int]:
    """CapDesk's engine (same sessions, same search as ``Engine.decode``) forced to ``steps`` words:
    the end token is banned, as it is for the peer."""
    hyps = beam_search(eng.decoder, eng.caption_input(image), beam, steps, eng.start, eng.end, eng.length_alpha,
                       eng.block_ngram, banned=(eng.pad, eng.start, eng.unk, eng.end))
    return hyps[0].ids


def natural_steps(eng: Engine, beam: int) -> float:
    """CapDesk's mean caption length on the sample pictures, in decoding steps (words + end)."""
    lengths = [len(eng.caption_file(p, beam).words) + 1 for p in SAMPLES]
    return statistics.mean(lengths)


def timed_together(measures: dict, runs: int, warmup: int = 2) -> dict:
    """Median seconds of each measure. Run round-robin, one of each per round, so that a load that
    comes and goes on a shared machine falls on both models alike."""
    for _ in range(warmup):
        for fn in measures.values():
            fn()
    times: dict = {k: [] for k in measures}
    for _ in range(runs):
        for k, fn in measures.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def compare(eng: Engine, peer: Peer, image_path: Path, steps: int, runs: int) -> dict:
    ours = eng.preprocess.load(image_path)[1][None]
    theirs = PEER_PREPROCESS.load(image_path)[1][None]
    lengths = {}
    measures = {"capdesk encoder only": lambda: eng.encode(ours),
                "peer encoder only": lambda: peer.encoder.run(None, {"image": theirs})}
    for beam in (1, 3):
        lengths[beam] = len(eng.caption_arrays(ours, beam)[0].words) + 1
        assert len(capdesk_fixed(eng, ours, beam, steps)) == steps
        assert len(peer.caption(theirs, beam, steps)) == steps
        measures[f"capdesk beam {beam}, {steps} steps"] = lambda b=beam: capdesk_fixed(eng, ours, b, steps)
        measures[f"peer beam {beam}, {steps} steps"] = lambda b=beam: peer.caption(theirs, b, steps)
        measures[f"capdesk beam {beam}, natural length"] = lambda b=beam: eng.caption_arrays(ours, b)
        measures[f"capdesk beam {beam}, file -> caption, natural length"] = (
            lambda b=beam: eng.caption_file(image_path, b))
        measures[f"peer beam {beam}, file -> caption, {steps} steps"] = (
            lambda b=beam: peer.caption(PEER_PREPROCESS.load(image_path)[1][None], b, steps))
    ms = {k: round(v * 1000, 2) for k, v in timed_together(measures, runs).items()}
    out = {"times_ms": ms, "capdesk_natural_steps": {f"beam {b}": n for b, n in lengths.items()}}
    for beam in (1, 3):
        c, p = ms[f"capdesk beam {beam}, {steps} steps"], ms[f"peer beam {beam}, {steps} steps"]
        out[f"beam{beam}"] = {"capdesk_ms": c, "peer_ms": p, "ratio_peer_over_capdesk": round(p / c, 1),
                              "capdesk_natural_ms": ms[f"capdesk beam {beam}, natural length"]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="CapDesk bundle (default: the default model)")
    ap.add_argument("--threads", default="2,1", help="thread counts to run both at, comma-separated")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=0,
                    help="decoding steps for both (0: CapDesk's mean caption length on the samples, beam 3)")
    ap.add_argument("--image", default=str(SAMPLES[0]) if SAMPLES else None)
    ap.add_argument("--peer-weights", choices=("auto", "float32", "shrunk"), default="auto",
                    help="auto: the recipe of the CapDesk bundle under test")
    ap.add_argument("--peer-decoder-threads", type=int, default=0,
                    help="threads for the peer's decoder graphs (0: as many as its encoder)")
    ap.add_argument("--cache", default=None, help="folder for the exported peer graphs")
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args()

    probe = Engine(ns.model, provider="cpu", threads=1)
    shrunk = "weights" in probe.bundle.manifest
    peer_shrunk = shrunk if ns.peer_weights == "auto" else ns.peer_weights == "shrunk"
    folder = cache_folder(ns.cache)
    peer_info = prepare_peer(folder, peer_shrunk)
    graphs = folder / "shrunk" if peer_shrunk else folder
    mean_steps = natural_steps(probe, 3)
    steps = ns.tokens or round(mean_steps)
    image = Path(ns.image)
    print(f"peer: {peer_info['parameters'] / 1e6:.1f}M parameters, {'shrunk' if peer_shrunk else 'float32'}; "
          f"CapDesk {probe.name} ({'shrunk' if shrunk else 'float32'}); image {image.name}; "
          f"{steps} decoding steps for both (CapDesk's mean on the samples at beam 3: {mean_steps:.2f})")
    results = {}
    for threads in [int(t) for t in ns.threads.split(",")]:
        eng = Engine(ns.model, provider="cpu", threads=threads)
        peer = Peer(graphs, threads, ns.peer_decoder_threads or threads)
        results[f"{threads} threads"] = r = compare(eng, peer, image, steps, ns.runs)
        for beam in (1, 3):
            print(json.dumps({"threads": threads, "beam": beam, **r[f"beam{beam}"]}))
    info = {"capdesk_model": probe.name, "capdesk_weights": "shrunk" if shrunk else "float32",
            "peer": {"architecture": "VisionEncoderDecoder: ViT-B/16 224 + GPT-2 6 layers with cross-attention",
                     "parameters": peer_info["parameters"], "weights": "shrunk" if peer_shrunk else "float32",
                     "random_weights_seed": SEED,
                     "max_diff_vs_transformers": peer_info["max_diff_vs_transformers"],
                     "max_diff_onnx_vs_torch": peer_info.get("max_diff_onnx_vs_torch")},
            "image": str(image), "steps": steps, "capdesk_mean_steps_on_samples_beam3": round(mean_steps, 2),
            "runs": ns.runs, "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "onnxruntime": __import__("onnxruntime").__version__, "results": results}
    print(json.dumps({k: {f"beam{b}": v[f"beam{b}"]["ratio_peer_over_capdesk"] for b in (1, 3)}
                      for k, v in results.items()}))
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
