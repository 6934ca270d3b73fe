"""What an ONNX graph of a bundle may not hold: tensors whose data lives in another file.

ONNX lets a tensor say "my bytes are in file X at offset O" (``data_location = EXTERNAL``).
ONNX Runtime resolves X against the current folder for a model given as bytes, so a graph from
someone else could read any file the user can (an SSH key, from the home folder) into an output.
A bundle's graphs carry all their weights, so any tensor stored outside the graph is refused
before ONNX Runtime sees the graph.

The graph is read as protobuf wire data here (the ``onnx`` package is for training only), along
every field of ``onnx.proto`` that can hold a tensor: initializers, sparse initializers, the
tensors of node attributes (``Constant``), sub-graphs of ``If``/``Loop``/``Scan``, functions and
training graphs. A graph whose wire data cannot be read is refused as well: what cannot be
checked is not run.
"""

from __future__ import annotations

# Message kinds, and for each the fields (by number) that hold a message worth descending into.
_MODEL, _GRAPH, _NODE, _ATTR, _FUNC, _TRAIN, _SPARSE, _TENSOR = range(8)
_CHILDREN: dict[int, dict[int, int]] = {
    _MODEL: {7: _GRAPH, 20: _TRAIN, 25: _FUNC},
    _GRAPH: {1: _NODE, 5: _TENSOR, 15: _SPARSE},
    _NODE: {5: _ATTR},
    _ATTR: {5: _TENSOR, 6: _GRAPH, 10: _TENSOR, 11: _GRAPH, 22: _SPARSE, 23: _SPARSE},
    _FUNC: {7: _NODE, 11: _ATTR},
    _TRAIN: {1: _GRAPH, 2: _GRAPH},
    _SPARSE: {1: _TENSOR, 2: _TENSOR},
    _TENSOR: {},
}
_TENSOR_NAME, _TENSOR_EXTERNAL, _TENSOR_LOCATION = 8, 13, 14
_MAX_DEPTH = 100  # protobuf's own nesting limit, which ONNX Runtime's parser keeps too


class GraphError(ValueError):
    """Why a graph is refused, in words (the caller adds which file of which bundle)."""


def _varint(buf: memoryview, i: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= end or shift > 63:
            raise GraphError("is not a readable ONNX graph (damaged protobuf)")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf: memoryview, start: int, end: int):
    """(field number, wire type, value or (start, end) of the bytes) for each field in buf[start:end]."""
    i = start
    while i < end:
        key, i = _varint(buf, i, end)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i, end)
            yield num, wire, value
        elif wire == 2:
            n, i = _varint(buf, i, end)
            if i + n > end:
                raise GraphError("is not a readable ONNX graph (damaged protobuf)")
            yield num, wire, (i, i + n)
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            if i > end:
                raise GraphError("is not a readable ONNX graph (damaged protobuf)")
            yield num, wire, None
        else:  # groups: never written by ONNX exporters
            raise GraphError(f"is not a readable ONNX graph (protobuf wire type {wire})")


def _text(buf: memoryview, span: tuple[int, int]) -> str:
    """A name or path from the graph, safe to print in one line whatever bytes it holds."""
    raw = bytes(buf[span[0]:min(span[1], span[0] + 200)]).decode("utf-8", "replace")
    return repr(raw)[1:-1][:100]


def _external_where(buf: memoryview, tensor: tuple[int, int]) -> str:
    """The tensor's name and the file it points to, for the message."""
    name = location = ""
    for num, wire, value in _fields(buf, *tensor):
        if num == _TENSOR_NAME and wire == 2:
            name = _text(buf, value)
        elif num == _TENSOR_EXTERNAL and wire == 2:
            key = val = ""
            for n2, w2, v2 in _fields(buf, *value):
                if w2 == 2 and n2 in (1, 2):
                    key, val = (_text(buf, v2), val) if n2 == 1 else (key, _text(buf, v2))
            if key == "location":
                location = val
    where = f" (location '{location}')" if location else ""
    return f"tensor '{name or '(unnamed)'}'{where}"


def check_no_external_data(data: bytes | memoryview) -> None:
    """GraphError when any tensor of the ONNX model in ``data`` is stored outside it, or when its
    wire data cannot be read; None when every tensor's bytes are inside the graph."""
    buf = memoryview(data)
    stack: list[tuple[int, int, int, int]] = [(_MODEL, 0, len(buf), 0)]
    while stack:
        kind, start, end, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise GraphError(f"is not a readable ONNX graph (nested more than {_MAX_DEPTH} deep)")
        children = _CHILDREN[kind]
        for num, wire, value in _fields(buf, start, end):
            if kind == _TENSOR and (num == _TENSOR_EXTERNAL or (num == _TENSOR_LOCATION and value != 0)):
                raise GraphError(f"stores {_external_where(buf, (start, end))} as external data, outside the "
                                 "graph; a bundle's graphs must hold all their weights")
            child = children.get(num)
            if child is not None and wire == 2:
                stack.append((child, value[0], value[1], depth + 1))
