"""The main window opens within the screen it is on: at 1024x768 (at 100% and at 200% scaling) every control is
inside the screen's available area, and a size remembered from a larger monitor is fitted, not kept. On a screen
smaller than the window's least size (1024x768 pixels at 200% scaling: 512x384) the window still fits, its
content scrolls, and moving the focus with Tab brings every control into view. Real Qt
(offscreen, with a screen of the test's own size), the real main window, in a process of its own because Qt's
screens are fixed for a process's life."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

PROBE = r"""
import json, sys
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QApplication, QComboBox, QLineEdit,
                               QPlainTextEdit, QStatusBar, QTextEdit)
app = QApplication([])
from capdesk.gui.main_window import MainWindow
from capdesk.session.settings import Settings
settings, _ = Settings.load()
w = MainWindow(settings)
w.show()
app.processEvents()
avail = app.primaryScreen().availableGeometry()
kinds = (QAbstractButton, QAbstractItemView, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit, QStatusBar)
outside = []
for c in w.findChildren(object):
    if isinstance(c, kinds) and c.isVisibleTo(w) and c.window() is w:
        top_left = c.mapToGlobal(c.rect().topLeft())
        bottom_right = c.mapToGlobal(c.rect().bottomRight())
        if not (avail.contains(top_left) and avail.contains(bottom_right)):
            outside.append([type(c).__name__, c.accessibleName(), top_left.x(), top_left.y(),
                            bottom_right.x(), bottom_right.y()])
g = w.geometry()
# Tab through the window: each control that takes the focus must then be in view, at least its top-left corner
# and a part of it inside the screen's available area.
out_of_view, walked = [], set()
for _ in range(80):
    w.focusNextChild()
    app.processEvents()
    f = app.focusWidget()
    if f is None or f.window() is not w:
        continue
    walked.add(f.accessibleName() or type(f).__name__)
    corner = f.mapToGlobal(f.rect().topLeft())
    inner = f.mapToGlobal(f.rect().topLeft() + f.rect().center() / 8)
    if not (avail.contains(corner) and avail.contains(inner) and g.contains(inner)):
        out_of_view.append([type(f).__name__, f.accessibleName(), corner.x(), corner.y()])
print(json.dumps({"out_of_view": out_of_view, "walked": sorted(walked),
                  "available": [avail.x(), avail.y(), avail.width(), avail.height()],
                  "window": [g.x(), g.y(), g.width(), g.height()], "dpr": app.primaryScreen().devicePixelRatio(),
                  "outside": outside}))
w.ask_unsaved = lambda *a: None
w.close()
"""


def _open(tmp_path, width: int, height: int, dpr: int, remembered: list[int] | None = None) -> dict:
    screens = tmp_path / "screens.json"
    screens.write_text(json.dumps({"screens": [{"name": "test", "x": 0, "y": 0, "width": width, "height": height,
                                                "logicalDpi": 96, "dpr": dpr}]}))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"speech": "off", "ocr": "never",
                                    **({"window_size": remembered} if remembered else {})}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screens}", CAPDESK_SETTINGS=str(settings),
               XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"),
               XDG_STATE_HOME=str(tmp_path / "s"), XDG_CACHE_HOME=str(tmp_path / "k"))
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    seen["saved"] = json.loads(settings.read_text())["window_size"]
    return seen


@pytest.mark.parametrize("dpr", [1, 2])
def test_every_control_is_on_a_1024_by_768_screen(tmp_path, dpr):
    seen = _open(tmp_path, 1024, 768, dpr)
    ax, ay, aw, ah = seen["available"]
    x, y, w, h = seen["window"]
    assert seen["dpr"] == dpr
    assert ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah, seen
    assert seen["outside"] == [], seen  # the Copy button, the details and the status bar among them
    assert seen["saved"] == [w, h]  # remembered on closing


def test_a_size_remembered_from_a_larger_monitor_is_fitted(tmp_path):
    seen = _open(tmp_path, 1024, 768, 1, remembered=[1800, 1100])
    _, _, w, h = seen["window"]
    assert w < 1024 and h < 768 and seen["outside"] == [], seen


def test_a_size_that_fits_is_kept(tmp_path):
    seen = _open(tmp_path, 1920, 1080, 1, remembered=[1000, 700])
    assert seen["window"][2:] == [1000, 700], seen


def test_on_a_screen_smaller_than_the_window_the_content_scrolls_and_tab_reaches_every_control(tmp_path):
    seen = _open(tmp_path, 512, 384, 2)  # a 1024x768 screen at 200% scaling
    ax, ay, aw, ah = seen["available"]
    x, y, w, h = seen["window"]
    assert ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah, seen
    assert seen["out_of_view"] == [], seen
    for name in ("Images", "Alt text", "Caption again (F5)", "Copy alt text (Ctrl+Shift+C)"):
        assert name in seen["walked"], seen["walked"]
