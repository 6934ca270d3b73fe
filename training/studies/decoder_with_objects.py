"""Does the everyday decoder say who and how many better when it is told what the detector saw?

The LSTM-A direction (Yao et al. 2017, attributes fed to the decoder) with the shipped detector's
classes as the attributes: per COCO class its highest calibrated score and how many boxes of it reach
``COUNT_FLOOR`` (one, two, three or more), 320 numbers a photo. They enter the decoder twice, through
zero-initialised layers, so that training starts from the shipped decoder exactly: added to the
initial state's pre-activations, and added inside the deep output layer (a per-photo bias on the
words, where counts and nouns are chosen).

Two arms from the same start, seed, data order and learning rates: ``objects`` (the attributes) and
``control`` (the same layers fed zeros), so that what differs is the information alone; and ``frozen``
(the attributes, with the shipped decoder's own weights kept as they are: only the new layers learn). Both start
from the shipped decoder (read back from its ONNX graphs) on the shipped encoder's own features
(tuned top included, frozen; no mirror images). Judged on val only: greedy BLEU-4 and CIDEr, and
the share of captions that contradict their references in who or how many (``training.who_count``),
by source.

    python training/studies/decoder_with_objects.py ../shared/data/everyday --work /tmp/dwo --epochs 3

Every stage is cached in ``--work`` (detections, features, each arm's epochs), so a run that was
stopped resumes; ``results.json`` there holds the figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
from torch import nn

from capdesk.describe.detector import open_detector
from capdesk.imageio import Preprocess
from capdesk.model.bundle import open_bundle
from training.data import read_any
from training.decoders import decoder_from_bundle
from training.features import build_cache
from training.metrics import score
from training.model import Decoder, DecoderConfig, caption_loss
from training.train import Batches, references
from training.vocab import END, PAD, START, UNK, Vocab
from training.who_count import contradicts

log = logging.getLogger("training")
COUNT_FLOOR = 0.3  # the floor the policy counts boxes from
DETECT_FLOOR = 0.05


def attributes(dets, labels: list[str]) -> np.ndarray:
    """Detections -> [max score per class | one-hot count 1, 2, 3+ per class]."""
    k = len(labels)
    out = np.zeros(4 * k, np.float32)
    index = {name: i for i, name in enumerate(labels)}
    counts = np.zeros(k, np.int64)
    for d in dets:
        i = index[d.label]
        out[i] = max(out[i], d.score)
        counts[i] += d.score >= COUNT_FLOOR
    for i, n in enumerate(counts):
        if n:
            out[k + 3 * i + min(n, 3) - 1] = 1.0
    return out


def detect_all(paths: list[str], work: Path) -> np.ndarray:
    done = work / "attributes.npy"
    if done.exists():
        return np.load(done)
    from PIL import Image

    det = open_detector(threads=1)
    labels = det.labels

    def one(p: str) -> np.ndarray:
        with Image.open(p) as im:
            return attributes(det.detect(im.convert("RGB"), floor=DETECT_FLOOR), labels)

    t0 = time.time()
    with ThreadPoolExecutor(2) as pool:
        rows = list(pool.map(one, paths))
    log.info("detections for %d photos in %.1f min", len(paths), (time.time() - t0) / 60)
    arr = np.stack(rows)
    np.save(work / "attributes.tmp.npy", arr)
    (work / "attributes.tmp.npy").replace(done)
    return arr


class ObjectDecoder(Decoder):
    """The decoder with the detector's attributes added to its initial state and deep output layer."""

    def __init__(self, cfg: DecoderConfig, n_attr: int) -> None:
        super().__init__(cfg)
        H, E = cfg.hidden_dim, cfg.embed_dim
        self.attr_h = nn.Linear(n_attr, H, bias=False)
        self.attr_c = nn.Linear(n_attr, H, bias=False)
        self.attr_o = nn.Linear(n_attr, E, bias=False)
        for lin in (self.attr_h, self.attr_c, self.attr_o):
            nn.init.zeros_(lin.weight)
        self.attrs: torch.Tensor | None = None  # set per batch: [B, n_attr]

    def init(self, feats: torch.Tensor):
        mean = feats.mean(1)
        a = self.attrs
        h = torch.tanh(self.init_h[0](mean) + self.attr_h(a))
        c = torch.tanh(self.init_c[0](mean) + self.attr_c(a))
        return h, c, self.feat_att(feats)

    def _cell(self, word, h, c, feats, alpha_or_loc):
        emb = self.embed(word)
        ctx = torch.bmm(alpha_or_loc.unsqueeze(1), feats).squeeze(1)
        z = torch.sigmoid(self.f_beta(h)) * ctx
        h, c = self.lstm(torch.cat([emb, z], dim=1), (h, c))
        # the attributes are per photo; a beam or a batch row carries its photo's row
        logits = self.L_o(self.drop(torch.tanh(emb + self.L_h(h) + self.L_z(z) + self.attr_o(self.attrs))))
        return logits, h, c


def decode(model: ObjectDecoder, feats: np.ndarray, attrs: np.ndarray, vocab: Vocab, max_len: int) -> list[str]:
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(feats), 128):
            model.attrs = torch.from_numpy(attrs[s:s + 128])
            ids = model.greedy(torch.from_numpy(feats[s:s + 128].astype(np.float32)), max_len + 1, START, END,
                               banned=(PAD, START, UNK)).tolist()
            out += [" ".join(vocab.decode(i)) for i in ids]
    model.train()
    return out


def judge(records, hyps: list[str]) -> dict:
    refs = references(records)
    res = {}
    for group in ("flickr8k", "coco", "all"):
        idx = [i for i, r in enumerate(records) if group == "all" or (r.source or "").startswith(group)]
        if not idx:
            continue
        keys = [str(records[i].image) for i in idx]
        m = score({k: refs[k] for k in keys}, {k: hyps[i] for k, i in zip(keys, idx)})
        bad = sum(bool(contradicts(hyps[i], refs[keys[j]])) for j, i in enumerate(idx))
        res[group] = {"BLEU-4": round(m["BLEU-4"], 4), "CIDEr": round(m.get("CIDEr", float("nan")), 4),
                      "who_many": round(bad / len(idx), 4), "n": len(idx)}
    return res


def run_arm(arm: str, base: Decoder, vocab: Vocab, train_recs, tr_f, tr_a, val_recs, va_f, va_a,
            work: Path, epochs: int, lr: float, attr_lr: float, max_len: int) -> list[dict]:
    done = work / f"{arm}.json"
    if done.exists():
        return json.loads(done.read_text())
    torch.manual_seed(7)
    cfg = DecoderConfig(**{**base.cfg.to_dict(), "encoder_top": ""})
    model = ObjectDecoder(cfg, tr_a.shape[1])
    model.load_state_dict({k: v for k, v in base.state_dict().items() if not k.startswith("top.")}, strict=False)
    if arm == "control":
        tr_a, va_a = np.zeros_like(tr_a), np.zeros_like(va_a)
    new = [p for n, p in model.named_parameters() if n.startswith("attr_")]
    old = [p for n, p in model.named_parameters() if not n.startswith("attr_")]
    if arm == "frozen":  # the shipped decoder as it is: only the new layers learn to use the attributes
        for p in old:
            p.requires_grad_(False)
        opt = torch.optim.Adam([{"params": new, "lr": attr_lr}])
    else:
        opt = torch.optim.Adam([{"params": old, "lr": lr}, {"params": new, "lr": attr_lr}])
    batches = Batches(train_recs, vocab, max_len, 64)
    history = [{"epoch": 0, **judge(val_recs, decode(model, va_f, va_a, vocab, max_len))}]
    log.info("%s epoch 0: %s", arm, history[-1])
    model.train()
    for epoch in range(epochs):
        t0, run = time.time(), None
        for k, b in enumerate(batches.epoch(7000 + epoch)):
            rows, caps = batches.tensors(b)
            model.attrs = torch.from_numpy(tr_a[rows])
            feats = torch.from_numpy(tr_f[rows].astype(np.float32))
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(feats, caps)
            loss, stats = caption_loss({k2: v.float() for k2, v in out.items()}, caps, PAD, 1.0)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            run = stats["ce"] if run is None else 0.98 * run + 0.02 * stats["ce"]
            if k % 200 == 0:
                log.info("%s epoch %d batch %d ce %.3f", arm, epoch + 1, k, run)
        history.append({"epoch": epoch + 1, "train_ce": round(run, 4), "minutes": round((time.time() - t0) / 60, 1),
                        **judge(val_recs, decode(model, va_f, va_a, vocab, max_len))})
        log.info("%s epoch %d: %s", arm, epoch + 1, history[-1])
        torch.save({"model": model.state_dict(), "cfg": cfg.to_dict(), "epoch": epoch + 1},
                   work / f"{arm}_epoch{epoch + 1}.pt")
    done.write_text(json.dumps(history, indent=1))
    return history


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--bundle", default="models/everyday")
    ap.add_argument("--work", default="/tmp/dwo")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--attr-lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--arms", nargs="+", default=["objects", "control"], choices=["objects", "control", "frozen"],
                    help="frozen: the shipped decoder unchanged, only the attribute layers trained")
    ns = ap.parse_args(argv)
    work = Path(ns.work)
    work.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s",
                        handlers=[logging.FileHandler(work / "log.txt"), logging.StreamHandler(sys.stderr)])
    torch.set_num_threads(ns.threads)
    ds = read_any(Path(ns.data))
    ds.ensure_splits()
    train_recs, val_recs = ds.split("train"), ds.split("val")
    b = open_bundle(Path(ns.bundle))
    pre = Preprocess.from_manifest(b.manifest["encoder"])
    cache = build_cache([r.image for r in train_recs + val_recs], b.path / "encoder.onnx", pre, work / "features",
                        "everyday-shipped", flip=False)
    train_recs = [r for r in train_recs if str(r.image) in cache]
    val_recs = [r for r in val_recs if str(r.image) in cache]
    attrs = detect_all([str(r.image) for r in train_recs + val_recs], work)
    tr_a, va_a = attrs[:len(train_recs)], attrs[len(train_recs):]
    tr_f, _ = cache.load_all([str(r.image) for r in train_recs])
    va_f, _ = cache.load_all([str(r.image) for r in val_recs])
    base, itos, manifest = decoder_from_bundle(b.path)
    vocab = Vocab(itos)
    max_len = 22  # training's own (TrainConfig.max_len)
    results = json.loads((work / "results.json").read_text()) if (work / "results.json").exists() else {}
    for arm in ns.arms:
        results[arm] = run_arm(arm, base, vocab, train_recs, tr_f, tr_a, val_recs, va_f, va_a, work,
                               ns.epochs, ns.lr, ns.attr_lr, max_len)
    (work / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
