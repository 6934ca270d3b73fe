"""Train the decoder from cached features: Adam, clipping, teacher forcing, length buckets,
early stopping on val BLEU-4, a checkpoint every epoch (and every few minutes), resume.

A run lives in one folder: ``config.json``, ``vocab.json``, ``train.log``,
``checkpoint_last.pt`` (resume point), ``checkpoint_best.pt`` (best val BLEU-4).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from capdesk.imageio import Preprocess
from training import encoder as enc_mod
from training.config import TrainConfig, default_cache_dir
from training.data import Dataset, read_any
from training.errors import UsageError
from training.features import FeatureCache, build_cache
from training.metrics import score
from training.model import Decoder, DecoderConfig, caption_loss
from training.vocab import END, PAD, START, UNK, Vocab

log = logging.getLogger("training")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is now (it may be replaced, e.g. by a test runner)."""

    @property
    def stream(self):
        import sys

        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger("training")
    if not any(isinstance(h, logging.FileHandler) and Path(h.baseFilename) == (out / "train.log").resolve()
               for h in root.handlers):
        fh = logging.FileHandler(out / "train.log", encoding="utf-8")
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        root.addHandler(fh)
    if not any(isinstance(h, _StderrHandler) for h in root.handlers):
        sh = _StderrHandler()
        sh.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(sh)
    root.setLevel(logging.INFO)


def encoder_onnx(cfg: TrainConfig, trunk: bool = False) -> tuple[Path, Preprocess, int, int]:
    """Export (once) the encoder graph the features and the app use; returns its facts.

    ``trunk``: the same graph with trunk outputs (``--tune-encoder-top``): the last block's input,
    "trunk", and with ``--encoder-top-blocks N`` also the input of the last N, "trunkN" (so that
    decoders trained on the one-block trunk still decode from this encoder's pass). A file of its
    own, so that the plain graph and the feature caches keyed on its digest stay."""
    if cfg.encoder_file:
        path = Path(cfg.encoder_file)
        meta = json.loads(path.with_suffix(".json").read_text())
        return path, Preprocess(meta["input_size"], tuple(meta["mean"]), tuple(meta["std"])), meta["grid"], meta["dim"]
    size = cfg.image_size or enc_mod.VARIANTS[cfg.encoder]
    cache = Path(cfg.cache or default_cache_dir())
    suffix = f"-{enc_mod.trunk_name(cfg.encoder_top_blocks)}" if trunk else ""
    path = cache / "encoders" / f"{cfg.encoder}-{size}{suffix}.onnx"
    meta_path = path.with_suffix(".json")
    if trunk and not (path.exists() and meta_path.exists()):
        import onnx

        plain, _, _, _ = encoder_onnx(cfg)
        tmp = path.with_suffix(".tmp.onnx")
        onnx.save(enc_mod.with_trunk_output(onnx.load(str(plain)), (1, cfg.encoder_top_blocks)), str(tmp))
        tmp.replace(path)
        meta_path.write_text(plain.with_suffix(".json").read_text())
    if not (path.exists() and meta_path.exists()):
        path.parent.mkdir(parents=True, exist_ok=True)
        net = enc_mod.GridEncoder(cfg.encoder, size)
        tmp = path.with_suffix(".tmp.onnx")
        enc_mod.export_encoder_onnx(net, tmp)
        tmp.replace(path)
        meta_path.write_text(json.dumps({"grid": net.grid_size(), "dim": net.feature_dim}))
    meta = json.loads(meta_path.read_text())
    return path, Preprocess(size, enc_mod.MEAN, enc_mod.STD), meta["grid"], meta["dim"]


def prepare(cfg: TrainConfig, dataset: Dataset | None = None) -> tuple[Dataset, FeatureCache]:
    ds = dataset or read_any(Path(cfg.data), Path(cfg.image_root) if cfg.image_root else None)
    ds.ensure_splits(val_fraction=cfg.val_fraction, seed=cfg.seed)
    for p in ds.problems[:20]:
        log.warning("skipped: %s", p)
    if len(ds.problems) > 20:
        log.warning("... and %d more problems", len(ds.problems) - 20)
    onnx_path, pre, _, _ = encoder_onnx(cfg)
    cache = build_cache([r.image for r in ds.records], onnx_path, pre,
                        Path(cfg.cache or default_cache_dir()), ds.name, flip=cfg.flip)
    for path, why in cache.failed.items():
        log.warning("unreadable image skipped: %s: %s", path, why)
    ds.records = [r for r in ds.records if str(r.image) in cache]
    return ds, cache


def trunk_cache(cfg: TrainConfig, ds: Dataset) -> FeatureCache:
    """The encoder's trunk (the input of the blocks the top tunes) for every image of ``ds``: what a
    decoder that tunes the encoder's top trains on."""
    onnx_path, pre, _, _ = encoder_onnx(cfg, trunk=True)
    name = enc_mod.trunk_name(cfg.encoder_top_blocks)
    return build_cache([r.image for r in ds.records], onnx_path, pre, Path(cfg.cache or default_cache_dir()),
                       f"{ds.name}-{name}", flip=cfg.flip, output=name)


class Batches:
    """Caption samples grouped into batches of similar length (little padding)."""

    def __init__(self, records, vocab: Vocab, max_len: int, batch_size: int) -> None:
        self.images = [str(r.image) for r in records]
        self.samples: list[tuple[int, list[int]]] = [
            (i, vocab.encode(cap, max_len)) for i, r in enumerate(records) for cap in r.captions
        ]
        self.batch_size = batch_size

    def epoch(self, seed: int) -> list[list[int]]:
        rng = random.Random(seed)
        order = list(range(len(self.samples)))
        rng.shuffle(order)
        order.sort(key=lambda k: len(self.samples[k][1]))  # stable: shuffled within a length
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        rng.shuffle(batches)
        return batches

    def tensors(self, batch: list[int]) -> tuple[np.ndarray, torch.Tensor]:
        caps = [self.samples[k][1] for k in batch]
        T = max(len(c) for c in caps)
        arr = np.full((len(caps), T), PAD, dtype=np.int64)
        for j, c in enumerate(caps):
            arr[j, :len(c)] = c
        return np.array([self.samples[k][0] for k in batch]), torch.from_numpy(arr)


def references(records) -> dict[str, list[str]]:
    return {str(r.image): [" ".join(c) for c in r.captions] for r in records}


def validate(model: Decoder, feats: np.ndarray, records, vocab: Vocab, max_len: int,
             device: torch.device, batch: int = 128) -> dict[str, float]:
    model.eval()
    hyps = {}
    for s in range(0, len(records), batch):
        f = torch.from_numpy(feats[s:s + batch].astype(np.float32)).to(device)
        out = model.greedy(f, max_len + 1, START, END, banned=(PAD, START, UNK)).cpu().tolist()
        for r, ids in zip(records[s:s + batch], out):
            hyps[str(r.image)] = " ".join(vocab.decode(ids))
    model.train()
    return score(references(records), hyps)


def start_run(out: Path, threads: int, seed: int) -> torch.device:
    """What every training stage does first: its log, threads, denormals and seeds; the device."""
    setup_logging(out)
    if threads:
        torch.set_num_threads(threads)
    # Peaked attention weights and their gradients underflow into denormal numbers, which the CPU
    # handles many times slower; flushed to zero they change nothing measurable.
    torch.set_flush_denormal(True)
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resume(last: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, device: torch.device,
           ema: WeightAverage | None = None) -> dict | None:
    """Load ``checkpoint_last.pt`` into the model and optimiser; its state, or None to start afresh."""
    if not last.exists():
        return None
    ck = torch.load(last, map_location=device, weights_only=False)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    if ema is not None and "ema" in ck:
        ema.load_state_dict(ck["ema"])
    torch.set_rng_state(ck["rng"])
    state = ck["state"]
    log.info("resumed from epoch %d step %d (best val BLEU-4 %.4f)", state["epoch"] + 1, state["step"], state["best"])
    return state


def save_checkpoint(path: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, state: dict, **facts) -> None:
    """Write a run checkpoint atomically: weights, optimiser, state and RNG, plus ``facts`` (config,
    vocabulary, ...) that export and resume read back."""
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                "rng": torch.get_rng_state(), **facts}, tmp)
    tmp.replace(path)


class WeightAverage:
    """An exponential moving average of a model's weights, swapped in for validation and export.

    Bias-corrected as Adam's moments are: the average starts from nothing rather than from the
    random initial weights, which would otherwise linger in it for thousands of steps."""

    def __init__(self, model: torch.nn.Module, decay: float) -> None:
        self.model, self.decay, self.steps = model, decay, 0
        self.shadow = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self) -> None:
        self.steps += 1
        for k, v in self.model.state_dict().items():
            if v.dtype.is_floating_point:
                self.shadow[k].lerp_(v, 1.0 - self.decay)
            else:
                self.shadow[k].copy_(v)

    def averaged(self) -> dict[str, torch.Tensor]:
        if not self.steps:  # nothing averaged yet: the weights themselves
            return {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        correction = 1.0 - self.decay ** self.steps
        return {k: v / correction if v.dtype.is_floating_point else v.clone() for k, v in self.shadow.items()}

    def state_dict(self) -> dict:
        return {"shadow": self.shadow, "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        self.shadow = {k: v.detach().clone() for k, v in state["shadow"].items()}
        self.steps = int(state["steps"])

    @contextlib.contextmanager
    def swapped_in(self):
        """The averaged weights in the model for the block; its own weights back afterwards."""
        own = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self.model.load_state_dict(self.averaged())
        try:
            yield self.model
        finally:
            self.model.load_state_dict(own)


class Cancelled(Exception):
    """Training was stopped on request; checkpoint_last.pt lets the same run resume."""


def train(cfg: TrainConfig, dataset: Dataset | None = None, vocab: Vocab | None = None,
          init_state: dict | None = None, progress: bool = True,
          on_step=None, should_stop=None) -> Path:
    """Train (or resume) a run in ``cfg.out``; returns the folder. Best weights: checkpoint_best.pt.

    ``on_step(epoch, step, steps, epochs)`` reports progress; ``should_stop()`` asks to stop
    (a checkpoint is written, then ``Cancelled`` is raised).
    """
    from tqdm import tqdm

    out = Path(cfg.out)
    device = start_run(out, cfg.threads, cfg.seed)
    ds, cache = prepare(cfg, dataset)
    train_recs, val_recs = ds.split("train"), ds.split("val")
    if not train_recs:
        raise UsageError("no training images left after skipping unreadable ones")
    if not val_recs:
        raise UsageError("no validation images: the data set needs at least two readable images")
    if cfg.val_limit:
        val_recs = val_recs[:cfg.val_limit]
    vocab_path = out / "vocab.json"
    if cfg.init_from and init_state is None:
        base = torch.load(cfg.init_from, map_location="cpu", weights_only=False)
        if "ensemble" in base:
            raise UsageError(f"{cfg.init_from}: an ensemble cannot be a starting point")
        init_state, vocab = base["model"], Vocab(base["vocab"])
    if vocab is None:
        vocab = Vocab.load(vocab_path) if vocab_path.exists() else Vocab.build(
            (c for r in train_recs for c in r.captions), cfg.min_count)
    vocab.save(vocab_path)
    log.info("data: %s; vocabulary %d words; device %s", json.dumps(ds.summary()), len(vocab), device)
    (out / "config.json").write_text(json.dumps(asdict(cfg), indent=2))

    _, _, grid, dim = encoder_onnx(cfg)
    mcfg = DecoderConfig(len(vocab), dim, cfg.embed_dim, cfg.hidden_dim, cfg.attention_dim,
                         cfg.dropout, cfg.feature_dropout, cfg.attention, cfg.refine_layers, cfg.refine_dim,
                         cfg.encoder if cfg.tune_encoder_top else "", cfg.encoder_top_blocks)
    torch.manual_seed(cfg.seed)  # again: exporting the encoder above may or may not have drawn numbers
    model = Decoder(mcfg).to(device)
    if init_state is not None:
        load_start(model, init_state, cfg.init_from or "the base model")
    top = [p for n, p in model.named_parameters() if n.startswith("top.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("top.")]
    opt = torch.optim.Adam([{"params": rest, "lr": cfg.lr}] +
                           ([{"params": top, "lr": cfg.encoder_lr}] if top else []))
    ema = WeightAverage(model, cfg.ema) if cfg.ema > 0 else None

    if cfg.tune_encoder_top:
        cache = trunk_cache(cfg, ds)
    tr_feats, tr_flip = cache.load_all([str(r.image) for r in train_recs])
    va_feats, _ = cache.load_all([str(r.image) for r in val_recs])
    batches = Batches(train_recs, vocab, cfg.max_len, cfg.batch_size)

    state = {"epoch": 0, "step": 0, "best": -1.0, "bad_epochs": 0, "history": [], "hard": {},
             "global_step": 0}
    last = out / "checkpoint_last.pt"
    state = resume(last, model, opt, device, ema) or state

    def save(path: Path) -> None:
        facts = dict(config=asdict(cfg), model_config=mcfg.to_dict(), vocab=vocab.itos, grid=grid)
        if ema is None:
            save_checkpoint(path, model, opt, state, **facts)
        elif path == last:  # the resume point: the model's own weights and the average
            save_checkpoint(path, model, opt, state, ema=ema.state_dict(), **facts)
        else:  # what export reads: the averaged weights
            with ema.swapped_in():
                save_checkpoint(path, model, opt, state, **facts)

    if state["global_step"] == 0 and state["best"] < 0 and init_state is not None:
        base = validate(model, va_feats, val_recs, vocab, cfg.max_len, device)
        state["before"] = base
        log.info("before training: val %s", _fmt(base))

    model.train()
    stop = bool(state.get("stopped"))
    while state["epoch"] < cfg.epochs and not stop:
        epoch = state["epoch"]
        order = batches.epoch(cfg.seed * 1000 + epoch)
        t0, last_save = time.time(), time.time()
        bar = tqdm(total=len(order), initial=state["step"], desc=f"epoch {epoch + 1}/{cfg.epochs}",
                   unit="batch", disable=not progress, mininterval=2)
        run_loss = None
        for k in range(state["step"], len(order)):
            rows, caps = batches.tensors(order[k])
            rng = np.random.default_rng((cfg.seed, epoch, k))
            f = tr_feats[rows]
            if tr_flip is not None:
                use_flip = rng.random(len(rows)) < 0.5
                f = np.where(use_flip[:, None, None], tr_flip[rows], f)
            feats = torch.from_numpy(f.astype(np.float32)).to(device)
            caps = caps.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.amp):
                out_d = model(feats, caps)
            out_d = {k: v.float() for k, v in out_d.items()}
            loss, stats = caption_loss(out_d, caps, PAD, cfg.ds_lambda, state["hard"], cfg.entropy_weight,
                                       label_smoothing=cfg.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            opt.step()
            if ema is not None:
                ema.update()
            state["step"] = k + 1
            state["global_step"] += 1
            run_loss = stats["ce"] if run_loss is None else 0.98 * run_loss + 0.02 * stats["ce"]
            bar.set_postfix(ce=f"{run_loss:.3f}", refresh=False)
            bar.update(1)
            if time.time() - last_save > cfg.ckpt_minutes * 60:
                save(last)
                last_save = time.time()
            if on_step is not None:
                on_step(epoch, k + 1, len(order), cfg.epochs)
            if should_stop is not None and should_stop():
                save(last)
                log.info("stopped on request at epoch %d step %d; run again to resume", epoch + 1, k + 1)
                raise Cancelled()
            if cfg.max_steps and state["global_step"] >= cfg.max_steps:
                stop = True
                break
        bar.close()
        minutes = (time.time() - t0) / 60
        with ema.swapped_in() if ema is not None else contextlib.nullcontext(model) as judged:
            metrics = validate(judged, va_feats, val_recs, vocab, cfg.max_len, device)
        state["history"].append({"epoch": epoch + 1, "train_ce": run_loss, "minutes": round(minutes, 2),
                                 "lr": opt.param_groups[0]["lr"], **{f"val_{k}": v for k, v in metrics.items()}})
        log.info("epoch %d: train ce %.3f, %.1f min; val %s", epoch + 1, run_loss or math.nan,
                 minutes, _fmt(metrics))
        state["epoch"] = epoch + 1
        state["step"] = 0
        if cfg.keep_epochs:
            save(out / f"checkpoint_epoch{epoch + 1}.pt")
        if metrics["BLEU-4"] > state["best"]:
            state["best"] = metrics["BLEU-4"]
            state["best_epoch"] = epoch + 1
            state["best_metrics"] = metrics
            state["bad_epochs"] = 0
            save(out / "checkpoint_best.pt")
        else:
            state["bad_epochs"] += 1
            for g in opt.param_groups:
                g["lr"] *= cfg.lr_decay
            if state["bad_epochs"] >= cfg.patience:
                log.info("early stop: val BLEU-4 has not improved for %d epochs", cfg.patience)
                stop = True
                state["stopped"] = True
        save(last)
    log.info("best val BLEU-4 %.4f at epoch %s", state["best"], state.get("best_epoch"))
    return out


def load_start(model: Decoder, state: dict, origin: str) -> None:
    """Start ``model`` from ``state``; a tuned encoder top missing there starts as the pretrained one."""
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # sizes that differ
        raise UsageError(f"{origin}: its decoder does not fit these settings ({str(exc).splitlines()[-1].strip()})"
                         ) from None
    wrong = unexpected + [k for k in missing if not k.startswith("top.")]
    if wrong:
        raise UsageError(f"{origin}: its decoder does not fit these settings ({', '.join(wrong[:5])})")


def _fmt(m: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.4f}" for k, v in m.items())
