"""The real main window (offscreen Qt), opened the one way every window test opens it: on a settings file of
the test's own, with speech off and text reading off unless a test asks, an unsaved edit dropped on closing
(pytest-qt closes the window before the fixture's teardown; the tests of that question answer it themselves),
and no describing job outliving its window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

WINDOW_TIMEOUT_MS = 240_000  # a job still running at teardown, on two busy cores


@pytest.fixture
def open_window(qtbot, tmp_path, monkeypatch) -> Iterator[Callable[..., Any]]:
    """``open_window(models=None, size=None, focus=False, **settings)``: the window, shown.

    ``models`` names a models folder (CAPDESK_MODELS); ``size`` is (width, height); ``focus`` waits until a
    widget has the keyboard focus, as a person's first key press needs."""
    import os

    from PySide6.QtWidgets import QApplication, QMessageBox

    from capdesk.gui.main_window import MainWindow
    from capdesk.session.settings import Settings

    opened = []

    def open_(models=None, size: tuple[int, int] | None = None, focus: bool = False, **settings: Any):
        if "CAPDESK_SETTINGS" not in os.environ or not os.environ["CAPDESK_SETTINGS"].startswith(str(tmp_path)):
            monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "config" / "settings.json"))
        if models is not None:
            monkeypatch.setenv("CAPDESK_MODELS", str(models))
        w = MainWindow(Settings(**{"speech": "off", "ocr": "never", **settings}))
        w.ask_unsaved = lambda *a: QMessageBox.StandardButton.Discard
        qtbot.addWidget(w)
        if size is not None:
            w.resize(*size)
        w.show()
        if focus:
            w.activateWindow()
            qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=5000)
        opened.append(w)
        return w

    yield open_
    for w in opened:
        qtbot.waitUntil(lambda w=w: w.session._busy == 0, timeout=WINDOW_TIMEOUT_MS)
        w.close()
