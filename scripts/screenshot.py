"""Take the README's screenshot: the real window (run under Xvfb: xvfb-run python scripts/screenshot.py).

Opens a sample photo, waits for its caption, selects a word to show its attention map,
and saves the window to docs/screenshot.png.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CAPDESK_SETTINGS", "/tmp/capdesk-screenshot-settings.json")


def main() -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from capdesk.gui.main_window import MainWindow
    from capdesk.session.settings import Settings

    app = QApplication(sys.argv[:1])
    win = MainWindow(Settings(speech="off", ocr="never"))
    win.resize(1180, 720)
    win.show()
    image = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "resources" / "samples" / "chelsea.png"
    word = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    win.open_path(image)
    out = ROOT / "docs" / "screenshot.png"

    def poll() -> None:
        if win.words.count() > word:
            win.words.setCurrentRow(word)
            QTimer.singleShot(400, lambda: (win.grab().save(str(out)), print(f"platform {app.platformName()}: "
                                                                               f"saved {out}"), app.quit()))
        else:
            QTimer.singleShot(200, poll)

    QTimer.singleShot(200, poll)
    QTimer.singleShot(120_000, app.quit)
    app.exec()
    return 0 if out.exists() else 1


if __name__ == "__main__":
    raise SystemExit(main())
