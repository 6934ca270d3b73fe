"""``capdesk models remove NAME`` and the service under it (``capdesk.model.install.remove``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

from capdesk.model.bundle import BundleError, discover, user_models_dir
from capdesk.model.install import removable, remove


def _user_model(default_bundle: Path, name: str = "mine") -> Path:
    dest = user_models_dir() / name
    shutil.copytree(default_bundle, dest)
    m = json.loads((dest / "manifest.json").read_text())
    m["name"] = name
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


def _listed() -> set[str]:
    r = run_cli("models", "list", "--json")
    return {m["name"] for m in json.loads(r.stdout)["models"]}


@pytest.mark.slow  # 3 s measured on two busy cores
def test_remove_with_yes_takes_the_model_away_and_keeps_sidecars_and_falls_back_to_automatic(
        tmp_path, default_bundle):
    from capdesk.session.settings import Settings

    where = _user_model(default_bundle)
    photo = tmp_path / "cat.png"
    shutil.copy(SAMPLES / "chelsea.png", photo)
    r = run_cli("batch", "--model", "mine", "--ocr", "never", "--quiet", str(tmp_path))
    assert r.returncode == 0, r.stderr
    sidecars = sorted(p.name for p in tmp_path.iterdir() if p != photo)
    assert sidecars, "the caption wrote no sidecar"
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    Settings(model="mine").save()
    assert "mine" in _listed()

    r = run_cli("models", "remove", "mine", "--yes")
    assert r.returncode == 0, r.stderr
    assert "removed model 'mine'" in r.stdout and "Automatic" in r.stdout
    assert not where.exists() and "mine" not in _listed()
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before  # the user's alt text is theirs
    assert Settings.load()[0].model == ""
    assert not [p for p in user_models_dir().iterdir() if p.name.startswith(".")]  # nothing left half-deleted


def test_list_says_which_models_are_used_only_when_named(default_bundle):
    where = _user_model(default_bundle)
    m = json.loads((where / "manifest.json").read_text())
    m["base_model"], m["finetune"] = "everyday", {"proved": False, "automatic": False}
    (where / "manifest.json").write_text(json.dumps(m))
    r = run_cli("models", "list", "--json")
    auto = {x["name"]: x["automatic"] for x in json.loads(r.stdout)["models"]}
    assert auto["mine"] is False and auto["everyday"] is True
    line = next(ln for ln in run_cli("models", "list").stdout.splitlines() if ln.startswith("mine\t"))
    assert "used only when named" in line


def test_without_a_terminal_remove_asks_for_yes_and_keeps_the_model(default_bundle):
    where = _user_model(default_bundle)
    r = run_cli("models", "remove", "mine")  # stdin is not a terminal here
    assert r.returncode == 2 and "--yes" in r.stderr
    assert where.is_dir() and "mine" in _listed()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("answer,kept", [("n\n", True), ("\n", True), ("y\n", False)])
def test_on_a_terminal_remove_asks_first(default_bundle, answer, kept):
    where = _user_model(default_bundle)
    master, slave = os.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "capdesk", "models", "remove", "mine"], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        os.write(master, answer.encode())
        out, err = p.communicate(timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    assert p.returncode == 0, err
    assert "Remove model 'mine'" in out
    assert where.exists() is kept
    assert ("model 'mine' kept" in out) is kept


def test_shipped_and_unknown_models_are_refused_with_the_reason(default_bundle):
    r = run_cli("models", "remove", "everyday", "--yes")
    assert r.returncode == 2 and "shipped with CapDesk" in r.stderr and "cannot be removed" in r.stderr
    assert (default_bundle / "manifest.json").exists()
    r = run_cli("models", "remove", "nosuch", "--yes")
    assert r.returncode == 2 and "no model named 'nosuch'" in r.stderr
    with pytest.raises(BundleError, match="not a model name"):
        remove("../everyday")


def test_a_model_from_capdesk_models_is_not_removed_from_its_folder(tmp_path, default_bundle, monkeypatch):
    other = tmp_path / "team-models"
    shutil.copytree(default_bundle, other / "team")
    m = json.loads((other / "team" / "manifest.json").read_text())
    m["name"] = "team"
    (other / "team" / "manifest.json").write_text(json.dumps(m))
    monkeypatch.setenv("CAPDESK_MODELS", str(other))
    with pytest.raises(BundleError, match="CAPDESK_MODELS"):
        remove("team")
    assert (other / "team").is_dir()


def test_a_damaged_model_can_still_be_removed_by_its_name(default_bundle):
    where = _user_model(default_bundle, "broken")
    (where / "manifest.json").write_text("{ not json")
    assert "broken" not in {b.name for b in discover()[0]}
    assert removable("broken") == where
    done = remove("broken")
    assert done.name == "broken" and not where.exists()


def test_a_linked_model_loses_only_the_link(tmp_path, default_bundle):
    real = _user_model(default_bundle, "real")
    target = tmp_path / "elsewhere"
    shutil.move(real, target)
    link = user_models_dir() / "linked"
    link.symlink_to(target, target_is_directory=True)
    m = json.loads((target / "manifest.json").read_text())
    m["name"] = "linked"
    (target / "manifest.json").write_text(json.dumps(m))
    remove("linked")
    assert not os.path.lexists(link) and (target / "manifest.json").exists()
