"""The settings of a training run (``capdesk train fit``), and where features are cached."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TrainConfig:
    data: str = ""
    image_root: str = ""  # where the images of a JSON/CSV data set live, if not beside it
    encoder_file: str = ""  # use this encoder graph (e.g. a base bundle's) instead of exporting one
    val_fraction: float = 0.1  # held out for validation when the data has no val split
    out: str = "runs/model"
    cache: str = ""
    encoder: str = "lite0"
    image_size: int = 0  # 0: the encoder's native size
    min_count: int = 5
    max_len: int = 22
    embed_dim: int = 512
    hidden_dim: int = 512
    attention_dim: int = 512
    dropout: float = 0.5
    feature_dropout: float = 0.0
    attention: str = "soft"
    ds_lambda: float = 1.0
    entropy_weight: float = 0.01
    lr: float = 4e-4
    lr_decay: float = 0.8
    batch_size: int = 64
    clip: float = 5.0
    epochs: int = 20
    patience: int = 4
    flip: bool = True
    seed: int = 7
    ckpt_minutes: float = 5.0
    max_steps: int = 0  # >0: stop after this many steps (tests, smoke runs)
    val_limit: int = 0  # >0: validate on at most this many images
    threads: int = 0
    # bfloat16 autocast for the forward pass: about 1.5-2x faster on CPUs with AMX/AVX-512 BF16 and on
    # GPUs; weights, optimiser and the exported graphs stay float32
    amp: bool = False
    # >0: validate, keep and export an exponential moving average of the weights (Polyak averaging),
    # updated after every step with this decay. On everyday v2 it made the better greedy decoder
    # (+0.005 val BLEU-4) but not the better beam-3 one (docs/training.md)
    ema: float = 0.0
    label_smoothing: float = 0.0  # cross-entropy against targets smoothed by this much
    refine_layers: int = 0  # >0: self-attention layers over the grid before the LSTM (DecoderConfig)
    refine_dim: int = 512
    # train a copy of the encoder's last block(s) and head with the decoder, at ``encoder_lr``, on cached
    # trunk activations (the input of those blocks); the app's shared encoder stays as it is
    tune_encoder_top: bool = False
    encoder_lr: float = 1e-4
    encoder_top_blocks: int = 1  # how many of the encoder's last blocks the top holds
    init_from: str = ""  # start from this run checkpoint's decoder (and vocabulary) instead of at random
    keep_epochs: bool = False  # also keep each epoch's weights (checkpoint_epochN.pt), to compare them at beam 3
    extra: dict = field(default_factory=dict)


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("capdesk")) / "features"
