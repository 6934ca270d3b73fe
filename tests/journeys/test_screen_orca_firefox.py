"""The screen key in a web page, with the real Orca screen reader in browse mode: Firefox ESR shows photos,
some in links and some not, and a text link; Orca moves to each from the top of the page (Tab, G for the
next graphic, Down to the text link), and ``capdesk service --key`` is then asked by its key what Orca is on.
Each description must start by naming the picture Orca just said (5 of 5), and the text link must be said
by its name, not read from its pixels.

Uses the shared harness ``../shared/tools/orca_speech.sh`` as test_screen_orca does, with the same relay
between the service and Orca's speech-dispatcher to see what the service said. Run it alone:
``flock /tmp/orca.lock python -m pytest ...`` (one Orca at a time on a machine).
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import orca_runs
import pytest
from conftest import ROOT, SAMPLES
from test_orca import HARNESS, _harness_outcome, _steps, _why_not
from test_screen_firefox import BROWSE_PAGE, BROWSE_PICTURES, FIREFOX, write_profile
from test_screen_orca import KEY, RELAY, XDOTOOL_KEY, _spoken_texts

# Where Orca goes (each time from the top of the page: ctrl+Home), what it says last there, and how the
# description the key gives must begin. The second is the walk's own: a photo link focused, then G to the
# next photo, which is no link.
MOVES = (
    ("ctrl+Home Tab", "portrait of an astronaut link", "The picture of the link 'portrait of an astronaut': "),
    ("ctrl+Home g g", "image", "A picture with no name: "),  # the cat: no alt text, and no link
    ("ctrl+Home g g g", "coffee on a saucer image", "The picture 'coffee on a saucer': "),
    ("ctrl+Home g g g g", "rocket launch image link", "The picture of the link 'rocket launch': "),
    ("ctrl+Home g g g g g", "a page of a letter image", "The picture 'a page of a letter': "),
    ("ctrl+Home g g g g g Down", "More photos link", "The link 'More photos', which holds no picture."),
)
PICTURES_ON_PAGE = 5

STEPS = "# Firefox opens the page (Orca reads it) and the service loads the model\nwait 60\n" + \
    "".join(f"key {move}\nwait 3\nkey {XDOTOOL_KEY}\nwait 10\n" for move, _, _ in MOVES)


def _why_not_here() -> str | None:
    return _why_not() or (None if FIREFOX else "needs Firefox (Debian package firefox-esr)")


pytestmark = [pytest.mark.slow, pytest.mark.orca,
              pytest.mark.skipif(_why_not_here() is not None, reason=_why_not_here() or "")]


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    (base / "relay.py").write_text(RELAY, encoding="utf-8")
    for name in BROWSE_PICTURES:
        shutil.copy(SAMPLES / name, base / name)
    page = base / "page.html"
    page.write_text(BROWSE_PAGE, encoding="utf-8")
    profile = write_profile(base)
    (base / "steps.txt").write_text(STEPS, encoding="utf-8")
    relay_log, relay_sock = base / "relay.jsonl", base / "relay.sock"
    py = shlex.quote(sys.executable)
    q = shlex.quote
    command = (f"{py} {q(str(base / 'relay.py'))} {q(str(relay_sock))} {q(str(relay_log))} & "
               f"GNOME_ACCESSIBILITY=1 MOZ_CRASHREPORTER_DISABLE=1 GDK_BACKEND=x11 {q(str(FIREFOX))} -no-remote "
               f"-profile {q(str(profile))} --width 1000 --height 800 {q(page.as_uri())} "
               f">{q(str(base / 'firefox.log'))} 2>&1 & "
               f"SPEECHD_ADDRESS=unix_socket:{q(str(relay_sock))} exec {py} -m capdesk service "
               f"--verbose --key {q(KEY)}")
    env = {k: v for k, v in environ.items() if k not in ("QT_QPA_PLATFORM", "SPEECHD_ADDRESS")}
    env["CAPDESK_SETTINGS"] = str(base / "settings.json")
    return orca_runs.Harness(["bash", str(HARNESS), str(base / "steps.txt"), str(base / "out"), "--",
                              "bash", "-c", command], env, cwd=ROOT)


orca_runs.register(__file__, _prepare, _why_not_here)


@pytest.fixture(scope="module")
def journey():
    run, text = _harness_outcome(__file__)
    relay_log, program = run.base / "relay.jsonl", run.base / "out" / "program.out"
    said = [json.loads(line) for line in relay_log.read_text(encoding="utf-8").splitlines()] \
        if relay_log.exists() else []
    return _steps(text), said, program.read_text(encoding="utf-8", errors="replace") if program.exists() else ""


def _heard(journey) -> list[tuple[str, str, str]]:
    """For each move: what Orca said after it, the description the key gave, and the move."""
    steps, relayed, program = journey
    texts = _spoken_texts(relayed)
    names = [s for s, _ in steps]
    out = []
    i = -1
    for n, (move, _, _) in enumerate(MOVES):
        i = names.index(f"key {move}", i + 1)
        orca = (steps[i][1] or ["(nothing)"])[-1]  # what Orca said last: where it is
        out.append((orca, texts[n] if n < len(texts) else f"(nothing said; the service said: {program[-600:]})",
                    move))
    return out


def test_the_key_describes_the_picture_orca_is_on(journey):
    heard = _heard(journey)
    right = []
    for (orca, text, _), (_, orca_says, begins) in zip(heard[:PICTURES_ON_PAGE], MOVES):
        assert orca == orca_says, (orca, heard)  # Orca is on that picture
        right.append(text.startswith(begins))
    assert sum(right) == PICTURES_ON_PAGE, [(h[0], h[1]) for h in heard]
    cat = heard[1][1]
    assert "cat" in cat.lower(), cat  # described from its pixels: the photo is of a tabby cat


def test_a_text_link_is_said_by_its_name(journey):
    orca, text, _ = _heard(journey)[PICTURES_ON_PAGE]
    assert orca == MOVES[-1][1], orca
    assert text == MOVES[-1][2], text  # its name, not its underlined pixels read
