"""Take the README's screenshot of the real window: python scripts/screenshot.py [PICTURE [WORD]].

Copies the sample pictures to a scratch folder, opens PICTURE there (astronaut.png by default),
waits for the shipped model's caption, selects word WORD (counted from 0) so that its attention map
is drawn over the picture and highlighted in the strip, and saves the window to docs/screenshot.png
(or to the path in CAPDESK_SCREENSHOT). Runs under Xvfb (xvfb-run python scripts/screenshot.py) or,
with no display, on Qt's offscreen platform: the window draws itself the same on both.

Nothing of the person running it is used or touched: settings, models and caches go to the scratch
folder, which is removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "resources" / "samples"
SIZE = (1200, 760)  # the window's own first size
TIMEOUT_MS = 180_000


def _isolate(scratch: Path) -> None:
    os.environ["CAPDESK_SETTINGS"] = str(scratch / "settings.json")
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        os.environ[var] = str(scratch / var.lower())
    os.environ.pop("CAPDESK_MODELS", None)  # the shipped model, as a new user has it
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def take(picture: str, word: int, out: Path) -> int:
    """Open ``picture`` (a sample's name), show word ``word``'s map, save the window to ``out``."""
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from capdesk.gui.main_window import MainWindow
    from capdesk.session.settings import Settings

    scratch = Path(tempfile.mkdtemp(prefix="capdesk-screenshot-"))
    try:
        _isolate(scratch)
        photos = scratch / "Pictures"
        photos.mkdir()
        for f in SAMPLES.iterdir():
            if f.suffix.lower() in (".png", ".jpg", ".jpeg"):
                shutil.copy(f, photos / f.name)
        app = QApplication.instance() or QApplication(sys.argv[:1])
        win = MainWindow(Settings(speech="off", ocr="never"))
        win.resize(*SIZE)
        win.show()
        win.open_path(photos / picture)
        result: list[str] = []

        def ready() -> bool:
            p = win.session.current
            return p is not None and p.described is not None and win.session._busy == 0

        def poll() -> None:
            if not ready():
                QTimer.singleShot(100, poll)
                return
            words = win.pane.words
            if word >= words.count():
                result.append(f"{picture}: its caption has {words.count()} words, no word {word}")
                app.quit()
                return
            words.setCurrentRow(word)
            QTimer.singleShot(500, save)  # the layout and the strip have settled

        def save() -> None:
            out.parent.mkdir(parents=True, exist_ok=True)
            if win.grab().save(str(out)):
                result.append(f"saved {out} ({app.platformName()}): {picture}, "
                              f"“{win.pane.words.currentItem().text()}” selected")
            else:
                result.append(f"could not write {out}")
            app.quit()

        QTimer.singleShot(100, poll)
        QTimer.singleShot(TIMEOUT_MS, lambda: (result.append("timed out waiting for the caption"), app.quit()))
        app.exec()
        win.close()
        print(result[0] if result else "nothing happened")
        return 0 if result and result[0].startswith("saved") else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str]) -> int:
    picture = argv[0] if argv else "astronaut.png"
    word = int(argv[1]) if len(argv) > 1 else 1
    out = Path(os.environ.get("CAPDESK_SCREENSHOT", ROOT / "docs" / "screenshot.png"))
    return take(picture, word, out)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
