"""The model: a trained bundle on disk, and running it.

Owns the bundle format (``manifest`` schema, ``bundle`` discovery and hashes, ``install`` into the
user's model folder), the ONNX Runtime session and its execution provider (``providers``,
``engine``), the kinds of decoder a manifest may name (``decoders``), the numpy beam search that runs
any of them (``beam``), the distance to the training pictures (``domain``)
and the attention maps drawn over a picture (``attention``).

May import: numpy, pillow, onnxruntime, and ``capdesk``'s shared vocabulary (``limits``,
``status``, ``imageio``). Never describe/, sidecars/ or anything above; never torch or Qt.
"""
