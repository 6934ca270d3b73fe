"""Which ONNX Runtime execution provider runs the model: the fastest one installed, or the user's pick."""

from __future__ import annotations

PREFERENCE = (
    "CUDAExecutionProvider",
    "DmlExecutionProvider",
    "CoreMLExecutionProvider",
    "CPUExecutionProvider",
)
ALIASES = {
    "cuda": "CUDAExecutionProvider",
    "gpu": "CUDAExecutionProvider",
    "directml": "DmlExecutionProvider",
    "dml": "DmlExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "cpu": "CPUExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
}


class ProviderError(ValueError):
    pass


def available() -> list[str]:
    import onnxruntime as ort

    return list(ort.get_available_providers())


def canonical(name: str) -> str:
    return ALIASES.get(name.strip().lower(), name.strip())


def choose(requested: str | None = None, offered: list[str] | None = None) -> list[str]:
    """Providers to hand to ONNX Runtime, best first; CPU always ends the list as the fallback."""
    offered = available() if offered is None else offered
    if requested and requested.lower() != "auto":
        want = canonical(requested)
        if want not in offered:
            raise ProviderError(
                f"execution provider {requested!r} is not available; this onnxruntime offers: {', '.join(offered)}"
            )
        chain = [want]
    else:
        chain = [p for p in PREFERENCE if p in offered]
    if "CPUExecutionProvider" not in chain:
        chain.append("CPUExecutionProvider")
    return chain


def short_name(provider: str) -> str:
    return provider.replace("ExecutionProvider", "").lower()
