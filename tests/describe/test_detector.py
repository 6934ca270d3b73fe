"""The object detector (models/detector, capdesk/describe/detector.py): what it finds on the samples,
boxes in the picture's own pixels, suppression, calibration, and a missing or broken bundle never
stopping a description. Real ONNX Runtime, real files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, needs_shared_data, run_cli
from PIL import Image

from capdesk.describe import detector as det
from capdesk.describe.calibration import Calibration, CalibrationError, Curve, fit_isotonic
from capdesk.imageio import load_image, original_size

SHIPPED = ROOT / "models" / "detector"


@pytest.fixture(scope="module")
def detector() -> det.Detector:
    return det.open_detector(SHIPPED)


def labels(found: list[det.Detection]) -> set[str]:
    return {d.label for d in found}


def test_samples_say_what_they_show(detector):
    assert "cat" in labels(detector.detect(load_image(SAMPLES / "chelsea.png")))
    assert "person" in labels(detector.detect(load_image(SAMPLES / "astronaut.png")))
    assert "cup" in labels(detector.detect(load_image(SAMPLES / "coffee.png")))
    assert "person" not in labels(detector.detect(load_image(SAMPLES / "rocket.jpg")))


def test_objects_are_sorted_calibrated_and_inside_a_non_square_picture(detector):
    img = load_image(SAMPLES / "coffee.png")
    w, h = img.size
    assert w != h
    found = detector.detect(img)
    assert found and [d.score for d in found] == sorted((d.score for d in found), reverse=True)
    for d in found:
        x0, y0, x1, y1 = d.box
        assert all(isinstance(v, int) for v in d.box)
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
        assert det.OBJECT_FLOOR <= d.score <= 1
    cup = next(d for d in found if d.label == "cup")
    # the cup stands in the upper middle of the picture, not in the padding of some square
    cx, cy = (cup.box[0] + cup.box[2]) / 2, (cup.box[1] + cup.box[3]) / 2
    assert 0.3 * w < cx < 0.7 * w and cy < 0.6 * h


def test_boxes_are_in_the_upright_full_size_picture(detector, tmp_path):
    """A JPEG stored sideways (EXIF orientation 6) at three times the sample's size, decoded smaller
    as the describer decodes it: the boxes are the upright picture's, in its own pixels."""
    upright = Image.open(SAMPLES / "chelsea.png").convert("RGB")
    big = upright.resize((upright.width * 3, upright.height * 3), Image.BICUBIC)
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90 degrees clockwise
    p = tmp_path / "sideways.jpg"
    big.rotate(90, expand=True).save(p, exif=exif, quality=92)
    img = load_image(p, draft_size=(448, 448))
    assert original_size(img) == big.size and img.size != big.size
    cat = next(d for d in detector.detect(img) if d.label == "cat")
    ref = next(d for d in detector.detect(upright) if d.label == "cat")
    w, h = big.size
    for v, r, side in zip(cat.box, ref.box, (w, h, w, h)):
        assert abs(v - 3 * r) < 0.06 * side, (cat.box, ref.box)


def test_suppression_keeps_one_of_each_duplicate_per_class():
    boxes = np.array([[10, 10, 110, 110], [12, 12, 112, 108], [200, 200, 260, 260], [10, 10, 110, 110]], np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.6], np.float32)
    classes = np.array([0, 0, 0, 1])
    keep = det.nms(boxes, scores, classes)
    assert keep.tolist() == [0, 2, 3]  # the near-copy of box 0 goes; another class's box in the same place stays
    assert det.nms(boxes, scores, np.zeros(4, int), iou=0.99).tolist() == [0, 1, 2]


def test_box_decoding_of_one_cell():
    """One cell of the stride-8 level sure of class 3, its distances peaked at 2 bins left/top and 5 right/bottom."""
    size, strides, reg_max = 32, (8, 16), 7
    scores = [np.zeros((1, 16, 80), np.float32), np.zeros((1, 4, 80), np.float32)]
    dists = [np.full((1, 16, 32), -50.0, np.float32), np.zeros((1, 4, 32), np.float32)]
    cell = 1 * 4 + 2  # row 1, column 2
    scores[0][0, cell, 3] = 0.9
    for side, b in enumerate((2, 2, 5, 5)):
        dists[0][0, cell, side * 8 + b] = 50.0
    boxes, cls = det.decode_gfl(scores, dists, size, strides, reg_max)
    b, s, c = det.candidates(boxes, cls)
    cx, cy = 2 * 8 + 3.5, 1 * 8 + 3.5
    assert c[0] == 3 and s[0] == pytest.approx(0.9)
    assert b[0] == pytest.approx([cx - 16, cy - 16, cx + 40, cy + 40], abs=1e-3)


def test_shipped_calibration_is_monotone_and_counted():
    m = json.loads((SHIPPED / "manifest.json").read_text())
    names = json.loads((SHIPPED / "labels.json").read_text())
    assert len(names) == 80 and {"motorcycle", "airplane", "couch", "potted plant", "dining table", "tv"} <= set(names)
    cal = Calibration.from_json(json.loads((SHIPPED / "calibration.json").read_text()), names)
    assert "person" in cal.classes and cal.classes["person"].photos > 0 and cal.classes["person"].present > 0
    raw = np.linspace(0, 1, 201)
    for name in names:
        p = cal.apply(name, raw)
        assert np.all(np.diff(p) >= 0) and p.min() >= 0 and p.max() < 1, name
    assert m["source"]["sha256"] == "cdab77bdde16e4f76bec734c4e5791801d1739e4c7ec1995e0e110e04300d0c2"


def test_isotonic_fit_is_monotone_and_refuses_a_decreasing_curve():
    rng = np.random.default_rng(3)
    x = rng.random(3000)
    y = (rng.random(3000) < x ** 2).astype(float)
    xs, ys = fit_isotonic(x, y)
    assert np.all(np.diff(xs) >= 0) and np.all(np.diff(ys) >= 0) and 0 < ys[0] < ys[-1] < 1
    curve = Curve(tuple(xs), tuple(ys))
    assert abs(float(curve(0.5)) - 0.25) < 0.1 and abs(float(curve(0.9)) - 0.81) < 0.1
    with pytest.raises(CalibrationError, match="monotone"):
        Curve.from_json({"x": [0.1, 0.5], "y": [0.6, 0.2]}, "test")


def test_other_model_folders_are_not_reported_as_broken_caption_bundles():
    from capdesk.model.bundle import OTHER_MODEL_FOLDERS, discover

    assert det.FOLDER_NAME in OTHER_MODEL_FOLDERS
    bundles, problems = discover()
    assert not [p for p in problems if "detector" in p]
    assert det.verify(SHIPPED) == []


def _broken_copy(tmp_path):
    bad = tmp_path / "broken-detector"
    shutil.copytree(SHIPPED, bad)
    graph = json.loads((bad / "manifest.json").read_text())["graph"]
    data = bytearray((bad / graph).read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, another hash
    (bad / graph).write_bytes(bytes(data))
    return bad, graph


def test_broken_detector_is_said_once_and_describing_goes_on(tmp_path, caplog):
    bad, graph = _broken_copy(tmp_path)
    assert any("sha256" in p for p in det.verify(bad))
    finder = det.ObjectFinder(folder=bad)
    with caplog.at_level("WARNING", logger="capdesk"):
        for _ in range(3):
            assert finder.find(load_image(SAMPLES / "chelsea.png")) == []
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and str(bad) in said[0] and graph in said[0] and "sha256" in said[0]


@pytest.mark.parametrize("case", ["missing", "corrupt"])
@pytest.mark.slow  # 4 s measured on two busy cores
def test_caption_json_without_a_usable_detector(tmp_path, case):
    folder = tmp_path / "no-detector" if case == "missing" else _broken_copy(tmp_path)[0]
    pics = [str(SAMPLES / "chelsea.png"), str(SAMPLES / "coffee.png")]
    r = run_cli("caption", "--json", *pics, env={det.ENV: str(folder)})
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(recs) == 2 and all(rec["objects"] == [] and rec["description"] for rec in recs)
    warnings = [ln for ln in r.stderr.splitlines() if "object detector" in ln]
    assert len(warnings) == 1 and str(folder) in warnings[0], r.stderr
    assert ("no such detector folder" if case == "missing" else "sha256") in warnings[0]
    # The model's own words are the same with the detector; what is said may differ, since what a caption
    # names must then have been seen (without it nothing can be checked, and the captions stand on their trust).
    good = [json.loads(line) for line in run_cli("caption", "--json", *pics).stdout.splitlines()]
    assert {"cat"} <= {o["label"] for o in good[0]["objects"]}
    for rec, g in zip(recs, good):
        assert set(g) == set(rec)
        same = ("caption", "confidence", "tags", "trust", "concepts", "in_domain", "domain_score", "model")
        assert {k: g[k] for k in same} == {k: rec[k] for k in same}
        assert g["evidence"]["detector"] is True and rec["evidence"]["detector"] is False
    for o in good[1]["objects"]:
        assert set(o) == {"label", "score", "box"} and o["score"] == round(o["score"], 3) and len(o["box"]) == 4


def test_describer_runs_the_detector_on_the_caption_model_providers(engine):
    from capdesk.describe.describer import DescribeOptions, Describer

    d = Describer(engine.bundle, provider="cpu", others=[])
    assert d.objects.providers == d.primary.requested_providers
    [with_objects] = d.describe_images([load_image(SAMPLES / "astronaut.png")])
    assert "person" in {o.label for o in with_objects.objects}
    off = Describer(engine.bundle, provider="cpu", others=[], options=DescribeOptions(objects=False))
    [without] = off.describe_images([load_image(SAMPLES / "astronaut.png")])
    assert without.objects == [] and without.caption.text == with_objects.caption.text
    assert with_objects.evidence.detector and not without.evidence.detector


def test_objects_are_found_while_the_caption_model_encodes(engine, monkeypatch):
    """The detector runs on a thread of its own beside the encoder: the encoder below waits until a
    detection has begun, which on the former order (the detector after the caption) never happens."""
    import threading

    from capdesk.describe.describer import Describer, caption_threads

    d = Describer(engine.bundle, provider="cpu", others=[])
    detector = d.objects.detector()
    started, threads_used = threading.Event(), []
    real_detect, real_encode = detector.detect, d.primary.encode_named

    def detect(img, *args, **kwargs):
        threads_used.append(threading.current_thread().name)
        started.set()
        return real_detect(img, *args, **kwargs)

    def encode_named(batch):
        assert started.wait(30), "the encoder ran before any detection began"
        return real_encode(batch)

    monkeypatch.setattr(detector, "detect", detect)
    monkeypatch.setattr(d.primary, "encode_named", encode_named)
    pics = [load_image(SAMPLES / n) for n in ("astronaut.png", "chelsea.png")]
    got = d.describe_images(pics)
    assert threads_used and all(n.startswith("capdesk-beside") for n in threads_used)
    # What each picture is told is exactly what the detector finds on it alone.
    assert [r.objects for r in got] == [real_detect(p) for p in pics]
    assert {"person"} <= {o.label for o in got[0].objects} and {"cat"} <= {o.label for o in got[1].objects}
    assert [caption_threads(c) for c in (None, 1, 2, 4, 16)] == [1, 1, 1, 3, 15]


def test_hard_swish_written_for_fusing_is_the_same_function(monkeypatch):
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort
    from onnx import TensorProto, helper

    monkeypatch.syspath_prepend(str(ROOT / "training" / "studies"))
    from detector_eval import with_fused_hardswish

    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], rng.normal(0, 1, 108).astype(np.float32).tolist())
    consts = [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in (("three", 3), ("zero", 0), ("six", 6))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "three"], ["a"]), helper.make_node("Clip", ["a", "zero", "six"], ["k"]),
             helper.make_node("Mul", ["c", "k"], ["m"]), helper.make_node("Div", ["m", "six"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [w, *consts])
    before = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]).SerializeToString()
    after = with_fused_hardswish(before)
    assert [n.op_type for n in onnx.load_from_string(after).graph.node] == ["Conv", "HardSigmoid", "Mul"]
    x = {"x": rng.normal(0, 3, (1, 3, 8, 8)).astype(np.float32)}
    run = [ort.InferenceSession(g, providers=["CPUExecutionProvider"]).run(None, x)[0] for g in (before, after)]
    assert np.abs(run[0]).max() > 1 and np.allclose(run[0], run[1], atol=1e-5)
    assert with_fused_hardswish(after) == after  # nothing left to write


def test_shipped_detector_graph_is_made_from_the_upstream_file(monkeypatch):
    pytest.importorskip("onnx")
    upstream = ROOT.parent / "shared" / "models" / "detectors" / "picodet_s_416_coco.onnx"
    if not upstream.is_file():
        pytest.skip(f"needs the upstream detector ({upstream}), which only the project's machines have")
    monkeypatch.syspath_prepend(str(ROOT / "training" / "studies"))
    from detector_bundle import shipped_graph

    manifest = json.loads((SHIPPED / "manifest.json").read_text())
    assert shipped_graph(upstream.read_bytes()) == (SHIPPED / manifest["graph"]).read_bytes()


@needs_shared_data("everyday")
def test_val_measurement_runs_on_a_few_photos(tmp_path, capsys, monkeypatch):
    pytest.importorskip("onnx")
    monkeypatch.syspath_prepend(str(ROOT / "training" / "studies"))
    import detector_eval

    assert detector_eval.main(["--limit", "6", "--cache", str(tmp_path / "scores.npz")]) == 0
    out = capsys.readouterr().out
    assert "| person |" in out and "ms per picture" in out and "picodet416-stretch" in out


def test_models_verify_checks_the_detector_too(tmp_path):
    import shutil as sh

    from conftest import ROOT, run_cli

    r = run_cli("models", "verify")
    assert r.returncode == 0 and "OK\tdetector\t" in r.stdout
    broken = tmp_path / "detector"
    sh.copytree(ROOT / "models" / "detector", broken)
    (broken / "labels.json").write_text("[]", encoding="utf-8")
    r = run_cli("models", "verify", env={"CAPDESK_DETECTOR": str(broken)})
    assert r.returncode == 1 and "FAILED\tdetector\t" in r.stdout


def test_work_beside_the_caption_runs_in_place_once_threads_cannot_start(monkeypatch):
    """At interpreter shutdown (a watcher's last picture) the pool takes no work: it is done in place."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from capdesk.describe import beside

    closed = ThreadPoolExecutor(max_workers=1)
    closed.shutdown()
    monkeypatch.setattr(beside, "_pool", lambda: closed)
    assert beside.start(lambda: threading.current_thread().name).result() == threading.current_thread().name
    with pytest.raises(ZeroDivisionError):
        beside.start(lambda: 1 / 0).result()
