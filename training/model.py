"""The "Show, Attend and Tell" decoder (Xu et al., 2015) over cached grid features.

Per word t: attention ``e_ti = w^T tanh(W_a a_i + W_h h_{t-1})``, ``alpha = softmax(e)``;
gated context ``z_t = sigmoid(f_beta(h_{t-1})) * sum_i alpha_ti a_i`` (soft), or the
feature at a sampled location (hard, trained with REINFORCE); ``LSTM([E y_{t-1}, z_t])``;
deep output ``p(y_t) ~ exp(L_o tanh(E y_{t-1} + L_h h_t + L_z z_t))``.

``init`` and ``step`` are the two graphs exported to ONNX; ``forward`` is teacher forcing.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from training.errors import UsageError


@dataclass
class DecoderConfig:
    vocab_size: int
    feature_dim: int = 1280
    embed_dim: int = 512
    hidden_dim: int = 512
    attention_dim: int = 512
    dropout: float = 0.5
    feature_dropout: float = 0.0
    attention: str = "soft"  # or "hard"
    # >0: the grid passes through a learnt projection to ``refine_dim`` and this many self-attention
    # layers before the LSTM attends to it, so each location carries context from the others
    refine_layers: int = 0
    refine_dim: int = 512
    # an encoder variant ("lite0"): the decoder takes the encoder's trunk and owns a trainable copy of
    # that encoder's last ``encoder_top_blocks`` blocks and head (training/encoder.py EncoderTop);
    # "": the frozen features
    encoder_top: str = ""
    encoder_top_blocks: int = 1

    def to_dict(self) -> dict:
        return asdict(self)


class SelfAttentionLayer(nn.Module):
    """Pre-norm transformer layer over grid locations, written out so that it exports to plain ONNX
    (PyTorch's own layer takes a fused fast path in eval mode)."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(2 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, L, M = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        att = F.softmax((q @ k.transpose(-1, -2)) * self.scale, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, L, M)
        x = x + self.drop(self.out(y))
        return x + self.drop(self.ff(self.norm2(x)))


class Refiner(nn.Module):
    """Encoder grid [B,L,D] -> memory [B,L,M]: a learnt projection, then self-attention layers."""

    def __init__(self, feature_dim: int, dim: int, layers: int, heads: int = 8, dropout: float = 0.1) -> None:
        super().__init__()
        if dim < heads or dim % heads:
            raise UsageError(f"--refine-dim must be a multiple of {heads} (the attention heads), not {dim}")
        self.inp = nn.Sequential(nn.Linear(feature_dim, dim), nn.ReLU(), nn.Dropout(dropout))
        self.layers = nn.ModuleList(SelfAttentionLayer(dim, heads, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = self.inp(feats)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, cfg: DecoderConfig) -> None:
        super().__init__()
        self.cfg = cfg
        D, E, H, A, V = cfg.feature_dim, cfg.embed_dim, cfg.hidden_dim, cfg.attention_dim, cfg.vocab_size
        self.top = _encoder_top(cfg.encoder_top, cfg.encoder_top_blocks) if cfg.encoder_top else None
        self.refiner = Refiner(D, cfg.refine_dim, cfg.refine_layers) if cfg.refine_layers > 0 else None
        D = self.memory_dim
        self.embed = nn.Embedding(V, E)
        self.feat_att = nn.Linear(D, A)
        self.hid_att = nn.Linear(H, A)
        self.full_att = nn.Linear(A, 1)
        self.f_beta = nn.Linear(H, D)
        self.init_h = nn.Sequential(nn.Linear(D, H), nn.Tanh())
        self.init_c = nn.Sequential(nn.Linear(D, H), nn.Tanh())
        self.lstm = nn.LSTMCell(E + D, H)
        self.L_h = nn.Linear(H, E)
        self.L_z = nn.Linear(D, E)
        self.L_o = nn.Linear(E, V)
        self.drop = nn.Dropout(cfg.dropout)
        self.feat_drop = nn.Dropout(cfg.feature_dropout)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        nn.init.zeros_(self.L_o.bias)

    @property
    def memory_dim(self) -> int:
        """Width of what the LSTM attends to: the encoder's features, or the refiner's memory."""
        return self.cfg.refine_dim if self.cfg.refine_layers > 0 else self.cfg.feature_dim

    @property
    def input_dim(self) -> int:
        """Width of what the decoder is given: the encoder's trunk with a tuned top, else its features."""
        return self.top.trunk_dim if self.top is not None else self.cfg.feature_dim

    @property
    def has_memory(self) -> bool:
        """Whether the LSTM attends to something other than the encoder's features as given."""
        return self.top is not None or self.refiner is not None

    def refine(self, feats: torch.Tensor) -> torch.Tensor:
        """What the decoder is given (``input_dim`` wide) -> the memory the LSTM attends to: the
        tuned top's features, then the refiner's, or the encoder's features as they are."""
        if self.top is not None:
            feats = self.top(feats)
        return feats if self.refiner is None else self.refiner(feats)

    # -- the two exported pieces -------------------------------------------------
    def init(self, feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """memory [B,L,D] (``refine``'s output) -> h0 [B,H], c0 [B,H], projected memory [B,L,A]."""
        mean = feats.mean(1)
        return self.init_h(mean), self.init_c(mean), self.feat_att(feats)

    def attend(self, feats: torch.Tensor, proj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        e = self.full_att(torch.tanh(proj + self.hid_att(h).unsqueeze(1))).squeeze(2)
        return F.softmax(e, dim=1)

    def _cell(self, word: torch.Tensor, h: torch.Tensor, c: torch.Tensor, feats: torch.Tensor,
              alpha_or_loc: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """One LSTM step given the attention weights actually used (soft alpha or one-hot)."""
        emb = self.embed(word)
        ctx = torch.bmm(alpha_or_loc.unsqueeze(1), feats).squeeze(1)
        z = torch.sigmoid(self.f_beta(h)) * ctx
        h, c = self.lstm(torch.cat([emb, z], dim=1), (h, c))
        logits = self.L_o(self.drop(torch.tanh(emb + self.L_h(h) + self.L_z(z))))
        return logits, h, c

    def step(self, word: torch.Tensor, h: torch.Tensor, c: torch.Tensor, feats: torch.Tensor,
             proj: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """previous word [B], h, c, features, projected -> log-probs [B,V], h, c, alpha [B,L]."""
        alpha = self.attend(feats, proj, h)
        used = alpha
        if self.cfg.attention == "hard":
            # At test time the hard model looks at its most likely location.
            used = (alpha >= alpha.max(dim=1, keepdim=True).values).to(alpha.dtype)
            used = used / used.sum(1, keepdim=True)
        logits, h, c = self._cell(word, h, c, feats, used)
        return F.log_softmax(logits, dim=1), h, c, alpha

    # -- teacher forcing ---------------------------------------------------------
    def forward(self, feats: torch.Tensor, caps: torch.Tensor) -> dict[str, torch.Tensor]:
        """feats [B,L,D], caps [B,T] (with <start> ... <end> <pad>) -> per-step logits etc."""
        feats = self.refine(self.feat_drop(feats))
        h, c, proj = self.init(feats)
        B, T = caps.shape
        steps = T - 1
        logits, alphas, loc_logp, entropy = [], [], [], []
        for t in range(steps):
            alpha = self.attend(feats, proj, h)
            if self.cfg.attention == "hard" and self.training:
                # In float32 and unvalidated: under bf16 autocast the weights sum to 1 only within
                # bf16's precision, which the simplex check rejects; Categorical renormalises anyway.
                dist = torch.distributions.Categorical(probs=alpha.float().clamp_min(1e-8), validate_args=False)
                loc = dist.sample()
                loc_logp.append(dist.log_prob(loc))
                entropy.append(dist.entropy())
                used = F.one_hot(loc, alpha.size(1)).to(alpha.dtype)
            elif self.cfg.attention == "hard":
                used = (alpha >= alpha.max(dim=1, keepdim=True).values).to(alpha.dtype)
                used = used / used.sum(1, keepdim=True)
            else:
                used = alpha
            lg, h, c = self._cell(caps[:, t], h, c, feats, used)
            logits.append(lg)
            alphas.append(alpha)
        out = {"logits": torch.stack(logits, 1), "alphas": torch.stack(alphas, 1)}
        if loc_logp:
            out["loc_logp"] = torch.stack(loc_logp, 1)
            out["entropy"] = torch.stack(entropy, 1)
        return out

    def sample(self, feats: torch.Tensor, max_len: int, start: int, end: int, pad: int,
               banned: tuple[int, ...] = ()) -> dict[str, torch.Tensor]:
        """Sample captions word by word under the app's decoding rules, keeping the graph.

        The bans (special words, no <end> first, no word twice in a row) are applied before
        the softmax, so ``logp`` is the log-probability under the distribution actually sampled
        from: what the policy gradient of self-critical training needs. Soft attention only.
        """
        h, c, proj = self.init(feats)
        B = feats.size(0)
        dev = feats.device
        rows = torch.arange(B, device=dev)
        word = torch.full((B,), start, dtype=torch.long, device=dev)
        alive = torch.ones(B, dtype=torch.bool, device=dev)
        words, logps, masks, alphas = [], [], [], []
        for t in range(max_len):
            alpha = self.attend(feats, proj, h)
            logits, h, c = self._cell(word, h, c, feats, alpha)
            ban = torch.zeros(logits.shape, dtype=torch.bool, device=dev)
            if banned:
                ban[:, list(banned)] = True
            if t == 0:
                ban[:, end] = True
            else:
                ban[rows, word] = True
            logits = logits.float().masked_fill(ban, -torch.inf)
            logp_all = F.log_softmax(logits, dim=1)
            nxt = torch.multinomial(logp_all.detach().exp(), 1).squeeze(1)
            masks.append(alive.clone())
            logps.append(logp_all.gather(1, nxt.unsqueeze(1)).squeeze(1))
            alphas.append(alpha)
            nxt = torch.where(alive, nxt, torch.full_like(nxt, pad))
            words.append(nxt)
            alive = alive & (nxt != end)
            word = torch.where(alive, nxt, torch.full_like(nxt, end))
            if not alive.any():
                break
        return {"words": torch.stack(words, 1), "logp": torch.stack(logps, 1),
                "mask": torch.stack(masks, 1).float(), "alphas": torch.stack(alphas, 1)}

    @torch.no_grad()
    def greedy(self, feats: torch.Tensor, max_len: int, start: int, end: int,
               banned: tuple[int, ...] = ()) -> torch.Tensor:
        """Batched greedy decoding (validation during training), with the app's word bans."""
        feats = self.refine(feats)
        h, c, proj = self.init(feats)
        B = feats.size(0)
        word = torch.full((B,), start, dtype=torch.long, device=feats.device)
        out = torch.full((B, max_len), end, dtype=torch.long, device=feats.device)
        finished = torch.zeros(B, dtype=torch.bool, device=feats.device)
        for t in range(max_len):
            logp, h, c, _ = self.step(word, h, c, feats, proj)
            if banned:
                logp[:, list(banned)] = -torch.inf
            if t == 0:
                logp[:, end] = -torch.inf
            else:  # as the app decodes: a word never follows itself
                logp[torch.arange(B, device=feats.device), word] = -torch.inf
            word = logp.argmax(1)
            word = torch.where(finished, torch.full_like(word, end), word)
            out[:, t] = word
            finished |= word == end
            if finished.all():
                break
        return out


def caption_loss(out: dict[str, torch.Tensor], caps: torch.Tensor, pad: int, ds_lambda: float,
                 hard_state: dict | None = None, entropy_weight: float = 0.01,
                 reinforce_weight: float = 1.0, label_smoothing: float = 0.0) -> tuple[torch.Tensor, dict[str, float]]:
    """Cross-entropy + doubly stochastic penalty (+ REINFORCE terms for hard attention)."""
    targets = caps[:, 1:]
    mask = (targets != pad).float()
    logits = out["logits"]
    nll = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                          reduction="none").view_as(mask) * mask
    if label_smoothing:
        # the REINFORCE reward below stays the caption's true log-likelihood
        smoothed = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none",
                                   label_smoothing=label_smoothing).view_as(mask) * mask
    n_words = mask.sum().clamp_min(1)
    ce = (smoothed if label_smoothing else nll).sum() / n_words
    alpha_sum = (out["alphas"] * mask.unsqueeze(2)).sum(1)  # [B, L]
    ds = ((1.0 - alpha_sum) ** 2).sum(1).mean()
    loss = ce + ds_lambda * ds
    stats = {"ce": ce.item(), "ds": ds.item()}
    if "loc_logp" in out and hard_state is not None:
        # REINFORCE with a moving-average baseline: reward is the caption's log-likelihood.
        seq_logp = -(nll.sum(1)).detach()
        b = hard_state.setdefault("baseline", seq_logp.mean().item())
        hard_state["baseline"] = 0.9 * b + 0.1 * seq_logp.mean().item()
        adv = (seq_logp - b).unsqueeze(1)
        rl = -(adv * out["loc_logp"] * mask).sum() / n_words
        ent = (out["entropy"] * mask).sum() / n_words
        loss = loss + reinforce_weight * rl - entropy_weight * ent
        stats.update(rl=rl.item(), entropy=ent.item())
    return loss, stats


def _encoder_top(variant: str, blocks: int) -> nn.Module:
    from training.encoder import EncoderTop

    return EncoderTop(variant, blocks)
