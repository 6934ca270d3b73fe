"""The key from anywhere, with the real Orca screen reader running: ``capdesk service --key`` grabs a key on
the X display, a Qt window shows a photo in a focused button, the key is pressed, and the description goes
to the very speech-dispatcher Orca speaks through, which says it to the end; Orca keeps working after.

Uses the shared harness ``../shared/tools/orca_speech.sh`` (Debian's Orca on a virtual display with its own
speech-dispatcher). What reached that speech-dispatcher is seen through a relay on the service's way to it
(SPEECHD_ADDRESS): it keeps the text the service sent and speech-dispatcher's answers, among them the END
event it sends once the text was spoken. Run it alone: ``flock /tmp/orca.lock python -m pytest ...`` (one
Orca at a time on a machine).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import orca_runs
import pytest
from conftest import ROOT, SAMPLES
from screen_harness import WINDOW
from test_orca import HARNESS, _harness_outcome, _steps, _why_not

KEY, XDOTOOL_KEY = "<Super>F9", "super+F9"  # openbox's own Super+d shows the desktop: a free key here

STEPS = f"""\
# the window opens (Orca reads its focused button) and the service loads the model
wait 35
key {XDOTOOL_KEY}
wait 25
# Orca goes on: Tab moves to the window's other button, which it reads
key Tab
wait 4
"""

# Between the service and speech-dispatcher: passes everything on, and keeps what went each way (JSON lines).
RELAY = r"""
import json, os, socket, sys, threading
listen, log = sys.argv[1], open(sys.argv[2], "a", buffering=1)
real = os.path.join(os.environ["XDG_RUNTIME_DIR"], "speech-dispatcher", "speechd.sock")
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(listen)
server.listen(4)
def pipe(src, dst, way):
    try:
        for line in src.makefile("rb"):
            log.write(json.dumps({"way": way, "line": line.decode("utf-8", "replace").rstrip("\r\n")}) + "\n")
            dst.sendall(line)
    except OSError:
        pass  # the other side went first
    dst.close()
while True:
    c, _ = server.accept()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(real)
    threading.Thread(target=pipe, args=(c, s, "to speechd"), daemon=True).start()
    threading.Thread(target=pipe, args=(s, c, "from speechd"), daemon=True).start()
"""

pytestmark = [pytest.mark.slow, pytest.mark.orca, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


def _prepare(base: Path, environ: dict[str, str]) -> orca_runs.Harness:
    (base / "relay.py").write_text(RELAY, encoding="utf-8")
    (base / "window.py").write_text(WINDOW, encoding="utf-8")
    steps = base / "steps.txt"
    steps.write_text(STEPS, encoding="utf-8")
    relay_log, relay_sock = base / "relay.jsonl", base / "relay.sock"
    py = shlex.quote(sys.executable)
    command = (f"{py} {shlex.quote(str(base / 'relay.py'))} {shlex.quote(str(relay_sock))} "
               f"{shlex.quote(str(relay_log))} & "
               f"{py} {shlex.quote(str(base / 'window.py'))} {shlex.quote(str(SAMPLES / 'chelsea.png'))} button & "
               f"SPEECHD_ADDRESS=unix_socket:{shlex.quote(str(relay_sock))} exec {py} -m capdesk service "
               f"--verbose --key {shlex.quote(KEY)}")
    env = {k: v for k, v in environ.items() if k not in ("QT_QPA_PLATFORM", "SPEECHD_ADDRESS")}
    env["CAPDESK_SETTINGS"] = str(base / "settings.json")
    return orca_runs.Harness(["bash", str(HARNESS), str(steps), str(base / "out"), "--", "bash", "-c", command],
                             env, cwd=ROOT)


orca_runs.register(__file__, _prepare, _why_not)


@pytest.fixture(scope="module")
def journey():
    run, text = _harness_outcome(__file__)
    relay_log, program = run.base / "relay.jsonl", run.base / "out" / "program.out"
    said = [json.loads(line) for line in relay_log.read_text(encoding="utf-8").splitlines()] \
        if relay_log.exists() else []
    return _steps(text), said, program.read_text(encoding="utf-8", errors="replace") if program.exists() else ""


def _spoken_texts(relayed: list[dict]) -> list[str]:
    """The texts the service sent after SPEAK (up to the lone '.')."""
    texts, body = [], None
    for r in relayed:
        if r["way"] != "to speechd":
            continue
        if body is not None:
            if r["line"] == ".":
                texts.append("\n".join(body))
                body = None
            else:
                body.append(r["line"])
        elif r["line"] == "SPEAK":
            body = []
    return texts


def test_the_key_sends_the_description_to_orcas_speech_dispatcher(journey):
    steps, relayed, program = journey
    texts = _spoken_texts(relayed)
    assert len(texts) == 1, (texts, program)
    assert "cat" in texts[0].lower(), texts  # the photo shows a tabby cat
    answers = [r["line"] for r in relayed if r["way"] == "from speechd"]
    assert any(a.startswith("225 ") for a in answers), answers  # queued ...
    assert any(a.startswith("702 ") for a in answers), answers  # ... and spoken to its end (END event)
    assert "screen request answered" in program  # through the key, by the service (--verbose says so)


def test_orca_keeps_working_after(journey):
    steps, _, _ = journey
    names = [s for s, _ in steps]
    assert "key Tab" in names and names[-1].startswith("end"), names
    after = [t for s, said in steps[names.index("key Tab"):] for t in said]
    assert any("Other button" in t for t in after), after
