"""The float32 weights of an ONNX graph, whatever the storage a bundle uses (float32, float16 behind a
Cast, int8 dynamic quantisation): what rebuilding a decoder and shrinking a bundle both read."""

from __future__ import annotations

import numpy as np


def float_initializers(graph) -> dict[str, np.ndarray]:
    """The float32 weights of a graph by their exported names, whatever the storage: float32 as is,
    float16 behind a Cast, int8 dynamic quantisation dequantised (``_Transposed`` weights turned back)."""
    from onnx import TensorProto, numpy_helper

    raw = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    casts = {n.input[0]: n.output[0] for n in graph.node
             if n.op_type == "Cast" and any(a.name == "to" and a.i == TensorProto.FLOAT for a in n.attribute)}
    out: dict[str, np.ndarray] = {}
    for name, arr in raw.items():
        if name in casts:
            out[casts[name]] = arr.astype(np.float32)
        elif name.endswith("_quantized"):
            base = name[: -len("_quantized")]
            scale, zero = raw[base + "_scale"], raw[base + "_zero_point"].astype(np.float32)
            w = (arr.astype(np.float32) - zero) * scale  # per column: scale and zero broadcast on the last axis
            if base.endswith("_Transposed"):
                base, w = base[: -len("_Transposed")], w.T
            out[base] = np.ascontiguousarray(w, dtype=np.float32)
        elif arr.dtype == np.float32 and not name.endswith("_scale"):
            out[name] = arr
    return out
