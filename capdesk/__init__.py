"""CapDesk: offline image descriptions for people who cannot see the picture."""

__version__ = "0.1.0"

# Nothing CapDesk runs may talk to the network: ONNX Runtime's telemetry is switched off before
# any module can import onnxruntime (see capdesk/model/providers.py for what works and why).
from capdesk.model.providers import keep_runtime_offline as _keep_runtime_offline  # noqa: E402

_keep_runtime_offline()
