"""Decoders from where they are kept: a run's checkpoint, or a released bundle's ONNX graphs; and
the ``Ensemble`` of several decoders that decodes as one (``capdesk train ensemble``).

Below train, export, ensemble and shrink, which all read decoders back: it imports none of them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from training.errors import UsageError
from training.model import Decoder, DecoderConfig
from training.onnx_weights import float_initializers
from training.vocab import Vocab


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
            raise UsageError("an ensemble needs at least two decoders")
        first = members[0].cfg
        if any(m.has_memory for m in members):
            # the members would each need their own memory of the grid, which the two graphs do not carry
            raise UsageError("an ensemble cannot hold decoders with a refiner (--refine-layers) "
                             "or a tuned encoder top (--tune-encoder-top)")
        for m in members[1:]:
            if (m.cfg.vocab_size, m.cfg.feature_dim) != (first.vocab_size, first.feature_dim):
                raise UsageError("ensemble members differ in vocabulary or feature size")
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

    # members never have a refiner or a tuned top (refused above): the ensemble attends to the encoder's features
    refiner = None
    top = None
    has_memory = False

    @property
    def memory_dim(self) -> int:
        return self.cfg.feature_dim

    @property
    def input_dim(self) -> int:
        return self.cfg.feature_dim

    def refine(self, feats: torch.Tensor) -> torch.Tensor:
        return feats

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


def load_checkpoint(path: Path) -> tuple[Decoder, Vocab, dict]:
    """The decoder of a run (an ``Ensemble`` for a ``capdesk train ensemble`` run), its vocabulary
    and the checkpoint itself."""
    ck = torch.load(path, map_location="cpu", weights_only=False)
    if "ensemble" in ck:
        return from_checkpoint(ck), Vocab(ck["vocab"]), ck
    model = Decoder(DecoderConfig(**ck["model_config"]))
    model.load_state_dict(ck["model"])
    model.eval()
    return model, Vocab(ck["vocab"]), ck


def decoder_from_bundle(bundle_path: Path) -> tuple[Decoder, list[str], dict]:
    """Rebuild the PyTorch decoder from a bundle's ONNX graphs (fine-tuning, baselines).

    Parameters keep their names in the exported graphs, except the two weights that the
    exporter stores transposed for a MatMul; those are matched by shape.
    """
    import onnx

    from capdesk.model.bundle import open_bundle

    b = open_bundle(bundle_path)
    dec = b.manifest["decoder"]
    renamed = dec.get("weight_names", {})
    if "members" in dec:  # an ensemble (training/ensemble.py): every member, side by side
        model = Ensemble([Decoder(DecoderConfig(**m)) for m in dec["members"]])
    else:
        cfg_d = {k: v for k, v in dec.items() if k in DecoderConfig.__dataclass_fields__}
        model = Decoder(DecoderConfig(**cfg_d))
    want = model.state_dict()
    got: dict[str, torch.Tensor] = {}
    for fn in ("decoder_init.onnx", "decoder_step.onnx"):
        g = onnx.load_from_string(b.read_verified(fn))
        # A shrunk bundle (training/shrink.py) stores weights as float16 or int8: read back as float32.
        for init_name, value in float_initializers(g.graph).items():
            arr = torch.from_numpy(value.copy())
            if init_name in renamed:  # recorded at export: stored transposed, for a MatMul
                got[renamed[init_name]] = arr.T.contiguous()
                continue
            name = init_name[4:] if init_name.startswith("dec.") else init_name
            if name in want:
                got[name] = arr
            elif init_name.startswith("onnx::MatMul"):
                for cand in ("feat_att.weight", "full_att.weight"):
                    if cand in want and cand not in got and tuple(want[cand].shape) == tuple(arr.T.shape):
                        got[cand] = arr.T.contiguous()
                        break
    missing = [k for k in want if k not in got]
    if missing:
        raise UsageError(f"{bundle_path}: cannot rebuild decoder weights {missing}")
    model.load_state_dict(got)
    model.eval()
    return model, b.vocab(), b.manifest
