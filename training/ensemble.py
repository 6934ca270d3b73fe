"""Several decoders trained apart (other seeds, other schedules), decoding as one.

At every word each member attends and steps on its own state; the word distribution is the mean
of the members' probabilities and the attention shown is the mean of theirs. The members' states
travel side by side in the same tensors (``h`` is ``[B, sum of hidden sizes]``), so the exported
``decoder_init.onnx`` / ``decoder_step.onnx`` keep the bundle contract exactly: the app decodes an
ensemble like any model, without knowing it is one.

    capdesk train ensemble RUN1 RUN2 [...] --out RUN     # then: capdesk train release RUN ...

The members must share the vocabulary and the encoder (same data, same ``--encoder``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from torch import nn

from capdesk.model.bundle import BundleError
from training.decoders import Ensemble, decoder_from_bundle, load_checkpoint
from training.errors import UsageError
from training.model import Decoder
from training.vocab import Vocab


def _from_bundle(path: Path) -> list[tuple[Decoder, Vocab, dict]]:
    """A released bundle as members: its decoder rebuilt from the graphs (a shrunk bundle's weights
    read back as float32), with what the manifest recorded of its training in place of a
    checkpoint. An ensemble bundle gives each of its members."""
    model, itos, manifest = decoder_from_bundle(path)
    tr = manifest.get("training", {})
    ck = {"config": tr.get("config", {}), "grid": manifest["encoder"]["grid"], "bundle": str(path),
          "state": {"best_epoch": tr.get("best_epoch"), "best_metrics": tr.get("val_metrics_greedy"),
                    "history": tr.get("history", [])}}
    if tr.get("self_critical"):
        ck["scst"] = tr["self_critical"]
    return _members(model, Vocab(itos), ck, tr.get("ensemble"))


def _members(model: nn.Module, vocab: Vocab, ck: dict, infos: list[dict] | None) -> list[tuple[Decoder, Vocab, dict]]:
    """A decoder as ensemble members: itself, or each member of an ensemble as it was recorded."""
    if not isinstance(model, Ensemble):
        return [(model, vocab, ck)]
    out = []
    for m, info in zip(model.members, infos or [{}] * len(model.members)):
        mck = {**ck, "config": {**ck["config"], "seed": info.get("seed"), "lr_decay": info.get("lr_decay")},
               "state": {"best_epoch": info.get("best_epoch"), "best_metrics": info.get("val_metrics_greedy")}}
        mck.pop("scst", None)
        if info.get("self_critical"):
            mck["scst"] = True
        out.append((m, vocab, mck))
    return out


def _load_member(path: Path) -> list[tuple[Decoder, Vocab, dict]]:
    best = path / "checkpoint_best.pt"
    if best.is_file():  # before a manifest beside it: the checkpoint holds the float32 weights as trained
        model, vocab, ck = load_checkpoint(best)
        return _members(model, vocab, ck, ck["state"].get("members"))
    if (path / "manifest.json").is_file():
        return _from_bundle(path)
    raise UsageError(f"{path}: neither a finished training run (checkpoint_best.pt) nor a model bundle "
                     "(manifest.json)")


def combine(runs: list[Path], out: Path) -> Path:
    """Write an ensemble run: ``out/checkpoint_best.pt`` holding each run's best decoder.

    A member may also be a released model bundle (its folder with ``manifest.json``), so a shipped
    model can join decoders trained since, without its training run."""
    loaded: list[tuple[Decoder, Vocab, dict]] = []
    sources: list[Path] = []
    for r in runs:
        got = _load_member(Path(r))
        loaded += got
        sources += [Path(r)] * len(got)
    runs = sources
    vocab = loaded[0][1]
    for (model, v, ck), run in zip(loaded, runs):
        if v.itos != vocab.itos:
            raise UsageError(f"{run}: its vocabulary differs from {runs[0]}'s; members must share one")
        if model.cfg.attention != "soft":
            raise UsageError(f"{run}: ensembles are of soft-attention decoders")
        if ck.get("grid") != loaded[0][2].get("grid") or ck["config"].get("encoder") != loaded[0][2]["config"].get(
                "encoder"):
            raise UsageError(f"{run}: another encoder than {runs[0]}'s")
    ens = Ensemble([m for m, _, _ in loaded])
    first = loaded[0][2]
    members = [{"run": str(r), **({"bundle": ck["bundle"]} if ck.get("bundle") else {}),
                "best_epoch": ck["state"].get("best_epoch"), "seed": ck["config"].get("seed"),
                "lr_decay": ck["config"].get("lr_decay"), "val_metrics_greedy": ck["state"].get("best_metrics"),
                **({"self_critical": True} if ck.get("scst") else {})}
               for r, (_, _, ck) in zip(runs, loaded)]
    state = {"best_epoch": first["state"].get("best_epoch"), "history": first["state"].get("history", []),
             "members": members}
    out.mkdir(parents=True, exist_ok=True)
    vocab.save(out / "vocab.json")
    ck = {"ensemble": [{"model": m.state_dict(), "model_config": m.cfg.to_dict()} for m, _, _ in loaded],
          "model_config": ens.cfg.to_dict(), "config": first["config"], "vocab": vocab.itos,
          "grid": first.get("grid"), "state": state}
    tmp = out / "checkpoint_best.tmp"
    torch.save(ck, tmp)
    tmp.replace(out / "checkpoint_best.pt")
    (out / "config.json").write_text(json.dumps({"ensemble": [str(r) for r in runs]}, indent=2))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="capdesk train ensemble", description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+",
                    help="finished training runs (each holds checkpoint_best.pt) or released model bundles")
    ap.add_argument("--out", required=True, help="the ensemble's run folder, for export or release")
    ns = ap.parse_args(argv)
    try:
        print(combine([Path(r) for r in ns.runs], Path(ns.out)))
    except (UsageError, BundleError, FileNotFoundError) as exc:  # what cannot be used, in one line
        print(f"capdesk train ensemble: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
