"""Which ONNX Runtime execution provider runs the model: the fastest one installed, or the user's pick;
and ONNX Runtime kept offline.

ONNX Runtime's official builds (1.31 on Linux and macOS too) carry the 1DS telemetry SDK: some
9 s after the first session it resolves ``mobile.events.data.microsoft.com`` and uploads usage
events, and it keeps a device id and an event database under ``~/.cache/Microsoft/DeveloperTools``.
``ort.disable_telemetry_events()`` does not stop that (measured: the DNS lookups and the files
still come). What does is the environment variable ``ORT_DISABLE_TELEMETRY=1``, read once when the
library is loaded: no uploader, no events, no device id, no cache. So it must be set before
``import onnxruntime`` anywhere in the process (the engine, RapidOCR, training): ``capdesk/__init__``
calls ``keep_runtime_offline()`` so that importing any part of CapDesk sets it first.
"""

from __future__ import annotations

import functools
import logging
import os
import sys

TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1"}


def keep_runtime_offline() -> bool:
    """Switch ONNX Runtime's telemetry off; False when onnxruntime was imported before (too late)."""
    os.environ.update(TELEMETRY_OFF)
    if "onnxruntime" in sys.modules:
        logging.getLogger("capdesk").warning(
            "onnxruntime was imported before capdesk: set ORT_DISABLE_TELEMETRY=1 before importing it")
        return False
    return True

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
    if chain[0] == "CUDAExecutionProvider":
        load_cuda_libraries()
    return chain


@functools.cache  # once a process
def load_cuda_libraries() -> None:
    """Load CUDA's and cuDNN's libraries for onnxruntime-gpu where pip put them (the ``nvidia-*`` wheels
    that ``pip install onnxruntime-gpu[cuda,cudnn]`` brings, or PyTorch's): the CUDA provider needs them,
    and without them on ``LD_LIBRARY_PATH`` ONNX Runtime says so in red and runs everything on the CPU.
    ``preload_dlls`` (onnxruntime-gpu 1.21 and later) finds them; an older or CPU-only onnxruntime, or
    libraries that are not there, leave things as they were."""
    import onnxruntime as ort

    preload = getattr(ort, "preload_dlls", None)
    if preload is None or "CUDAExecutionProvider" not in ort.get_available_providers():
        return
    try:
        preload()
    except Exception as exc:  # noqa: BLE001 - best effort: the CPU still runs everything
        logging.getLogger("capdesk").warning("CUDA libraries could not be loaded (%s); the CPU runs the models", exc)


def short_name(provider: str) -> str:
    return provider.replace("ExecutionProvider", "").lower()
