from __future__ import annotations

import json
import shutil
import zipfile

import pytest
from conftest import run_cli

from capdesk.model.bundle import BundleError, discover, open_bundle, resolve
from capdesk.model.engine import Engine


@pytest.fixture
def bundle_copy(tmp_path, default_bundle):
    dst = tmp_path / "models" / "copy"
    shutil.copytree(default_bundle, dst)
    return dst


def test_shipped_default_is_found_and_sound(default_bundle):
    b = resolve(None)
    assert b.name == "everyday"
    assert b.verify() == []
    names = {x.name for x in discover()[0]}
    assert {"everyday", "aerial"} <= names


def test_manifest_records_contract(default_bundle):
    m = json.loads((default_bundle / "manifest.json").read_text())
    enc = m["encoder"]
    assert enc["grid"] > 1 and enc["feature_dim"] > 0 and len(enc["mean"]) == 3
    for fn in ("encoder.onnx", "decoder_init.onnx", "decoder_step.onnx", "vocab.json"):
        assert len(m["files"][fn]["sha256"]) == 64
    assert "test" in m["metrics"] and "licence" in m


def test_tampered_file_is_refused(bundle_copy):
    p = bundle_copy / "decoder_step.onnx"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="decoder_step.onnx does not match its sha256"):
        Engine(str(bundle_copy))
    assert any("decoder_step.onnx" in e for e in open_bundle(bundle_copy).verify())


def test_truncated_file_is_refused(bundle_copy):
    p = bundle_copy / "encoder.onnx"
    p.write_bytes(p.read_bytes()[:1000])
    with pytest.raises(BundleError, match="encoder.onnx is 1000 bytes"):
        Engine(str(bundle_copy))


def test_missing_file_and_bad_manifest(bundle_copy):
    (bundle_copy / "vocab.json").unlink()
    with pytest.raises(BundleError, match="vocab.json is missing"):
        Engine(str(bundle_copy))
    (bundle_copy / "manifest.json").write_text("{not json")
    with pytest.raises(BundleError, match="manifest.json is unreadable"):
        open_bundle(bundle_copy)
    (bundle_copy / "manifest.json").unlink()
    with pytest.raises(BundleError, match="no manifest.json"):
        open_bundle(bundle_copy)


def test_future_format_version_refused(bundle_copy):
    mf = bundle_copy / "manifest.json"
    m = json.loads(mf.read_text())
    m["format_version"] = 99
    mf.write_text(json.dumps(m))
    with pytest.raises(BundleError, match="format_version 99"):
        open_bundle(bundle_copy)


def test_zipped_bundle_loads_and_captions(tmp_path, default_bundle):
    z = tmp_path / "everyday.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        for f in default_bundle.iterdir():
            if f.is_file():
                zf.write(f, f"everyday/{f.name}")
    eng = Engine(str(z), provider="cpu", beam=1)
    from conftest import SAMPLES

    assert eng.caption_file(SAMPLES / "chelsea.png").words


def test_user_folder_bundles_are_discovered(tmp_path, default_bundle, monkeypatch):
    from capdesk.model.bundle import user_models_dir

    dst = user_models_dir() / "mine"
    shutil.copytree(default_bundle, dst)
    m = json.loads((dst / "manifest.json").read_text())
    m["name"] = "mine"
    (dst / "manifest.json").write_text(json.dumps(m))
    b = resolve("mine")
    assert b.source == "user" and b.path == dst
    broken = user_models_dir() / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("[]")
    bundles, problems = discover()
    assert "mine" in {x.name for x in bundles}
    assert any("broken" in p and "not a JSON object" in p for p in problems)


@pytest.mark.slow  # 3 s measured on two busy cores
def test_cli_models_list_and_verify(bundle_copy):
    r = run_cli("models", "list", "--json")
    assert r.returncode == 0, r.stderr
    names = {m["name"] for m in json.loads(r.stdout)["models"]}
    assert "everyday" in names
    r = run_cli("models", "verify", "everyday")
    assert r.returncode == 0 and r.stdout.startswith("OK\teveryday")
    (bundle_copy / "vocab.json").write_text("[]")
    r = run_cli("models", "verify", str(bundle_copy))
    assert r.returncode == 1 and "vocab.json is 2 bytes" in r.stdout
    r = run_cli("models", "verify", "no-such-model")
    assert r.returncode == 2 and "not found" in r.stderr
