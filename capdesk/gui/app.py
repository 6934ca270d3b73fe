"""``capdesk gui [PATH]``: start the desktop application."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

EXIT_NO_DISPLAY = 2
# Qt platform plugins that need no display server.
_HEADLESS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "vkkhrdisplay")


def display_problem(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str | None:
    """Why no window can open here, or None. Without this check Qt aborts the process (exit 134)
    with a misleading message about missing xcb libraries."""
    if not platform.startswith("linux") and "bsd" not in platform:
        return None  # Windows and macOS always have their own window system
    env = os.environ if env is None else env
    qpa = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if qpa.startswith(_HEADLESS):
        return None
    x11, wayland = bool(env.get("DISPLAY")), bool(env.get("WAYLAND_DISPLAY"))
    if qpa == "xcb" and not x11:
        return "QT_QPA_PLATFORM=xcb but DISPLAY is not set: no X display to open the window on"
    if qpa.startswith("wayland") and not wayland:
        return f"QT_QPA_PLATFORM={qpa} but WAYLAND_DISPLAY is not set: no Wayland display to open the window on"
    if not qpa and not (x11 or wayland):
        return ("no display: neither DISPLAY nor WAYLAND_DISPLAY is set; run 'capdesk gui' in a desktop "
                "session (the command line works without one: capdesk caption, batch, watch)")
    return None


def run(path: str | None = None, argv: list[str] | None = None) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None and (problem := display_problem()):
        print(f"capdesk: error: {problem}", file=sys.stderr)
        return EXIT_NO_DISPLAY

    from capdesk.session.settings import Settings

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("CapDesk")
    app.setOrganizationName("CapDesk")
    app.setDesktopFileName("org.capdesk.CapDesk")  # the installed desktop entry's name
    icon = Path(__file__).resolve().parents[2] / "resources" / "icons" / "capdesk.png"
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    settings, problem = Settings.load()
    win = MainWindow(settings, problem)
    win.show()
    if path:
        QTimer.singleShot(0, lambda: win.open_path(Path(path)))
    elif settings.last_folder and Path(settings.last_folder).is_dir():
        QTimer.singleShot(0, lambda: win.open_path(Path(settings.last_folder)))
    return app.exec()
