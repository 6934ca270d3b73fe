"""The README's first commands, as a new user on a fresh Debian or Ubuntu copies them: no `python`
(only `python3`), a system pip that refuses to install (PEP 668), so a virtual environment first;
and user documents that speak to the user, not of the machines CapDesk is built on."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

README = ROOT / "README.md"
LIMIT_S = 300  # a safety net, never a measurement


def _quick_start() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Quick start"):]
    return section.split("```\n", 2)[1].strip()


def _test_command() -> str:
    """The block CI runs, extracted exactly as .ci/run does it."""
    r = subprocess.run(["awk", r"/<!-- test-command -->/{f=1; next} f && /^```/{if (s) exit; s=1; next} f && s",
                        str(README)], capture_output=True, text=True, check=True, timeout=60)
    return r.stdout.strip()


def _steps(command: str) -> list[str]:
    return [step.strip() for step in command.split("&&")]


@pytest.mark.parametrize("which", ["quick start", "test command"])
def test_first_commands_make_and_use_a_virtual_environment(which):
    command = _quick_start() if which == "quick start" else _test_command()
    assert "\n" not in command  # one command to copy
    steps = _steps(command)
    made = steps.index("python3 -m venv .venv")
    used = steps.index(". .venv/bin/activate")
    assert made < used
    for step in steps[:used]:  # before the environment: no `python` (Debian has none) and no pip (PEP 668)
        words = shlex.split(step)
        assert "python" not in words and "pip" not in words and not (words[:1] == ["python3"] and "pip" in words)
    first_pip = next(i for i, step in enumerate(steps) if re.search(r"\bpip\b", step))
    assert first_pip > used
    if which == "quick start":
        assert "capdesk caption resources/samples" in command
        assert steps[0] == "bash scripts/install-system-packages.sh --app"
    else:
        assert steps[0] == "bash scripts/install-system-packages.sh"
        assert steps[-1] == "python -m pytest -q"
        # the CPU build of PyTorch: the CUDA one that PyPI gives on Linux is several GB the tests never use
        torch = next(shlex.split(s) for s in steps if "torch==2.13.0" in s)
        assert torch[torch.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"


def test_system_packages_include_the_venv_module():
    script = (ROOT / "scripts" / "install-system-packages.sh").read_text(encoding="utf-8")
    default = script[script.index("|| pkgs=("):script.index(")", script.index("|| pkgs=("))]
    assert "python3-venv" in default


def test_the_quick_start_installs_what_the_window_and_speech_need():
    """--app: the venv module, Qt's X libraries (without libxcb-cursor0 Qt aborts, without libxkbcommon0
    PySide6 does not import), a voice and a player (without them --speak fails twice in a row)."""
    script = (ROOT / "scripts" / "install-system-packages.sh").read_text(encoding="utf-8")
    app = script[script.index("APP=(") + 5:script.index(")", script.index("APP=("))].split()
    for need in ("python3-venv", "libgl1", "libglib2.0-0", "libegl1", "libxkbcommon0", "libxkbcommon-x11-0",
                 "libxcb-cursor0", "libxcb-icccm4", "libfontconfig1", "espeak-ng", "libespeak-ng1", "alsa-utils"):
        assert need in app, need


def test_app_packages_elsewhere_are_named(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))
    r = subprocess.run([str(bin_dir / "bash"), "scripts/install-system-packages.sh", "--app"],
                       cwd=ROOT, capture_output=True, text=True, env={"PATH": str(bin_dir)}, timeout=60)
    assert r.returncode == 0 and "libxcb-cursor0" in r.stderr and "alsa-utils" in r.stderr, r.stderr


def test_system_packages_elsewhere_name_them_and_go_on(tmp_path):
    """Not Debian or Ubuntu (no dpkg, no apt-get): the Quick start goes on, with the packages named."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))
    r = subprocess.run([str(bin_dir / "bash"), "scripts/install-system-packages.sh", "python3-venv", "libgl1"],
                       cwd=ROOT, capture_output=True, text=True, env={"PATH": str(bin_dir)}, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "not a Debian or Ubuntu system" in r.stderr and "python3-venv libgl1" in r.stderr


@pytest.mark.skipif(shutil.which("python3") is None, reason="no python3 on PATH")
def test_environment_steps_run_as_ci_runs_them(tmp_path):
    """The test command's own venv steps, word for word, under `bash -euo pipefail` as .ci/run runs
    the command (activate must survive `set -u`): afterwards `python` and `pip` are the environment's."""
    steps = _steps(_test_command())
    venv_steps = " && ".join(steps[steps.index("python3 -m venv .venv"):steps.index(". .venv/bin/activate") + 1])
    probe = f'{venv_steps} && command -v python && command -v pip && python -c "import sys; print(sys.prefix)"'
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=LIMIT_S)
    assert r.returncode == 0, r.stderr
    venv = str(tmp_path / ".venv")
    python, pip, prefix = r.stdout.split()
    assert python == f"{venv}/bin/python" and pip == f"{venv}/bin/pip" and Path(prefix).resolve() == Path(venv)


def test_quick_start_window_step_without_a_display_as_ci_runs_it():
    """Where there is no display the window is not opened, and the step succeeds even under
    `set -u` (an unset DISPLAY is no error)."""
    step = next(s for s in _steps(_quick_start()) if "DISPLAY" in s)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PATH"] = "/nonexistent"  # capdesk must not even be looked for
    r = subprocess.run([shutil.which("bash"), "-euo", "pipefail", "-c", step], cwd=ROOT, capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def _user_documents() -> list[Path]:
    return [README, *sorted((ROOT / "resources").rglob("README*"))]


@pytest.mark.parametrize("doc", _user_documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_user_documents_do_not_speak_of_build_machines(doc):
    text = doc.read_text(encoding="utf-8")
    for phrase in ("these machines", "build machines", "build machine", "../shared", "../data", "never copy",
                   "local wheel folder"):
        assert phrase not in text, f"{doc.name}: {phrase!r}"


def test_readme_says_what_embed_does():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "Images themselves are never modified." not in text  # not while --embed exists
    assert "Images themselves are never modified unless you ask: `capdesk batch --embed`" in text
    assert "_original" in text and "second `--embed` run skips it" in text
