from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, run_cli

from capdesk import __version__


def test_version_and_help():
    r = run_cli("--version")
    assert r.returncode == 0 and __version__ in r.stdout
    for sub in (["caption"], ["models"], ["models", "verify"]):
        r = run_cli(*sub, "--help")
        assert r.returncode == 0 and "usage:" in r.stdout


@pytest.mark.slow  # 3 s measured on two busy cores
def test_caption_tab_separated():
    r = run_cli("caption", str(SAMPLES / "chelsea.png"), str(SAMPLES / "coffee.png"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2
    path, text = lines[0].split("\t")
    assert path.endswith("chelsea.png") and len(text.split()) >= 2


@pytest.mark.slow  # 2 s measured on two busy cores
def test_caption_json_on_mixed_folder(mixed_folder):
    r = run_cli("caption", "--json", "--beam", "3", str(mixed_folder))
    assert r.returncode == 1
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(recs) == 8
    for rec in recs:
        assert {"path", "caption", "confidence", "model", "provider", "error"} <= set(rec)
        assert rec["model"] == "everyday" and rec["provider"] == "cpu"
    by = {rec["path"].rsplit("/", 1)[-1]: rec for rec in recs}
    good = ["chelsea.png", "Café ☕ überraschung.png", "rocket.jpg", "tiny.bmp"]
    for name in good:
        assert by[name]["error"] is None and by[name]["caption"], name
        assert 0 < by[name]["confidence"] <= 1
    for name, why in [("empty.jpg", "empty"), ("notes.png", "not an image"), ("huge.png", "too large"),
                      ("truncated.jpg", "")]:
        assert by[name]["caption"] is None and why in by[name]["error"], name
        assert "\n" not in by[name]["error"]


@pytest.mark.slow  # 2 s measured on two busy cores
def test_all_good_exits_zero_and_missing_file_one(tmp_path):
    assert run_cli("caption", "--json", str(SAMPLES / "rocket.jpg")).returncode == 0
    r = run_cli("caption", str(tmp_path / "nope.jpg"), str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 1
    assert "file not found" in r.stdout and "rocket.jpg\t" in r.stdout


def test_usage_errors_exit_two():
    assert run_cli("caption").returncode == 2
    assert run_cli("caption", "--beam", "0", str(SAMPLES / "rocket.jpg")).returncode == 2
    r = run_cli("caption", "--model", "no-such-model", str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 2 and "not found" in r.stderr
    r = run_cli("caption", "--provider", "warp-drive", str(SAMPLES / "rocket.jpg"))
    assert r.returncode == 2 and "not available" in r.stderr
    assert run_cli("frobnicate").returncode == 2


@pytest.mark.slow  # 2 s measured on two busy cores
def test_engine_never_imports_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from capdesk.cli.main import main\n"
            f"raise SystemExit(main(['caption', '--json', r'{SAMPLES / 'chelsea.png'}']))")
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["caption"]
