"""``capdesk gui [PATH]``: start the desktop application."""

from __future__ import annotations

import sys
from pathlib import Path


def run(path: str | None = None, argv: list[str] | None = None) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from capdesk.settings import Settings

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
