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


# What to install when Qt's system libraries are missing, said with the library that is.
QT_LIBRARIES_HINT = ("on Debian or Ubuntu: bash scripts/install-system-packages.sh --app (from a checkout), or "
                     "sudo apt install libegl1 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 "
                     "libxcb-keysyms1 libxcb-shape0 libxcb-randr0 libxcb-image0 libxcb-render-util0 libfontconfig1")


def qt_library_problem(plugin: Path | None = None) -> str | None:
    """Why Qt's X11 platform plugin cannot load here (a system library it needs is missing), or None.

    Qt aborts the whole process (exit 134) when the plugin it picked fails to load; loading the plugin's
    file first names the missing library instead, and costs nothing when all is there."""
    import ctypes

    if plugin is None:
        try:
            import PySide6
        except ImportError:
            return None
        plugin = Path(next(iter(PySide6.__path__))) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not plugin.exists():
        return None
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        if "cannot open shared object" not in str(exc):
            return f"the window cannot open: Qt's X11 support cannot be loaded ({exc})"
        missing = str(exc).split(":")[0].strip()
        return f"the window cannot open: Qt's X11 support needs {missing}, which is not installed; {QT_LIBRARIES_HINT}"
    return None


def _uses_x11(env: Mapping[str, str]) -> bool:
    qpa = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    return qpa == "xcb" or (not qpa and bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY"))


def run(path: str | None = None, argv: list[str] | None = None) -> int:
    try:
        from PySide6.QtCore import QTimer
        from PySide6.QtGui import QIcon
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:  # Qt's own libraries load, a system one they need does not (libxkbcommon ...)
        why = str(exc).split(":")[0].strip() if "shared object" in str(exc) else str(exc)
        print(f"capdesk: error: the window cannot open: Qt needs {why}, which is not installed; "
              f"{QT_LIBRARIES_HINT}", file=sys.stderr)
        return EXIT_NO_DISPLAY

    if QApplication.instance() is None and (
            (problem := display_problem()) or (_uses_x11(os.environ) and (problem := qt_library_problem()))):
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
