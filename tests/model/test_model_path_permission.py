"""``--model`` naming a folder (or zip) under one the user may not enter: one line naming the path and the
reason, never a traceback, from ``capdesk caption``, ``batch``, ``models verify`` and ``models import``.

The permission is refused for real, by the kernel: as a user other than root a folder of mode 000 does
it; root passes every permission check, so as root the command runs without the two capabilities that
let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: dropped from the bounding set before the command starts)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES

from capdesk.model.bundle import BundleError, open_bundle
from capdesk.model.install import install

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _without_root_access_rights() -> None:
    """In the child, before it runs the command: root loses the rights that pass over permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _as_refused(*cmd: str, cwd) -> subprocess.CompletedProcess:
    """``cmd`` in a process to which the kernel refuses folders of mode 000."""
    pre = _without_root_access_rights if os.geteuid() == 0 else None
    return subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd, timeout=60, preexec_fn=pre)


@pytest.fixture
def locked(tmp_path):
    """``locked/m``: a model folder inside a folder nobody (root without its rights included) may enter."""
    outer = tmp_path / "locked"
    (outer / "m").mkdir(parents=True)
    outer.chmod(0)
    try:
        probe = _as_refused(sys.executable, "-c", f"import os; os.stat({str(outer / 'm')!r})", cwd=tmp_path)
        if "PermissionError" not in probe.stderr:
            pytest.skip("this system lets the test's user into a folder of mode 000 (root with its rights "
                        f"kept: the bounding set could not be lowered): {probe.stderr.strip()[-200:]}")
        yield outer / "m"
    finally:
        outer.chmod(0o700)


def _one_line_naming(r: subprocess.CompletedProcess, path) -> None:
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    assert f"cannot open model folder {path}: permission denied" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("command", [
    ["caption", "--model", "{m}", "{pic}"],
    ["models", "verify", "{m}"],
    ["batch", "-q", "--model", "{m}", "{folder}"],
    ["models", "import", "{m}"],
])
def test_a_model_folder_the_user_cannot_enter_is_one_line_not_a_traceback(locked, tmp_path, command):
    pics = tmp_path / "pics"
    pics.mkdir()
    pic = pics / "coffee.png"
    pic.write_bytes((SAMPLES / "coffee.png").read_bytes())
    args = [a.format(m=locked, pic=pic, folder=pics) for a in command]
    r = _as_refused(sys.executable, "-m", "capdesk", *args, cwd=ROOT)
    _one_line_naming(r, locked)


def test_a_model_path_that_cannot_be_looked_at_raises_bundle_error(tmp_path):
    """The same refusal, in-process: a path through a file (ENOTDIR is 'nothing there') and a name too
    long for the system (ENAMETOOLONG) are BundleErrors, as a refused permission is above."""
    f = tmp_path / "plain"
    f.write_text("x")
    with pytest.raises(BundleError, match="no such model folder"):
        open_bundle(f / "m")
    with pytest.raises(BundleError, match="cannot open model folder .*: file name too long"):
        open_bundle(tmp_path / ("m" * 300))
    with pytest.raises(BundleError, match="cannot open model folder .*: file name too long"):
        install(tmp_path / ("m" * 300), tmp_path / "models")
