"""A person's own alt text, heard under the real Orca screen reader across a restart of the window.

The person writes alt text for the first picture and saves it (Ctrl+S), reads it with End and Ctrl+End,
leaves it for the next picture, walks the menu bar with F10 and Right, opens File with Alt+F, and quits.
The window is started again on the same folder: the person's words are what Orca reads for the picture
(never the model's caption), Ctrl+S with nothing edited writes nothing, and F5 asks before captioning the
picture over the person's words (Escape: no).

One run of the shared harness (``../shared/tools/orca_speech.sh``, Debian's Orca 43.1 on a virtual
display) serves every test here; a small wrapper starts the window twice and notes the sidecars' bytes
between the two, so that the tests can tell whether the second window wrote anything.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import orca_runs
import pytest
from conftest import SAMPLES
from test_orca import HARNESS, _harness_outcome, _steps, _why_not

from capdesk.session import messages

pytestmark = [pytest.mark.slow, pytest.mark.orca, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]

WORDS = "A person in a white suit stands beside a flag"
STEPS = f"""\
wait 40
# the person's own words for the first picture, saved
key alt+a
wait 3
key ctrl+a
wait 1
type {WORDS}
wait 2
key ctrl+s
wait 4
key End
wait 2
key ctrl+End
wait 2
# a part of the text selected, then the next picture
key shift+Home
wait 2
key alt+i
wait 3
key Down
wait 15
# the menu bar by F10, then Right twice; File by Alt+F
key F10
wait 3
key Right
wait 3
key Right
wait 3
key Escape
wait 2
key Escape
wait 3
key alt+f
wait 3
key Escape
wait 3
# quit; the window starts again on the same folder
key ctrl+q
wait 35
key Up
wait 5
key ctrl+s
wait 4
key F5
wait 5
key Escape
wait 4
key ctrl+q
wait 5
"""

# Starts the window, notes the sidecars' bytes once it has quit, and starts it again.
WRAPPER = """\
import hashlib, json, subprocess, sys
from pathlib import Path
folder, snap = Path(sys.argv[1]), Path(sys.argv[2])
subprocess.call([sys.executable, "-m", "capdesk", "gui", str(folder)])
snap.write_text(json.dumps({p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                            for p in sorted(folder.iterdir()) if p.suffix in (".txt", ".xmp")}))
sys.exit(subprocess.call([sys.executable, "-m", "capdesk", "gui", str(folder)]))
"""


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    folder = base / "pics"
    folder.mkdir()
    for n in ("astronaut.png", "chelsea.png"):
        shutil.copy(SAMPLES / n, folder / n)
    settings = base / "settings.json"
    settings.write_text(json.dumps({"ocr": "never", "clipboard": False, "watch_folders": []}), encoding="utf-8")
    (base / "wrapper.py").write_text(WRAPPER, encoding="utf-8")
    (base / "steps.txt").write_text(STEPS, encoding="utf-8")
    env = {k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"}  # a real window on the virtual display
    env["CAPDESK_SETTINGS"] = str(settings)
    return orca_runs.Harness(["bash", str(HARNESS), str(base / "steps.txt"), str(base / "out"), "--", sys.executable,
                              str(base / "wrapper.py"), str(folder), str(base / "snap.json")], env)


orca_runs.register(__file__, _prepare, _why_not)


@pytest.fixture(scope="module")
def walk():
    run, text = _harness_outcome(__file__)
    keep = os.environ.get("CAPDESK_ORCA_TRANSCRIPT")  # where to keep what Orca said, to read it afterwards
    if keep:
        Path(keep).write_text(text, encoding="utf-8")
    return _steps(text), run.base / "pics", run.base / "snap.json"


def _after(steps, step: str, nth: int = 1) -> list[str]:
    """What Orca said from the ``nth`` step named ``step`` until the next key step."""
    names = [s for s, _ in steps]
    i = [k for k, s in enumerate(names) if s == step][nth - 1]
    j = next((k for k in range(i + 1, len(names)) if names[k].startswith(("key ", "type "))), len(names))
    return [t for _, said in steps[i:j] for t in said]


def test_the_words_are_saved_by_the_first_window(walk):
    steps, folder, snap = walk
    assert any(t.startswith("Alt text saved to astronaut.txt") for t in _after(steps, "key ctrl+s")), \
        _after(steps, "key ctrl+s")
    assert (folder / "astronaut.txt").read_text(encoding="utf-8").strip() == WORDS
    assert "astronaut.txt" in json.loads(snap.read_text(encoding="utf-8"))


def test_after_a_restart_the_person_s_words_are_heard_not_a_caption(walk):
    steps, *_ = walk
    restarted = _after(steps, "key ctrl+q") + _after(steps, "key Up")
    assert any(WORDS in t for t in restarted), restarted
    assert not any(t.startswith("Probably") for t in restarted), restarted
    assert any("written or edited by a person" in t for t in restarted), restarted


def test_ctrl_s_with_nothing_edited_writes_nothing(walk):
    steps, folder, snap = walk
    said = _after(steps, "key ctrl+s", 2)
    assert any(t.startswith(messages.NOTHING_CHANGED.rstrip(".")) for t in said), said
    before = json.loads(snap.read_text(encoding="utf-8"))
    import hashlib

    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
             if p.suffix in (".txt", ".xmp")}
    assert after == before  # nothing on disk changed after the restart, F5 included
    assert (folder / "astronaut.txt").read_text(encoding="utf-8").strip() == WORDS


def test_f5_asks_before_captioning_over_the_person_s_words(walk):
    steps, *_ = walk
    said = _after(steps, "key F5")
    question = messages.caption_over_person_question("astronaut.png")
    assert any(question.split("?")[0] in t for t in said), said


def test_the_next_picture_is_heard_without_text_unselected(walk):
    # A part of the alt text was selected (Shift+Home) before Alt+I and Down: the selection ends as the box is
    # left, so nothing comes between the next picture's name and its words.
    steps, *_ = walk
    said = _after(steps, "key Down")
    assert any(t.startswith("chelsea.png") for t in said), said
    assert not any("unselected" in t for t in said), said


def test_f10_then_right_walks_the_menus(walk):
    steps, *_ = walk
    first, second = _after(steps, "key Right", 1), _after(steps, "key Right", 2)
    assert any(t.startswith("Caption") for t in first), first  # the next menu, not the picture list
    assert not any(t.startswith(("Images", "chelsea.png", "astronaut.png")) for t in first + second), first + second
    assert any(t.startswith(("Watch", "Add watched folder")) for t in second), second  # and the one after it


def test_alt_f_opens_file(walk):
    steps, *_ = walk
    said = _after(steps, "key alt+f")
    assert any(t.startswith(("File", "Open folder")) for t in said), said
