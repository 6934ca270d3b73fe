"""Shrink a model bundle's weights after export: the encoder's to float16, the decoder's to int8.

    capdesk train shrink BUNDLE [--out FOLDER] [--data DATA --image-root ROOT]
    capdesk train shrink BUNDLE --restore-encoder [CACHE]   # before re-exporting on a new machine

The app contract does not change: every graph still takes and gives float32, with the same names
and shapes, so the app loads a shrunk bundle and an old one alike.

* ``encoder.onnx``: float16 storage only. Each large float32 weight is stored as float16 behind a
  Cast back to float32, which ONNX Runtime folds away when it loads the graph, so the encoder
  computes in float32 as before (same speed) from weights rounded to float16.
* ``decoder_init.onnx``, ``decoder_step.onnx``: dynamic int8 quantisation of the large MatMul/Gemm
  weights (per output channel, symmetric, 7-bit range), activations quantised per call. This is what makes a
  decoding step fast: the step's 32 MB of float32 weights, read once per word, become 8 MB that stay
  in the processor's cache. The embedding table (a Gather, not a product) is stored as float16.

With ``--data`` the test split is measured before and after (beam 3, BLEU-4 and CIDEr) and both
go into the manifest's ``weights`` section.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from training.errors import UsageError

ENCODER = "encoder.onnx"
DECODERS = ("decoder_init.onnx", "decoder_step.onnx")
WEIGHTS = "float16 encoder, int8-dynamic decoder"
# Smaller tensors (biases, the attention's 512x1 score vector) stay float32: they weigh nothing and
# a per-tensor scale on a single column would cost attention precision for no gain.
MIN_ELEMENTS = 16384
# 7-bit symmetric weights (ONNX Runtime's reduce_range: levels -64..64, per output channel): rounding
# moves a weight by at most half a step, 1/128 of the largest weight of its channel.
ROUNDING = 1 / 128


def rounding_bound(largest: float) -> float:
    """How far shrinking may move a weight of a tensor whose largest magnitude is ``largest``: half a step,
    plus float32's rounding of the scale (0.1%) and of a weight near zero."""
    return largest * ROUNDING * 1.001 + 1e-6


class ShrinkError(UsageError):
    pass


def float16_storage(model, min_elements: int = MIN_ELEMENTS):
    """Store each large float32 initializer as float16 behind a Cast to float32 (in place)."""
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    graph_inputs = {i.name for i in g.input}
    casts, kept = [], []
    for init in g.initializer:
        n = int(np.prod(init.dims)) if init.dims else 1
        if init.data_type != TensorProto.FLOAT or n < min_elements or init.name in graph_inputs:
            kept.append(init)
            continue
        arr = numpy_helper.to_array(init)
        half = numpy_helper.from_array(arr.astype(np.float16), init.name + "__f16")
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT,
                                      name=init.name + "__to_f32"))
    del g.initializer[:]
    g.initializer.extend(kept)
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


def float32_storage(model):
    """The inverse of ``float16_storage`` (in place): each float16 weight back as the float32 weight
    it replaced, under its own name and place, the Casts gone. ``float16_storage`` of the result
    gives the same bytes again, which is how a new machine re-exports a bundle with the very encoder
    that was shipped (the app compares models by the encoder's sha256)."""
    from onnx import numpy_helper

    g = model.graph
    inits = [numpy_helper.from_array(numpy_helper.to_array(i).astype(np.float32), i.name[:-len("__f16")])
             if i.name.endswith("__f16") else i for i in g.initializer]
    del g.initializer[:]
    g.initializer.extend(inits)
    nodes = [n for n in g.node if not (n.op_type == "Cast" and n.name.endswith("__to_f32"))]
    del g.node[:]
    g.node.extend(nodes)
    return model


def restore_encoder(bundle: Path, cache: Path) -> Path:
    """Put a bundle's encoder, as float32, where training exports and caches features with it
    (``CACHE/encoders/<encoder>-<size>.onnx``), so the next export ships it byte for byte.

    Exporting the encoder again on another machine gives weights that differ in the last bit
    (batch-norm folding), hence another sha256; restoring avoids that."""
    import onnx

    from training.encoder import without_trunk_output

    manifest = json.loads((Path(bundle) / "manifest.json").read_text(encoding="utf-8"))
    enc = manifest["encoder"]
    arch = enc["architecture"].removeprefix("efficientnet-")
    shipped = (Path(bundle) / ENCODER).read_bytes()
    model = float32_storage(onnx.load_from_string(shipped))
    if shrunk(manifest) and float16_storage(onnx.load_from_string(model.SerializeToString())).SerializeToString() \
            != shipped:
        raise ShrinkError(f"{bundle}: its encoder does not come back byte for byte; not restored")
    # The plain graph is what training exports; it adds the trunk output again when a run asks for it.
    without_trunk_output(model)
    dst = Path(cache) / "encoders" / f"{arch}-{enc['input_size']}.onnx"
    dst.parent.mkdir(parents=True, exist_ok=True)
    for stale in dst.parent.glob(f"{arch}-{enc['input_size']}-trunk*.*"):  # made from the old plain graph
        stale.unlink()
    tmp = dst.with_suffix(".tmp.onnx")
    onnx.save(model, str(tmp))
    tmp.replace(dst)
    dst.with_suffix(".json").write_text(json.dumps({"grid": enc["grid"], "dim": enc["feature_dim"]}))
    return dst


def quantise_decoder(src: Path, dst: Path) -> None:
    """Dynamic int8 for the MatMul/Gemm weights of one decoder graph, float16 storage for the rest."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(src))
    inits = {i.name: int(np.prod(i.dims)) for i in model.graph.initializer}
    small = [n.name for n in model.graph.node if n.op_type in ("MatMul", "Gemm")
             and not any(inits.get(x, 0) >= MIN_ELEMENTS for x in n.input)]
    root = logging.getLogger()
    level = root.level
    # The quantiser logs a hint about shape pre-processing on the root logger; it does not apply to
    # graphs exported with static shapes but a dynamic batch, so it would only alarm.
    root.setLevel(logging.ERROR)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            q = Path(tmp) / src.name
            # reduce_range (7-bit weights): on x86 processors without VNNI (AVX2, AVX-512 without VNNI),
            # ONNX Runtime multiplies uint8 activations by int8 weights with an instruction that saturates
            # 16-bit sums; full-range weights then moved the first word's probabilities by up to 0.12
            # there (and the confidence the trust rule reads), against 0.01 with VNNI. With 7 bits both
            # kinds of processor give float32's probabilities within 0.01.
            quantize_dynamic(str(src), str(q), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                             op_types_to_quantize=["MatMul", "Gemm"], nodes_to_exclude=small)
            model = onnx.load(str(q))
    finally:
        root.setLevel(level)
    onnx.save(float16_storage(model), str(dst))


def shrunk(manifest: dict) -> bool:
    return isinstance(manifest.get("weights"), dict) and manifest["weights"].get("kind") == WEIGHTS


def shrink_bundle(bundle: Path, out: Path | None = None) -> dict:
    """Write the shrunk bundle to ``out`` (default: replace ``bundle``); return its manifest.

    A bundle already shrunk is copied unchanged (running the step twice is harmless)."""
    import onnx

    from capdesk.model.bundle import open_bundle
    from training.encoder import features_digest
    from training.export import replace_folder, write_manifest

    bundle = Path(bundle)
    out = Path(out) if out else bundle
    b = open_bundle(bundle)
    problems = b.verify()
    if problems:
        raise ShrinkError(f"{bundle}: not a sound bundle: {'; '.join(problems)}")
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    tmp = out.with_name(out.name + ".tmp-shrink")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(bundle, tmp)
    if not shrunk(manifest):
        before = {fn: (bundle / fn).stat().st_size for fn in (ENCODER, *DECODERS)}
        enc = float16_storage(onnx.load(str(bundle / ENCODER)))
        onnx.save(enc, str(tmp / ENCODER))
        if "features_sha256" in manifest["encoder"]:  # an encoder with a trunk output: its features' key
            manifest["encoder"]["features_sha256"] = features_digest(enc)
        for fn in DECODERS:
            quantise_decoder(bundle / fn, tmp / fn)
        manifest["weights"] = {
            "kind": WEIGHTS,
            "encoder": "float16 storage, float32 compute (Cast folded at load)",
            "decoder": "int8 dynamic quantisation of MatMul/Gemm weights (per channel, 7-bit range), float16 "
                       "embedding",
            "bytes_before": before,
            "bytes_after": {fn: (tmp / fn).stat().st_size for fn in (ENCODER, *DECODERS)},
        }
        write_manifest(tmp, manifest)
    replace_folder(tmp, out)
    return manifest


def model_bytes(manifest: dict) -> int:
    """Bytes of the files the app loads (those the manifest lists)."""
    return sum(int(f.get("size", 0)) for f in manifest.get("files", {}).values())


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="capdesk train shrink", description=__doc__.splitlines()[0])
    ap.add_argument("bundle", help="model bundle folder")
    ap.add_argument("--out", help="write the shrunk bundle here instead of replacing BUNDLE")
    ap.add_argument("--data", help="data set with a test split: measure BLEU-4 and CIDEr before and after")
    ap.add_argument("--image-root", default=None, help="where the data set's images are, when not beside the data file")
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--restore-encoder", metavar="CACHE", nargs="?", const="",
                    help="instead: put BUNDLE's encoder, as float32, into the training cache (default: the "
                         "user cache), so that exports made here ship that very encoder")
    ns = ap.parse_args(argv)
    bundle = Path(ns.bundle)
    if ns.restore_encoder is not None:
        from training.train import default_cache_dir

        try:
            dst = restore_encoder(bundle, Path(ns.restore_encoder or default_cache_dir()))
        except (OSError, KeyError, ShrinkError) as exc:
            print(f"capdesk train shrink: error: {exc}", file=sys.stderr)
            return 2
        print(json.dumps({"encoder": str(dst)}))
        return 0
    out = Path(ns.out) if ns.out else bundle
    if not (bundle / "manifest.json").is_file():
        ap.error(f"{bundle}: not a model bundle folder (no manifest.json)")
    already = shrunk(json.loads((bundle / "manifest.json").read_text(encoding="utf-8")))
    before = _quality(bundle, ns) if ns.data and not already else None
    manifest = shrink_bundle(bundle, out)
    if before is not None:
        after = _quality(out, ns)
        manifest["weights"]["quality_test"] = {"beam": ns.beam, "before": before, "after": after}
        from training.export import write_manifest

        write_manifest(out, manifest)
    print(json.dumps({"bundle": str(out), "model_mb": round(model_bytes(manifest) / 1e6, 1),
                      "weights": manifest["weights"]}, indent=2))
    return 0


def _quality(bundle: Path, ns) -> dict:
    from training.evaluate import evaluate_bundle

    res = evaluate_bundle(bundle, Path(ns.data), "test", [ns.beam],
                          image_root=Path(ns.image_root) if ns.image_root else None)
    row = res[f"beam{ns.beam}"]
    return {"images": res["images"], **{k: round(row[k], 4) for k in ("BLEU-4", "CIDEr")}}


if __name__ == "__main__":
    raise SystemExit(main())
