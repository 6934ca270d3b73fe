"""Fill alt text's review list under the real Orca screen reader: every way out of it said once.

The window opens on a folder with a web page and two pictures; Ctrl+Shift+A opens Fill alt text, Alt+S runs
its dry pass and the review list opens. The person accepts the first picture (A), skips the second (Down, S) and
writes (Alt+W); then runs it again (Alt+S) and closes the list unwritten (Escape). Under Orca 43 each of those two
key presses said its outcome three or four times, twice inside a re-read of the whole Fill dialog with its
introduction, the outcome last; here each is said once, with the one control the focus returns to. The list's
own introduction is said once as it opens (it was said twice: with the Fill dialog, and with the list as a
dialog of its own).

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

PAGE = ('<!doctype html>\n<p>Our morning</p>\n<p><img src="coffee.png"> <img src="astronaut.png"></p>\n'
        "<p>The end</p>\n")
INTRO = "Images with no alt text in the folder"  # the Fill dialog's introduction, read when it opens
LIST_INTRO = "each with the alt text proposed for it"  # the review list's introduction
STEPS = """\
wait 40
key ctrl+shift+a
wait 5
key alt+s
wait 50
key a
wait 4
key Down
wait 4
key s
wait 5
key alt+w
wait 20
key alt+s
wait 45
key Escape
wait 15
"""


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    site = base / "site"
    site.mkdir()
    for n in ("coffee.png", "astronaut.png"):
        shutil.copy(SAMPLES / n, site / n)
    (site / "page.html").write_text(PAGE, encoding="utf-8")
    settings = base / "settings.json"
    settings.write_text(json.dumps({"ocr": "never", "clipboard": False, "watch_folders": []}), encoding="utf-8")
    (base / "steps.txt").write_text(STEPS, encoding="utf-8")
    env = {k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"}  # a real window on the virtual display
    env["CAPDESK_SETTINGS"] = str(settings)
    return orca_runs.Harness(["bash", str(HARNESS), str(base / "steps.txt"), str(base / "out"), "--", sys.executable,
                              "-m", "capdesk", "gui", str(site)], env)


orca_runs.register(__file__, _prepare, _why_not)


@pytest.fixture(scope="module")
def walk():
    run, text = _harness_outcome(__file__)
    keep = os.environ.get("CAPDESK_ORCA_TRANSCRIPT")  # where to keep what Orca said, to read it afterwards
    if keep:
        Path(keep).write_text(text, encoding="utf-8")
    return _steps(text), run.base / "site"


def _after(steps, step: str, nth: int = 1) -> list[str]:
    """What Orca said from the ``nth`` step named ``step`` until the next key step."""
    names = [s for s, _ in steps]
    i = [k for k, s in enumerate(names) if s == step][nth - 1]
    j = next((k for k in range(i + 1, len(names)) if names[k].startswith(("key ", "type "))), len(names))
    return [t for _, said in steps[i:j] for t in said]


def _times(said: list[str], words: str) -> int:
    return sum(t.count(words) for t in said)


def test_the_review_list_opens_after_the_dry_pass(walk):
    steps, _site = walk
    said = _after(steps, "key alt+s")
    assert any("Alt text to review: 2 pictures" in t for t in said), said


@pytest.mark.parametrize("nth", [1, 2])
def test_the_list_says_its_introduction_once_as_it_opens(walk, nth):
    steps, _site = walk
    said = _after(steps, "key alt+s", nth)
    assert _times(said, LIST_INTRO) == 1, said
    # What the entry and its field say (why to review, the text around) is not read with the dialog first.
    assert _times(said, "Why to review") == 0 and _times(said, "Text around it") == 0, said
    assert not any("dialog" in t and LIST_INTRO in t and t.startswith("Review alt text") for t in said), said


# Heard once in a whole-suite run (load about 2), never in the runs of this file alone: Start pressed by Alt+S
# from a focused Open report, the report button's description was read as it was turned off. Kept as a check
# that reports the stray words when they come, without failing a run on its timing.
@pytest.mark.xfail(strict=False, reason="the report button's description is at times read as Start is pressed "
                                        "from it (timing under load)")
@pytest.mark.parametrize("nth", [1, 2])
def test_starting_from_open_report_does_not_read_the_report_button(walk, nth):
    steps, _site = walk
    said = _after(steps, "key alt+s", nth)
    assert not any(t.startswith("Open the report") for t in said), said


def test_write_accepted_writes_and_says_what_was_skipped(walk):
    steps, site = walk
    said = _after(steps, "key alt+w")
    assert _times(said, "Alt text finished") >= 1, said
    assert any("skipped, not written: astronaut.png" in t for t in said), said
    assert 'alt="' in (site / "page.html").read_text(encoding="utf-8")


def test_escape_lands_back_on_start_and_says_what_was_left(walk):
    steps, _site = walk
    said = _after(steps, "key Escape")
    assert _times(said, "Review closed; nothing was written") >= 1, said
    assert any(t.startswith("Start") for t in said), said  # back on the control that opened the list
    assert not any(t.startswith("Open report") for t in said), said


@pytest.mark.parametrize("step, outcome", [("key alt+w", "Alt text finished"),
                                           ("key Escape", "Review closed; nothing was written")])
def test_each_outcome_is_said_once(walk, step, outcome):
    # Was three times for Write accepted (the status line read with the dialog, the control, then as news) and
    # twice for Escape: the status line is no label Orca reads with the dialog, and the control has the
    # outcome before the focus arrives.
    steps, _site = walk
    assert _times(_after(steps, step), outcome) == 1, _after(steps, step)


@pytest.mark.parametrize("step", ["key alt+w", "key Escape"])
def test_leaving_the_list_does_not_read_the_dialog_again(walk, step):
    # Orca still reads the dialog (its name) as the focus comes back from the list's entry, which it has lost;
    # the introduction is the dialog's description, said when it opened, and no longer a label read with it.
    steps, _site = walk
    said = _after(steps, step)
    assert not any(INTRO in t for t in said), said


def test_the_dialog_says_its_introduction_once_as_it_opens(walk):
    steps, _site = walk
    said = _after(steps, "key ctrl+shift+a")
    assert _times(said, INTRO) == 1, said
