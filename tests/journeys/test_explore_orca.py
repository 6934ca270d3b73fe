"""Exploring a picture by keyboard under the real Orca screen reader: each thing found said once.

The window opens on a folder with the astronaut and the coffee photo; with the focus on the Images list, F7
moves through what was found in the picture (the astronaut: a person the detector is less sure of, bottom
left, then a person in the middle), past the end, and round again; Shift+F7 goes back, past the start and on
from the last; then on the coffee photo F7 and Shift+F7 again. Each key press says one thing, once, and no
stray words with it.

One run of the shared harness (``../shared/tools/orca_speech.sh``, Debian's Orca 43.1 on a virtual
display) serves every test here. Run it alone: one Orca at a time (``flock /tmp/orca.lock pytest ...``).
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

pytestmark = [pytest.mark.slow, pytest.mark.orca, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]

END = "End of what was found; F7 starts again from the first"
START = "Start of what was found; Shift+F7 starts again from the last"
KEYS = ["F7", "F7", "F7", "F7", "shift+F7", "shift+F7"]  # on the astronaut: past the end, round, back past the start
ON_COFFEE = ["F7", "F7", "shift+F7"]


def _expected() -> list[str]:
    """The one thing each key press must say, from what the real model finds in the two pictures."""
    from capdesk.describe.describer import Describer
    from capdesk.session import messages

    d = Describer()
    names = ("astronaut.png", "coffee.png")
    found = [x.found() for x in d.describe_images([d.load_picture(SAMPLES / n) for n in names],
                                                  [str(SAMPLES / n) for n in names])]
    astronaut, coffee = ([messages.found_part(p.said(), i, len(f)) for i, p in enumerate(f, 1)] for f in found)
    assert len(astronaut) == 2 and len(coffee) == 2, (astronaut, coffee)  # the steps below are for two each
    return [astronaut[0], astronaut[1], END, astronaut[0], START, astronaut[1], coffee[0], coffee[1], coffee[0]]


def _script() -> str:
    lines = ["wait 40"]
    for key in KEYS:
        lines += [f"key {key}", "wait 3"]
    lines += ["key Down", "wait 15"]
    for key in ON_COFFEE:
        lines += [f"key {key}", "wait 3"]
    return "\n".join(lines) + "\n"


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    pics = base / "pictures"
    pics.mkdir()
    for n in ("astronaut.png", "coffee.png"):
        shutil.copy(SAMPLES / n, pics / n)
    settings = base / "settings.json"
    settings.write_text(json.dumps({"ocr": "never", "clipboard": False, "watch_folders": []}), encoding="utf-8")
    (base / "steps.txt").write_text(_script(), encoding="utf-8")
    env = {k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"}  # a real window on the virtual display
    env["CAPDESK_SETTINGS"] = str(settings)
    return orca_runs.Harness(["bash", str(HARNESS), str(base / "steps.txt"), str(base / "out"), "--", sys.executable,
                              "-m", "capdesk", "gui", str(pics)], env)


orca_runs.register(__file__, _prepare, _why_not)


@pytest.fixture(scope="module")
def presses():
    """What Orca said for each F7 or Shift+F7, in order, with any late words in the wait after it (Orca's own
    "left shift" for the key left out)."""
    _run, text = _harness_outcome(__file__)
    keep = os.environ.get("CAPDESK_ORCA_TRANSCRIPT")  # where to keep what Orca said, to read it afterwards
    if keep:
        Path(keep).write_text(text, encoding="utf-8")
    steps = _steps(text)
    out = []
    for i, (step, said) in enumerate(steps):
        if step in ("key F7", "key shift+F7"):
            late = steps[i + 1][1] if i + 1 < len(steps) and steps[i + 1][0].startswith("wait") else []
            out.append([t for t in said + late if t != "left shift"])
    return out


@pytest.fixture(scope="module")
def expected():
    return _expected()


@pytest.mark.parametrize("n", range(len(KEYS) + len(ON_COFFEE)))
def test_each_press_says_one_thing_once(presses, expected, n):
    assert len(presses) == len(expected), presses
    assert presses[n] == [expected[n]], ((KEYS + ON_COFFEE)[n], presses[n])
