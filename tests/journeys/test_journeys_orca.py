"""A blind user's day in the window, under the real Orca screen reader, keyboard only: stop watching a
folder, the status line in flat review, the menu bar by F10 and by Alt, combo boxes changed with the
arrow keys, Settings saved and the focus back, a picture copied to the clipboard while alt text is being
typed, an unsaved edit on switching pictures and on quitting.

One run of the shared harness (``../shared/tools/orca_speech.sh``, Debian's Orca 43.1 on a virtual
display) serves every test here; each asserts what Orca said and what ended up on disk.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import orca_runs
import pytest
from conftest import SAMPLES
from test_orca import HARNESS, _harness_outcome, _said_between, _steps, _why_not

pytestmark = [pytest.mark.slow, pytest.mark.orca, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]

TYPED_1, TYPED_2 = "My own words", " about the astronaut."
STEPS = f"""\
wait 40
# where the model looked, for the first word of the caption
key ctrl+period
wait 4
# stop watching: the one watched folder is offered, Enter stops it
key ctrl+shift+r
wait 4
key Return
wait 4
# flat review: the bottom line of the window is the status line, with the last message
key Insert+KP_Page_Up
wait 3
key KP_Subtract
wait 2
# the menu bar: by F10, then by Alt alone; Escape goes back to the list each time
key F10
wait 4
key Escape
wait 3
key alt
wait 4
key Escape
wait 3
# Batch: the folder field read whole, the report format changed with an arrow key
key ctrl+b
wait 5
key Tab
wait 3
key shift+Tab
wait 3
key alt+r
wait 3
key Down
wait 4
key Escape
wait 4
# Settings: XMP naming changed with an arrow key, then saved
key ctrl+shift+p
wait 5
key alt+n
wait 3
key Down
wait 4
key Return
wait 5
# alt text typed while a picture arrives on the clipboard
key alt+a
wait 3
key ctrl+a
wait 1
type {TYPED_1}
wait 2
key ctrl+shift+v
wait 30
type {TYPED_2}
wait 3
# to the next picture with the edit unsaved: asked; Escape keeps it
key alt+i
wait 3
key Down
wait 5
key Escape
wait 5
# quitting with the edit unsaved: asked; Enter saves
key ctrl+q
wait 5
key Return
wait 8
"""

# Puts a picture on the clipboard (and keeps serving it, as X wants) once the window has turned
# clipboard captioning on, which it writes to the settings file.
COPIER = """\
import json, sys, time
from pathlib import Path
settings, image = Path(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 800
while time.monotonic() < deadline:
    try:
        if json.loads(settings.read_text(encoding="utf-8")).get("clipboard"):
            break
    except (OSError, ValueError):
        pass
    time.sleep(0.2)
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
app = QApplication([])
app.clipboard().setImage(QImage(image))
app.exec()
"""

WRAPPER = """\
import subprocess, sys
copier = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2], sys.argv[3]])
try:
    sys.exit(subprocess.call([sys.executable, "-m", "capdesk", "gui", sys.argv[4]]))
finally:
    copier.terminate()
    copier.wait(10)
"""


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    folder, inbox = base / "pics", base / "inbox"
    folder.mkdir()
    inbox.mkdir()
    for n in ("astronaut.png", "chelsea.png"):
        shutil.copy(SAMPLES / n, folder / n)
    settings = base / "settings.json"
    settings.write_text(json.dumps({"watch_folders": [str(inbox)], "clipboard": False, "confidence_threshold": 0.0,
                                    "ocr": "never"}), encoding="utf-8")
    (base / "copier.py").write_text(COPIER, encoding="utf-8")
    (base / "wrapper.py").write_text(WRAPPER, encoding="utf-8")
    (base / "steps.txt").write_text(STEPS, encoding="utf-8")
    env = {k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"}
    env["CAPDESK_SETTINGS"] = str(settings)
    return orca_runs.Harness(["bash", str(HARNESS), str(base / "steps.txt"), str(base / "out"), "--", sys.executable,
                              str(base / "wrapper.py"), str(base / "copier.py"), str(settings),
                              str(SAMPLES / "coffee.png"), str(folder)], env)


orca_runs.register(__file__, _prepare, _why_not)


@pytest.fixture(scope="module")
def day():
    run, text = _harness_outcome(__file__)
    return _steps(text), run.base / "pics", run.base / "inbox", run.base / "settings.json"


def _after(steps, step: str, nth: int = 1) -> list[str]:
    """What Orca said from the ``nth`` step named ``step`` until the next key step."""
    names = [s for s, _ in steps]
    i = [k for k, s in enumerate(names) if s == step][nth - 1]
    j = next((k for k in range(i + 1, len(names)) if names[k].startswith(("key ", "type "))), len(names))
    return [t for _, said in steps[i:j] for t in said]


def test_stop_watching_is_spoken_and_forgotten(day):
    steps, _, inbox, settings = day
    said = _after(steps, "key Return", 1)
    assert f"Stopped watching {inbox}; no folder is watched now" in said, said
    assert json.loads(settings.read_text(encoding="utf-8"))["watch_folders"] == []


def test_the_status_line_is_in_flat_review(day):
    steps, _, inbox, _ = day
    said = _after(steps, "key Insert+KP_Page_Up")  # Orca's "bottom of the window" in flat review
    assert any(t.startswith(f"Stopped watching {inbox}") for t in said), said


def test_attention_step_is_spoken(day):
    steps, *_ = day
    said = _after(steps, "key ctrl+period")
    assert any(t.startswith(("Word 1 of ", "No words")) for t in said), said


def test_menu_bar_opens_with_f10_and_alt_and_escape_comes_back(day):
    steps, *_ = day
    for key in ("key F10", "key alt"):
        said = _after(steps, key)
        assert "File" in said, (key, said)
    # Escape leaves the menu bar for the list the person was in (it used to keep Qt's focus, and the
    # next dialog gave the focus back to it: Alt+A then opened the File menu)
    for nth in (1, 2):
        back = _after(steps, "key Escape", nth)
        assert "Images" in back or any(t.startswith("astronaut.png") for t in back), (nth, back)


def test_folder_field_is_read_whole(day):
    steps, folder, *_ = day
    said = _after(steps, "key shift+Tab")
    assert str(folder) in said, said  # Qt's QLineEdit was heard one character short


def test_combo_boxes_changed_by_arrows_are_spoken(day):
    steps, *_ = day
    assert "CSV" in _after(steps, "key Down", 1)
    assert any(t.startswith("photo.xmp") or t == "stem" for t in _after(steps, "key Down", 2)), \
        _after(steps, "key Down", 2)


def test_settings_saved_is_said_and_the_focus_comes_back(day):
    steps, *_ = day
    closed = _after(steps, "key Return", 2)
    assert any(t.startswith("Settings saved") for t in closed), closed
    assert "Images" in closed, closed  # back in the window, in the list the person left
    assert any(t.startswith("Alt text") for t in _after(steps, "key alt+a")), _after(steps, "key alt+a")


def test_clipboard_picture_while_typing_is_said_not_shown(day):
    steps, folder, _, _ = day
    arrived = _between_keys(steps, "key ctrl+shift+v", f"type {TYPED_2}")
    assert any(" added to the list, not shown: " in t for t in arrived), arrived
    # the typing stayed in the astronaut's alt text: it is what quitting saved (below)
    assert (folder / "astronaut.txt").read_text(encoding="utf-8").strip() == TYPED_1 + TYPED_2


def test_unsaved_edit_is_asked_about_on_switching_and_on_quitting(day):
    steps, folder, _, _ = day
    switching = _after(steps, "key Down", 3)
    assert any("Your alt text for astronaut.png is not saved. Save it before showing chelsea.png" in t
               for t in switching), switching
    kept = _after(steps, "key Escape", 4)
    assert any("Your edit of astronaut.png is kept" in t for t in kept), kept
    assert not any(t.startswith("chelsea.png") for t in switching + kept), switching + kept  # never moved
    quitting = _after(steps, "key ctrl+q")
    assert any("Save it before quitting" in t for t in quitting), quitting
    assert (folder / "astronaut.txt").exists() and not (folder / "chelsea.txt").exists()


def _between_keys(steps, first: str, last: str) -> list[str]:
    return _said_between(steps, first, last)

