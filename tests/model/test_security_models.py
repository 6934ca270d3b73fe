"""Issue 34, items 10 and 11: ``--model NAME`` means an installed model, never a folder of that name
in the current folder; a manifest's input square and grid are bounded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from capdesk.model.bundle import BundleError, looks_like_path, open_bundle, resolve
from capdesk.model.install import install
from capdesk.model.manifest import ManifestError, validate


def copy_named(default_bundle: Path, dest: Path, name: str, description: str) -> Path:
    shutil.copytree(default_bundle, dest)
    m = json.loads((dest / "manifest.json").read_text())
    m["name"], m["description"] = name, description
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


@pytest.fixture
def unpacked_archive(tmp_path, default_bundle, monkeypatch) -> Path:
    """The current folder holds a folder ``everyday``: a bundle of the shipped model's name."""
    here = tmp_path / "archive"
    copy_named(default_bundle, here / "everyday", "everyday", "SWAPPED")
    monkeypatch.chdir(here)
    return here


def test_bare_name_is_the_installed_model_not_a_folder_here(unpacked_archive, default_bundle):
    b = resolve("everyday")
    assert b.path.resolve() == default_bundle.resolve()
    assert b.manifest["description"] != "SWAPPED"
    # The folder is still reachable when asked for as a path.
    assert resolve("./everyday").manifest["description"] == "SWAPPED"
    assert resolve(str(unpacked_archive / "everyday")).manifest["description"] == "SWAPPED"


def test_bare_name_of_a_folder_that_is_no_installed_model_says_how_to_name_the_folder(unpacked_archive,
                                                                                     default_bundle):
    copy_named(default_bundle, unpacked_archive / "local-only", "local-only", "x")
    with pytest.raises(BundleError) as err:
        resolve("local-only")
    assert "not found" in str(err.value) and "./local-only" in str(err.value)


@pytest.mark.slow  # 2 s measured on two busy cores
def test_caption_command_uses_the_installed_model_from_inside_the_archive(unpacked_archive):
    r = run_cli("models", "verify", "everyday", cwd=unpacked_archive)
    assert r.returncode == 0, r.stderr
    assert str(unpacked_archive) not in r.stdout
    r = run_cli("caption", "--json", "--beam", "1", "--model", "everyday", "--ocr", "never",
                str(SAMPLES / "rocket.jpg"), cwd=unpacked_archive)
    assert r.returncode == 0, r.stderr
    assert str(unpacked_archive) not in r.stdout


@pytest.mark.parametrize("text, is_path", [
    ("everyday", False), ("my.model-2", False), ("./everyday", True), ("../m", True), (".", True),
    ("/opt/m", True), ("sub/m", True), ("m.zip", True), ("M.ZIP", True),
])
def test_what_counts_as_a_path(text, is_path):
    assert looks_like_path(text) is is_path


# -- item 11: the input square and the grid ----------------------------------------------------------
def _manifest(default_bundle: Path) -> dict:
    return json.loads((default_bundle / "manifest.json").read_text())


@pytest.mark.parametrize("field, value", [("input_size", 4096), ("input_size", 1025), ("input_size", 8),
                                          ("grid", 65536), ("grid", 4097)])
def test_oversized_input_or_grid_refused_with_the_field_named(default_bundle, field, value):
    m = _manifest(default_bundle)
    m["encoder"][field] = value
    with pytest.raises(ManifestError) as err:
        validate(m)
    msg = str(err.value)
    assert f"encoder.{field}" in msg and str(value) in msg and "\n" not in msg


def test_bounds_keep_the_shipped_and_large_real_models(default_bundle):
    m = _manifest(default_bundle)
    for size in (224, 600, 1024):
        m["encoder"]["input_size"] = size
        validate(m)
    m["encoder"]["grid"] = 64 * 64
    validate(m)


def test_input_size_4096_bundle_refused_at_open_and_import(tmp_path, default_bundle):
    src = tmp_path / "big"
    shutil.copytree(default_bundle, src)
    m = _manifest(default_bundle)
    m["name"] = "big"
    m["encoder"]["input_size"] = 4096
    (src / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match=r"big: manifest 'encoder.input_size' is 4096"):
        open_bundle(src)
    with pytest.raises(BundleError, match="input_size"):
        install(src)
