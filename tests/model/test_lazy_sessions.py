"""A bundle's graphs are checked when its engine is made, and loaded into ONNX Runtime only when first run:
a picture of the everyday model never loads the aerial model's graphs (``capdesk.model.engine.LazySession``)."""

from __future__ import annotations

import onnxruntime as ort
import pytest
from conftest import SAMPLES

from capdesk.describe.describer import DescribeOptions, Describer
from capdesk.imageio import load_image
from capdesk.model.bundle import resolve
from capdesk.model.engine import LazySession, graph_io_names


@pytest.mark.parametrize("graph", ["encoder.onnx", "decoder_init.onnx", "decoder_step.onnx"])
def test_graph_names_are_read_as_onnx_runtime_lists_them(graph):
    data = resolve("everyday").read_verified(graph)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert graph_io_names(data) == ([i.name for i in sess.get_inputs()], [o.name for o in sess.get_outputs()])


def test_only_the_graphs_a_picture_needs_are_loaded():
    describer = Describer(None, provider="cpu", beam=1, options=DescribeOptions(ocr="never", objects=False))
    aerial, everyday = describer.engines["aerial"], describer.engines["everyday"]
    graphs = [aerial.encoder, aerial.decoder.init_graph, aerial.decoder.step_graph, everyday.encoder]
    assert all(isinstance(g, LazySession) and g._session is None for g in graphs)
    assert "aerial" in describer.decodable  # routing was decided from the graphs' names alone
    d = describer.describe_images([load_image(SAMPLES / "astronaut.png")])[0]
    assert d.ok and d.model == "everyday"
    assert everyday.encoder._session is not None and everyday.decoder.step_graph._session is not None
    assert aerial.encoder._session is None and aerial.decoder.init_graph._session is None
