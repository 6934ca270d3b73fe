"""Teach an installed model the user's own pictures: start from its decoder, add the user's
new words, train on their images and captions (frozen encoder, cached features), and
install the result as a new bundle where the app finds it.

    capdesk train finetune --data PATH [--base NAME] --out NAME [--epochs N] [--install auto|named|never]

Running the same command again after an interruption resumes it. Before it is used, the new model
proves itself against its base (``training.proving``): only then is it routed to automatically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import torch

from capdesk.model.bundle import BundleError, resolve, user_models_dir
from capdesk.training_hint import MIN_TEACH_PICTURES
from training.data import Dataset, read_any
from training.decoders import Ensemble, decoder_from_bundle
from training.errors import UsageError
from training.export import export_run, write_manifest
from training.model import Decoder, DecoderConfig
from training.proving import MIN_HELDOUT, adopt_base_heads, move_bundle, prove
from training.train import TrainConfig, default_cache_dir, setup_logging, train
from training.vocab import Vocab

log = logging.getLogger("training")
MIN_WORD_COUNT = 2  # a new word is learnt from two captions at least: from one it is noise
MIN_IMAGES = MIN_TEACH_PICTURES  # below this a model learns the captions by heart, not the pictures
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# auto: routed to automatically only when it proved itself (else used only when named); named: used
# only when named with --model; never: measured, and kept in the work folder, not installed.
INSTALL_MODES = ("auto", "named", "never")


class FinetuneError(UsageError):
    pass


def grow_vocabulary(model: Decoder, old: int, new: int) -> Decoder:
    """The same decoder with room for ``new - old`` more words; what it knew is kept."""
    cfg = DecoderConfig(**{**model.cfg.to_dict(), "vocab_size": new})
    grown = Decoder(cfg)
    state = grown.state_dict()
    for k, v in model.state_dict().items():
        if k in ("embed.weight", "L_o.weight"):
            state[k][:old] = v
            if k == "embed.weight":  # new words start near the mean of the known ones
                state[k][old:] = v.mean(0) + 0.01 * torch.randn(new - old, v.shape[1])
        elif k == "L_o.bias":
            state[k][:old] = v
            state[k][old:] = v.min()  # new words start unlikely, and are learnt from the data
        else:
            state[k] = v
    grown.load_state_dict(state)
    return grown


# Chosen on held-out data of the user's case (300 aerial photos, 45 held out): lr 5e-4 and up to 30
# epochs gave held-out BLEU-4 0.240 / CIDEr 1.25, against 0.210 / 1.18 with 2e-4 and 15 epochs.
DEFAULT_LR = 5e-4
DEFAULT_EPOCHS = 30


def _job_key(base_manifest: dict, ds: Dataset, lr: float, val_fraction: float) -> str:
    """What a fine-tune learns from: the base's files, the pictures and their captions, the settings."""
    h = hashlib.sha256(json.dumps({"base": base_manifest.get("files", {}), "lr": lr, "val": val_fraction},
                                  sort_keys=True).encode())
    for r in sorted(ds.records, key=lambda r: str(r.image)):
        h.update(str(r.image).encode("utf-8", "surrogateescape"))
        h.update(json.dumps(r.captions).encode())
    return h.hexdigest()[:20]


def _claim_work_folder(work: Path, key: str) -> bool:
    """Keep ``work`` for resuming only if it holds this very job; else clear it (it holds only this
    program's own checkpoints). True when an earlier, different job was cleared."""
    mark = work / "job.json"
    cleared = False
    if work.exists():
        try:
            same = json.loads(mark.read_text(encoding="utf-8")).get("key") == key
        except (OSError, ValueError):
            same = False
        if not same:
            # The earlier job's log file goes with its folder: its handler must not outlive it.
            logger = logging.getLogger("training")
            for h in list(logger.handlers):
                if isinstance(h, logging.FileHandler) and Path(h.baseFilename).parent == work.resolve():
                    logger.removeHandler(h)
                    h.close()
            shutil.rmtree(work)
            cleared = True
    work.mkdir(parents=True, exist_ok=True)
    mark.write_text(json.dumps({"key": key}), encoding="utf-8")
    return cleared


def finetune(data: Path, out_name: str, base: str | None = None, epochs: int = DEFAULT_EPOCHS,
             lr: float = DEFAULT_LR,
             val_fraction: float = 0.15, min_images: int = MIN_IMAGES, work: Path | None = None,
             models_dir: Path | None = None, cache: Path | None = None, image_root: Path | None = None,
             progress: bool = True, on_step: Callable | None = None,
             should_stop: Callable[[], bool] | None = None, install: str = "auto") -> dict:
    """Fine-tune ``base`` on ``data``, prove it against ``base`` and install it as ``install`` says;
    returns the new manifest (its ``finetune`` section holds the verdict, and ``installed_at``
    where the bundle is). Raises FinetuneError on bad input."""
    if install not in INSTALL_MODES:
        raise FinetuneError(f"--install must be one of {', '.join(INSTALL_MODES)}, not {install!r}")
    if not NAME_RE.match(out_name):
        raise FinetuneError(f"{out_name!r}: a model name is letters, digits, '.', '_' or '-' (up to 64)")
    try:
        base_bundle = resolve(base)
    except BundleError as exc:
        raise FinetuneError(str(exc)) from None
    if base_bundle.name == out_name:
        raise FinetuneError(f"the new model needs a name other than its base's ({out_name!r})")
    dest = (models_dir or user_models_dir()) / out_name
    work = work or Path(default_cache_dir()).parent / "finetune" / out_name
    cache = cache or Path(default_cache_dir())
    try:
        ds: Dataset = read_any(Path(data), image_root)
    except (OSError, ValueError) as exc:
        raise FinetuneError(str(exc)) from None
    fresh = _claim_work_folder(work, _job_key(base_bundle.manifest, ds, lr, val_fraction))
    setup_logging(work)
    if fresh:
        log.info("a fine-tune named %r that learnt from other pictures or settings was set aside; starting afresh",
                 out_name)
    for p in ds.problems:
        log.warning("skipped: %s", p)
    n = len(ds.records)
    if n < min_images:
        raise FinetuneError(f"{data}: only {n} image(s) with captions; at least {min_images} are needed to learn "
                            "from (a few hundred work well)" + (f"; {len(ds.problems)} skipped, see above"
                                                               if ds.problems else ""))
    model, itos, manifest = decoder_from_bundle(base_bundle.path)
    if isinstance(model, Ensemble):
        # An ensemble base: its first member learns the user's pictures. One decoder learns from a few
        # hundred pictures as well as several would, and decodes in half the time.
        model = model.members[0]
        manifest = {**manifest, "decoder": model.cfg.to_dict()}
        log.info("the base %r is an ensemble of %d decoders; fine-tuning its first", base_bundle.name,
                 len(manifest.get("training", {}).get("ensemble", [])) or 2)
    enc = manifest["encoder"]
    # The base's own encoder graph: features, the new bundle and the base are then exactly comparable.
    enc_file = cache / "encoders" / f"base-{manifest['files']['encoder.onnx']['sha256'][:16]}.onnx"
    if not enc_file.exists():
        enc_file.parent.mkdir(parents=True, exist_ok=True)
        enc_file.write_bytes(base_bundle.read_verified("encoder.onnx"))
        enc_file.with_suffix(".json").write_text(json.dumps({
            "input_size": enc["input_size"], "mean": enc["mean"], "std": enc["std"], "grid": enc["grid"],
            "dim": enc["feature_dim"]}))
    dec = manifest["decoder"]
    cfg = TrainConfig(
        data=str(data), image_root=str(image_root or ""), out=str(work), cache=str(cache),
        encoder=enc["architecture"].split("-")[-1], image_size=enc["input_size"], encoder_file=str(enc_file),
        max_len=int(manifest.get("max_caption_length", 24)) - 2, embed_dim=dec["embed_dim"],
        hidden_dim=dec["hidden_dim"], attention_dim=dec["attention_dim"], dropout=dec.get("dropout", 0.5),
        attention=dec.get("attention", "soft"), refine_layers=dec.get("refine_layers", 0),
        refine_dim=dec.get("refine_dim", 512), tune_encoder_top=bool(dec.get("encoder_top")),
        encoder_top_blocks=int(dec.get("encoder_top_blocks", 1)),
        # a base with a tuned encoder top tunes it too, more gently than the decoder (a quarter of its
        # rate: a choice, not tuned; the demo's figures in docs/training.md are with it)
        encoder_lr=lr / 4,
        lr=lr, epochs=epochs, patience=3, val_fraction=val_fraction,
        batch_size=32, min_count=MIN_WORD_COUNT)
    ds.ensure_splits(val_fraction=val_fraction, seed=cfg.seed, min_val=MIN_HELDOUT)
    vocab = Vocab(itos)
    rare: dict[str, int] = {}
    vocab_file = work / "vocab.json"
    if vocab_file.exists():  # resuming: the vocabulary was fixed by the first run
        vocab = Vocab.load(vocab_file)
        added = vocab.itos[len(itos):]
    else:
        rare = vocab.too_rare((c for r in ds.split("train") for c in r.captions), min_count=MIN_WORD_COUNT)
        added = vocab.extend((c for r in ds.split("train") for c in r.captions), min_count=MIN_WORD_COUNT)
    log.info("fine-tuning %s on %d images (%s); %d new words: %s", base_bundle.name, n,
             json.dumps(ds.summary()), len(added), ", ".join(added[:30]) + (" ..." if len(added) > 30 else ""))
    grown = grow_vocabulary(model, len(itos), len(vocab)) if added else model
    train(cfg, dataset=ds, vocab=vocab, init_state=grown.state_dict(), progress=progress, on_step=on_step,
          should_stop=should_stop)
    ck = torch.load(work / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    before, after = ck["state"].get("before", {}), ck["state"].get("best_metrics", {})
    info = {
        "description": f"{base_bundle.name} fine-tuned on {n} of the user's images ({Path(data).name})",
        "domain": f"pictures like those in {Path(data).name}",
        "base_model": base_bundle.name,
        "licence": manifest.get("licence", {}),
        "metrics": {"heldout": {"split": "val (held out from the user's data)", "images": len(ds.split("val")),
                                "decoding": "greedy", "before": before, "after": after}},
        "training": {"data": ds.summary(), "new_words": added, "too_rare": rare, "min_word_count": MIN_WORD_COUNT},
    }
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Measured where discovery cannot see it (a '.'-name), so it is never used before its verdict.
    staging = dest.parent / f".finetune-{out_name}"
    export_run(work, staging, out_name, info)
    adopted = adopt_base_heads(staging, base_bundle)
    if adopted:
        log.info("copied %s's %s into the new model (same encoder features)", base_bundle.name, ", ".join(adopted))
    verdict = prove(staging, base_bundle, ds.split("train"), ds.split("val"))
    verdict.update(install=install, automatic=verdict["proved"] and install == "auto", adopted=adopted)
    verdict["verdict"] = f"{verdict['verdict']}: {installed_words(verdict, out_name)}"
    m = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
    m["finetune"] = verdict
    write_manifest(staging, m)
    where = work / "bundle" if install == "never" else dest
    move_bundle(staging, where)
    log.info("verdict: %s", verdict["verdict"])
    return {**m, "installed_at": str(where) if install != "never" else None, "kept_at": str(where)}


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    # The docstring's first paragraph, whole (its first line alone stops mid-sentence).
    ap = argparse.ArgumentParser(prog="capdesk train finetune",
                                 description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--data", required=True, help="your images: a folder with .txt captions beside them, a CSV "
                                                   "of image,caption, a COCO or Karpathy JSON")
    ap.add_argument("--base", default=None, help="installed model to start from (default: everyday)")
    ap.add_argument("--out", required=True, help="name of the new model")
    ap.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS, help="at most this many (stops early)")
    ap.add_argument("--lr", type=float, default=DEFAULT_LR, help=f"learning rate (default {DEFAULT_LR:g})")
    ap.add_argument("--val-fraction", type=float, default=0.15,
                    help=f"part held out to measure (default 0.15, never fewer than {MIN_HELDOUT} pictures)")
    ap.add_argument("--image-root", default=None,
                    help="where the data set's images are, when not beside the data file")
    ap.add_argument("--models-dir", default=None, help="where to install the new model (default: your model folder)")
    ap.add_argument("--install", choices=INSTALL_MODES, default="auto",
                    help="auto (default): used automatically only if it proves better than its base on your "
                         "held-out pictures and no worse on others, else only when named with --model; "
                         "named: only when named; never: measure it and keep it in the work folder")
    ns = ap.parse_args(argv)
    try:
        m = finetune(Path(ns.data), ns.out, ns.base, ns.epochs, ns.lr, ns.val_fraction,
                     image_root=Path(ns.image_root) if ns.image_root else None,
                     models_dir=Path(ns.models_dir) if ns.models_dir else None, install=ns.install)
    except FinetuneError as exc:
        print(f"capdesk train finetune: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(m)))
    return 0


def installed_words(ft: dict, name: str) -> str:
    """How the new model was installed, in the words the command line and the window both say."""
    if ft["install"] == "never":
        return "not installed (kept in the work folder)"
    if ft["automatic"]:
        return f"installed as {name!r} for automatic use (CapDesk gives it the pictures like yours)"
    if ft["proved"]:
        return f"installed as {name!r} to be used only when chosen (as asked), not for automatic use"
    return f"not installed for automatic use; installed as {name!r} to be used only when chosen"


NEXT_STEPS = {
    "none": "nothing to do; {use}, and {remove}",
    "more_pictures": "add more of your pictures with captions (a few hundred work well) and teach again with the "
                     "same name; meanwhile {use}, and {remove}",
    "fewer_rounds": "teach again with fewer rounds (--epochs 10) or more pictures; meanwhile {use}, and {remove}",
}


def report_lines(m: dict) -> list[str]:
    """What a fine-tune says when it ends, in plain words (the command line; the window's Teach shows the
    manifest's same fields): the verdict, the figures that decided it and what to do next."""
    ft, name = m["finetune"], m["name"]
    lines = [f"verdict: {ft['verdict']}"]
    if ft.get("deciding"):
        lines.append(f"why, {ft['where']}: " + "; ".join(ft["deciding"]))
    if ft["install"] == "never":
        lines.append(f"kept at {m['kept_at']}: capdesk models import {m['kept_at']} installs it")
    else:
        step = NEXT_STEPS.get(ft.get("next", "none"), NEXT_STEPS["none"])
        lines.append("next: " + step.format(use=f"capdesk caption --model {name} PHOTO uses it",
                                            remove=f"capdesk models remove {name} takes it away"))
    tr = m.get("training") or {}
    if tr.get("too_rare"):
        rare = tr["too_rare"]
        shown = ", ".join(f"{w} ({c})" for w, c in list(rare.items())[:20]) + (" ..." if len(rare) > 20 else "")
        lines.append(f"words not learnt, seen in too few of your captions (each needs {tr.get('min_word_count', 2)}): "
                     f"{shown}")
    return lines
