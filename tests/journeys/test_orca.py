"""What a blind user hears: the real window, driven by the keyboard under the real Orca screen reader.

Uses the shared harness ``../shared/tools/orca_speech.sh`` (Debian's Orca 43.1 on a virtual display,
with its own speech server; it installs the Debian packages it needs on first use) and reads what
Orca spoke after each step. One run of about two minutes serves every test here. Orca 43.1 does
not speak Qt's accessibility announcements, so these tests fail if a result only goes out as one.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import orca_runs
import pytest
from conftest import ROOT, SAMPLES, run_cli

from capdesk.session.picture import PictureStatus

HARNESS = Path(os.environ.get("CAPDESK_ORCA_HARNESS", ROOT.parent / "shared" / "tools" / "orca_speech.sh"))
PICTURES = ("astronaut.png", "chelsea.png", "coffee.png")

STEPS = """\
# the window opens on the folder and captions the first picture
wait 40
key Down
wait 15
# back to the first picture: its entry is read with its description
key Up
wait 4
# batch export of the whole folder, started with Alt+S
key ctrl+b
wait 5
key alt+s
wait 45
key Escape
wait 2
"""


def _why_not() -> str | None:
    if not sys.platform.startswith("linux"):
        return "Orca runs on Linux only"
    if not HARNESS.exists():
        return f"needs the Orca harness at {HARNESS} (absent here)"
    if not Path("/usr/bin/orca").exists():
        if shutil.which("apt-get") is None:
            return "needs Debian's Orca (/usr/bin/orca), and there is no apt-get to install it"
        if os.geteuid() != 0:
            return "needs Debian's Orca (/usr/bin/orca); the harness installs it with apt, which needs root"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.orca, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


def _steps(transcript: str) -> list[tuple[str, list[str]]]:
    """(step, what Orca said during it) in order, from the harness's transcript."""
    out: list[tuple[str, list[str]]] = []
    for line in transcript.splitlines():
        if line.startswith("== "):
            out.append((line[3:].strip(), []))
        elif line.startswith("  said: ") and out:
            out[-1][1].append(line[8:].strip().rstrip("."))
    return out


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    folder = base / "pictures"
    folder.mkdir()
    for n in PICTURES:
        shutil.copy(SAMPLES / n, folder / n)
    steps = base / "steps.txt"
    steps.write_text(STEPS, encoding="utf-8")
    env = {k: v for k, v in environ.items() if k != "QT_QPA_PLATFORM"}  # a real window on the virtual display
    env["CAPDESK_SETTINGS"] = str(base / "settings.json")
    return orca_runs.Harness(["bash", str(HARNESS), str(steps), str(base / "out"), "--",
                              sys.executable, "-m", "capdesk", "gui", str(folder)], env)


orca_runs.register(__file__, _prepare, _why_not)


def _harness_outcome(module_file: str) -> tuple[orca_runs.Outcome, str]:
    """A module's harness run (tests/orca_runs.py) and Orca's transcript, or a skip or failure saying why not."""
    run = orca_runs.outcome(module_file)
    transcript = run.base / "out" / "transcript.txt"
    text = transcript.read_text(encoding="utf-8") if transcript.exists() else run.stdout
    if run.returncode != 0 and not Path("/usr/bin/orca").exists():  # the first-use install failed (offline?)
        pytest.skip(f"Orca could not be installed: {(run.stderr.strip().splitlines() or ['?'])[-1]}")
    assert run.returncode == 0 and "== Orca ready" in text, f"the harness failed:\n{text}\n{run.stderr[-3000:]}"
    return run, text


@pytest.fixture(scope="module")
def heard(tmp_path_factory):
    folder = tmp_path_factory.mktemp("orca-expected")
    for n in PICTURES:
        shutil.copy(SAMPLES / n, folder / n)
    r = run_cli("caption", "--json", str(folder))  # what the window should say, from the same model
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    expected = {Path(d["path"]).name: d["description"] for d in records}
    # The list entry's words follow the same description: flagged for review or not.
    expected.update({f"{Path(d['path']).name} status": (PictureStatus.NEEDS_REVIEW if d["review"] else
                                                        PictureStatus.DESCRIBED).value for d in records})
    run, text = _harness_outcome(__file__)
    return _steps(text), expected, run.base / "pictures"


def _said_between(steps, first: str, last: str | None) -> list[str]:
    names = [s for s, _ in steps]
    i = names.index(first)
    j = names.index(last) if last else len(steps)
    return [t for _, said in steps[i:j] for t in said]


def test_description_is_spoken_once_after_selecting(heard):
    steps, expected, _ = heard
    at_start = _said_between(steps, "wait 40", "key Down")
    assert at_start.count(expected["astronaut.png"].rstrip(".")) == 1, at_start
    after_down = _said_between(steps, "key Down", "key Up")
    assert after_down[0].startswith("chelsea.png, ")  # the entry, then its description, once
    assert after_down.count(expected["chelsea.png"].rstrip(".")) == 1, after_down


def test_description_is_spoken_on_revisiting(heard):
    steps, expected, _ = heard
    revisit = _said_between(steps, "key Up", "key ctrl+b")
    status = expected["astronaut.png status"]
    assert revisit[:2] == [f"astronaut.png, {status}", expected["astronaut.png"].rstrip(".")], revisit
    assert revisit.count(expected["astronaut.png"].rstrip(".")) == 1


def test_batch_outcome_is_spoken(heard):
    steps, _, folder = heard
    batch = _said_between(steps, "key alt+s", None)
    outcomes = [t for t in batch if t.startswith("Batch export finished: ")]
    assert len(outcomes) == 1, batch
    assert f"{len(PICTURES)} alt texts written" in outcomes[0] and "Report: pictures " in outcomes[0]
    assert not list(folder.glob("*.html"))  # the report is kept in CapDesk's folder, not published with the pictures
    assert len(list(folder.glob("*.txt"))) == len(PICTURES)  # and it did what it said
