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
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from training.model import Decoder, DecoderConfig


@dataclass
class EnsembleConfig:
    """What the manifest's ``decoder`` section says of an ensemble: the sizes of the joint state
    (what the graphs take) and each member's own configuration."""

    vocab_size: int
    feature_dim: int
    embed_dim: int
    hidden_dim: int  # the joint state: the members' hidden sizes added
    attention_dim: int  # the joint projected features: the members' attention sizes added
    dropout: float
    attention: str = "soft"
    members: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class Ensemble(nn.Module):
    def __init__(self, members: list[Decoder]) -> None:
        super().__init__()
        if len(members) < 2:
            raise ValueError("an ensemble needs at least two decoders")
        first = members[0].cfg
        for m in members[1:]:
            if (m.cfg.vocab_size, m.cfg.feature_dim) != (first.vocab_size, first.feature_dim):
                raise ValueError("ensemble members differ in vocabulary or feature size")
        self.members = nn.ModuleList(members)
        self._h = [m.cfg.hidden_dim for m in members]
        self._a = [m.cfg.attention_dim for m in members]
        self.cfg = EnsembleConfig(first.vocab_size, first.feature_dim, first.embed_dim, sum(self._h), sum(self._a),
                                  first.dropout, "soft", [m.cfg.to_dict() for m in members])

    def init(self, feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        outs = [m.init(feats) for m in self.members]
        return (torch.cat([o[0] for o in outs], 1), torch.cat([o[1] for o in outs], 1),
                torch.cat([o[2] for o in outs], 2))

    def step(self, word: torch.Tensor, h: torch.Tensor, c: torch.Tensor, feats: torch.Tensor,
             proj: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        hs, cs = torch.split(h, self._h, 1), torch.split(c, self._h, 1)
        ps = torch.split(proj, self._a, 2)
        outs = [m.step(word, hi, ci, feats, pi) for m, hi, ci, pi in zip(self.members, hs, cs, ps)]
        # The mean of the probabilities, in log space: log((p_1 + ... + p_n) / n).
        logp = torch.logsumexp(torch.stack([o[0] for o in outs]), 0) - math.log(len(outs))
        return (logp, torch.cat([o[1] for o in outs], 1), torch.cat([o[2] for o in outs], 1),
                torch.stack([o[3] for o in outs]).mean(0))

    greedy = Decoder.greedy


def from_checkpoint(ck: dict) -> Ensemble:
    members = []
    for m in ck["ensemble"]:
        d = Decoder(DecoderConfig(**m["model_config"]))
        d.load_state_dict(m["model"])
        members.append(d)
    ens = Ensemble(members)
    ens.eval()
    return ens


def combine(runs: list[Path], out: Path) -> Path:
    """Write an ensemble run: ``out/checkpoint_best.pt`` holding each run's best decoder."""
    from training.train import load_checkpoint

    loaded = [load_checkpoint(Path(r) / "checkpoint_best.pt") for r in runs]
    vocab = loaded[0][1]
    for (model, v, ck), run in zip(loaded, runs):
        if v.itos != vocab.itos:
            raise ValueError(f"{run}: its vocabulary differs from {runs[0]}'s; members must share one")
        if model.cfg.attention != "soft":
            raise ValueError(f"{run}: ensembles are of soft-attention decoders")
        if ck.get("grid") != loaded[0][2].get("grid") or ck["config"].get("encoder") != loaded[0][2]["config"].get(
                "encoder"):
            raise ValueError(f"{run}: another encoder than {runs[0]}'s")
    ens = Ensemble([m for m, _, _ in loaded])
    first = loaded[0][2]
    members = [{"run": str(r), "best_epoch": ck["state"].get("best_epoch"), "seed": ck["config"].get("seed"),
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
    ap.add_argument("runs", nargs="+", help="finished training runs (each holds checkpoint_best.pt)")
    ap.add_argument("--out", required=True, help="the ensemble's run folder, for export or release")
    ns = ap.parse_args(argv)
    try:
        print(combine([Path(r) for r in ns.runs], Path(ns.out)))
    except (ValueError, FileNotFoundError) as exc:
        print(f"capdesk train ensemble: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
