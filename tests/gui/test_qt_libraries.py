"""``capdesk gui`` where Qt's system libraries are missing: one line naming the library and what to
install, never a traceback nor Qt's abort (exit 134)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from capdesk.gui.app import qt_library_problem


def test_the_x11_plugin_loads_here():
    assert qt_library_problem() is None  # the test machine has every library (install-system-packages.sh)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build a plugin with a missing library")
def test_a_plugin_whose_library_is_missing_is_named(tmp_path):
    # A plugin linked against a library that is then taken away: as libqxcb.so without libxcb-cursor0.
    (tmp_path / "dep.c").write_text("int dep(void) { return 1; }\n")
    (tmp_path / "plugin.c").write_text("int dep(void);\nint plugin(void) { return dep(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libxcb-gone.so.0", "-Wl,-soname,libxcb-gone.so.0", "dep.c"],
                   cwd=tmp_path, check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libqxcb.so", "plugin.c", "-L.", "-l:libxcb-gone.so.0"],
                   cwd=tmp_path, check=True)
    (tmp_path / "libxcb-gone.so.0").unlink()
    why = qt_library_problem(tmp_path / "libqxcb.so")
    assert why is not None and "libxcb-gone.so.0" in why and "install-system-packages.sh --app" in why


def test_qt_that_cannot_load_is_one_line(tmp_path):
    # PySide6's Qt modules failing to import, as they do without libxkbcommon0: what `capdesk gui` says.
    code = ("import sys; sys.modules['PySide6.QtGui'] = None; "
            "from capdesk.gui.app import run; sys.exit(run())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("capdesk: error: the window cannot open"), r.stderr
