"""Issue 34, item 1: an ONNX graph that stores a tensor as external data (a file beside it, such as
``~/.ssh/id_rsa`` when run from the home folder) is refused at import, at verify and at load, and
no such file is ever opened, whatever the current folder is.

Whether the file was opened is asked of the kernel (inotify on the folder holding it), not guessed.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from capdesk.model.bundle import BundleError, open_bundle, user_models_dir  # noqa: E402
from capdesk.model.engine import Engine, load_graph, session_options  # noqa: E402
from capdesk.model.graphcheck import GraphError, check_no_external_data  # noqa: E402
from capdesk.model.install import install  # noqa: E402

KEY = b"-----BEGIN OPENSSH PRIVATE KEY----- not a key\n"[:48].ljust(48, b"x")


class OpenWatch:
    """Every open or read of a file inside ``folder`` since this was made, as the kernel saw it."""

    IN_ACCESS, IN_OPEN = 0x1, 0x20

    def __init__(self, folder: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, os.fsencode(folder), self.IN_ACCESS | self.IN_OPEN) < 0:
            pytest.skip("inotify is not available here")

    def events(self) -> int:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return 0
        return len(data)

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder with a secret at ``.ssh/id_rsa``, which is also the current folder."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the kernel is asked through inotify (Linux)")
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_bytes(KEY)
    os.chmod(h / ".ssh" / "id_rsa", 0o600)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.chdir(h)
    return h


def stolen_tensor(location: str = ".ssh/id_rsa", name: str = "stolen") -> TensorProto:
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.UINT8
    t.dims.append(48)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "48")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def with_leak(graph_bytes: bytes) -> bytes:
    """The graph with the issue's addition: an external tensor and an Identity output ``leak`` of it."""
    m = onnx.load_from_string(graph_bytes)
    m.graph.initializer.append(stolen_tensor())
    m.graph.node.append(helper.make_node("Identity", ["stolen"], ["leak"]))
    m.graph.output.append(helper.make_tensor_value_info("leak", TensorProto.UINT8, [48]))
    return m.SerializeToString()


def hostile_bundle(default_bundle: Path, dest: Path, graph: str = "encoder.onnx", extra: bool = False) -> Path:
    """The shipped model with ``graph`` leaking the key; ``extra``: the leak is in one more listed
    graph, ``extra.onnx``, and the model's own graphs are untouched."""
    shutil.copytree(default_bundle, dest)
    m = json.loads((dest / "manifest.json").read_text())
    m["name"] = "leaky"
    target = "extra.onnx" if extra else graph
    data = with_leak((default_bundle / ("decoder_init.onnx" if extra else graph)).read_bytes())
    (dest / target).write_bytes(data)
    m["files"][target] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


def test_the_issue_attack_worked_before_on_plain_onnx_runtime(home, default_bundle):
    """The repro itself: ONNX Runtime, given the graph's bytes, reads the key from the current folder.
    (What the fixes below guard against; if ONNX Runtime one day refuses on its own, this says so.)"""
    import onnxruntime as ort

    data = with_leak((default_bundle / "encoder.onnx").read_bytes())
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    out = sess.run(["leak"], {"image": np.zeros((1, 3, 224, 224), np.float32)})[0]
    assert bytes(out) == KEY


@pytest.mark.parametrize("graph", ["encoder.onnx", "decoder_init.onnx", "decoder_step.onnx", "extra.onnx"])
def test_hostile_graph_refused_at_import_verify_and_load_and_key_never_opened(home, tmp_path, default_bundle, graph):
    src = hostile_bundle(default_bundle, tmp_path / "src" / "leaky", graph, extra=graph == "extra.onnx")
    watch = OpenWatch(home / ".ssh")
    try:
        with pytest.raises(BundleError) as err:
            install(src)
        msg = str(err.value)
        assert "\n" not in msg and graph in msg and "external data" in msg and ".ssh/id_rsa" in msg
        assert not (user_models_dir() / "leaky").exists()
        assert not [p for p in user_models_dir().iterdir() if p.name.startswith(".")]  # no staging left

        problems = open_bundle(src).verify()
        assert len(problems) == 1 and graph in problems[0] and "external data" in problems[0]

        if graph != "extra.onnx":  # the engine loads only the three graphs it runs
            with pytest.raises(BundleError, match=f"{graph} stores tensor 'stolen'.*external data"):
                Engine(open_bundle(src), provider="cpu")
        assert watch.events() == 0, "something opened or read a file in ~/.ssh"
    finally:
        watch.close()


def test_hostile_zip_refused_by_the_command_in_one_line(home, tmp_path, default_bundle):
    src = hostile_bundle(default_bundle, tmp_path / "src" / "leaky")
    z = tmp_path / "leaky.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in sorted(src.iterdir()):
            zf.write(f, "leaky/" + f.name)
    watch = OpenWatch(home / ".ssh")
    try:
        r = run_cli("models", "import", str(z), cwd=home)
        assert r.returncode != 0
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "Traceback" not in r.stderr
        assert str(z) in lines[0] and "encoder.onnx" in lines[0] and "external data" in lines[0]
        r = run_cli("models", "verify", str(src), cwd=home)
        assert r.returncode != 0 and "encoder.onnx" in r.stdout + r.stderr and "external data" in r.stdout + r.stderr
        assert watch.events() == 0
    finally:
        watch.close()


def test_loader_names_an_empty_folder_for_external_data_whatever_the_current_folder(home, default_bundle):
    """The second wall: were a graph ever to reach ONNX Runtime unchecked, its external data would be
    looked for in an empty folder of its own, never in the current folder."""
    data = with_leak((default_bundle / "encoder.onnx").read_bytes())
    watch = OpenWatch(home / ".ssh")
    try:
        with pytest.raises(Exception, match="(?i)external data"):
            load_graph(data, session_options(1), ["CPUExecutionProvider"])
        assert watch.events() == 0
    finally:
        watch.close()
    # A sound graph still loads and runs through the same path.
    sess = load_graph((default_bundle / "decoder_init.onnx").read_bytes(), session_options(1), ["CPUExecutionProvider"])
    assert sess.get_inputs()


# -- every place in a graph that can hold a tensor ----------------------------------------------------
def _tiny(nodes, inits=(), sparse=(), functions=(), outputs=("y",)) -> onnx.ModelProto:
    g = helper.make_graph(list(nodes), "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          initializer=list(inits), sparse_initializer=list(sparse))
    return helper.make_model(g, functions=list(functions), opset_imports=[helper.make_opsetid("", 17),
                                                                        helper.make_opsetid("local", 1)])


def _plain(name: str = "w") -> TensorProto:
    return helper.make_tensor(name, TensorProto.FLOAT, [1], [1.0])


def _hidden_in_initializer():
    return _tiny([helper.make_node("Add", ["x", "stolen"], ["y"])], inits=[_plain(), stolen_tensor()])


def _hidden_in_constant():
    node = helper.make_node("Constant", [], ["y"])
    node.attribute.append(helper.make_attribute("value", stolen_tensor()))
    return _tiny([node])


def _hidden_in_sparse():
    sp = onnx.SparseTensorProto()
    sp.dims.append(48)
    sp.values.CopyFrom(stolen_tensor())
    sp.indices.CopyFrom(helper.make_tensor("i", TensorProto.INT64, [1], [0]))
    return _tiny([helper.make_node("Identity", ["x"], ["y"])], sparse=[sp])


def _hidden_in_subgraph():
    out = helper.make_tensor_value_info("z", TensorProto.UINT8, None)
    inner = helper.make_graph([helper.make_node("Identity", ["stolen"], ["z"])], "inner", [], [out],
                              initializer=[stolen_tensor()])
    cond = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)
    return _tiny([cond], inits=[helper.make_tensor("c", TensorProto.BOOL, [], [True])])


def _hidden_in_function():
    const = helper.make_node("Constant", [], ["o"])
    const.attribute.append(helper.make_attribute("value", stolen_tensor()))
    fn = helper.make_function("local", "Leak", [], ["o"], [const], [helper.make_opsetid("", 17)])
    return _tiny([helper.make_node("Leak", [], ["y"], domain="local")], functions=[fn])


def _location_without_entries():
    t = _plain("w")
    t.data_location = TensorProto.EXTERNAL
    return _tiny([helper.make_node("Add", ["x", "w"], ["y"])], inits=[t])


@pytest.mark.parametrize("build", [_hidden_in_initializer, _hidden_in_constant, _hidden_in_sparse,
                                   _hidden_in_subgraph, _hidden_in_function, _location_without_entries])
def test_external_tensor_found_wherever_a_graph_can_hold_one(build):
    data = build().SerializeToString()
    with pytest.raises(GraphError, match="external data"):
        check_no_external_data(data)


def test_sound_tiny_graph_passes_and_damaged_bytes_are_refused():
    data = _tiny([helper.make_node("Add", ["x", "w"], ["y"])], inits=[_plain()]).SerializeToString()
    check_no_external_data(data)
    with pytest.raises(GraphError, match="not a readable ONNX graph"):
        check_no_external_data(data[:-3])


def test_names_from_the_graph_are_printed_on_one_line():
    m = _tiny([helper.make_node("Identity", ["x"], ["y"])], inits=[stolen_tensor("a\nb\x1b[2J", "t\r\x07")])
    with pytest.raises(GraphError) as err:
        check_no_external_data(m.SerializeToString())
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value) and "\r" not in str(err.value)
