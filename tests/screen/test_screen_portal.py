"""``capdesk screen`` in a Wayland session: the screenshot is asked of the desktop portal over D-Bus, here a
stand-in portal on a session bus of the test's own, which speaks the real protocol (a Request handle from the
call, the outcome in its Response signal, the picture in a file it writes). The region is cut from the
screenshot, the portal's file is gone at once, and every refusal is one line saying why and what works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from PIL import Image
from screen_harness import START_TIMEOUT_S, _read_line, _stop

from capdesk.screen import portal
from capdesk.screen.atspi import Rect
from capdesk.screen.capture import CaptureError, refusal, take

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("dbus-daemon") is None,
                                reason="needs Linux and dbus-daemon (Debian package dbus-daemon)")

PHOTO_AT = (100, 50)  # where the cat is on the stand-in's screen

# The stand-in portal: org.freedesktop.portal.Desktop with the Screenshot interface, answering as
# xdg-desktop-portal does. argv: what it answers (ok: the picture; cancel: response 1; deny: response 2;
# silent: no answer), the screen picture, a log of the calls (JSON lines), the folder it writes screenshots to.
STAND_IN = r"""
import json, os, shutil, sys
from pathlib import Path
from jeepney import DBusAddress, HeaderFields, MessageType, message_bus, new_error, new_method_return, new_signal
from jeepney.io.blocking import open_dbus_connection

mode, picture, log, folder = sys.argv[1:5]
conn = open_dbus_connection(bus=os.environ["DBUS_SESSION_BUS_ADDRESS"])
conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.portal.Desktop"))
print("ready", flush=True)


def note(**what):
    with open(log, "a") as f:
        f.write(json.dumps(what) + "\n")


taken = 0
while True:
    msg = conn.receive()
    if msg.header.message_type != MessageType.method_call:
        continue
    fields = msg.header.fields
    call = (fields.get(HeaderFields.interface), fields.get(HeaderFields.member))
    sender = fields[HeaderFields.sender]
    if call == ("org.freedesktop.portal.Request", "Close"):
        note(closed=fields[HeaderFields.path])
        conn.send(new_method_return(msg))
        continue
    if call != ("org.freedesktop.portal.Screenshot", "Screenshot"):
        conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))
        continue
    parent, options = msg.body
    handle = f"/org/freedesktop/portal/desktop/request/{sender[1:].replace('.', '_')}/{options['handle_token'][1]}"
    note(parent=parent, options={k: v[1] for k, v in options.items()}, handle=handle)
    conn.send(new_method_return(msg, "o", (handle,)))
    if mode == "silent":
        continue
    results = {}
    if mode == "ok":
        taken += 1
        path = Path(folder) / f"Screenshot {taken}.png"  # a space, as GNOME names them: the URI escapes it
        shutil.copy(picture, path)
        results["uri"] = ("s", path.as_uri())
    answer = new_signal(DBusAddress(handle, interface="org.freedesktop.portal.Request"), "Response", "ua{sv}",
                        ({"ok": 0, "cancel": 1, "deny": 2}[mode], results))
    answer.header.fields[HeaderFields.destination] = sender
    conn.send(answer)
"""


@pytest.fixture(scope="module")
def bus():
    """A D-Bus session bus of the test's own: its address."""
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        yield _read_line(proc, proc.stdout, START_TIMEOUT_S)
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def screen_picture(tmp_path_factory) -> Path:
    """What the stand-in's screen shows: the cat, with a coffee cup beside it."""
    screen = Image.new("RGB", (1024, 600), (40, 40, 60))
    with Image.open(SAMPLES / "chelsea.png") as cat, Image.open(SAMPLES / "coffee.png") as cup:
        screen.paste(cat.convert("RGB"), PHOTO_AT)
        screen.paste(cup.convert("RGB").resize((300, 200)), (600, 50))
    path = tmp_path_factory.mktemp("screen") / "screen.png"
    screen.save(path)
    return path


class StandIn:
    def __init__(self, bus: str, mode: str, picture: Path, folder: Path) -> None:
        self.log, self.folder = folder / "calls.jsonl", folder / "shots"
        self.folder.mkdir()
        self.proc = subprocess.Popen([sys.executable, "-c", STAND_IN, mode, str(picture), str(self.log),
                                      str(self.folder)], env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus),
                                     stdout=subprocess.PIPE)
        assert _read_line(self.proc, self.proc.stdout, START_TIMEOUT_S) == "ready"

    def calls(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def portal_answering(request, bus, screen_picture, tmp_path):
    stand_in = StandIn(bus, getattr(request, "param", "ok"), screen_picture, tmp_path)
    yield stand_in
    _stop(stand_in.proc)


def _wayland(bus: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "AT_SPI_BUS_ADDRESS")}
    env.update(WAYLAND_DISPLAY="wayland-test", XDG_SESSION_TYPE="wayland", DBUS_SESSION_BUS_ADDRESS=bus, **more)
    return env


def test_region_is_cut_from_the_portals_screenshot_and_its_file_deleted(bus, portal_answering):
    env = _wayland(bus)
    assert refusal(env) is None
    cap = take("region", Rect(*PHOTO_AT, 451, 300), env)
    assert (cap.role, cap.rect) == ("region", Rect(*PHOTO_AT, 451, 300))
    with Image.open(SAMPLES / "chelsea.png") as cat:
        assert np.array_equal(np.asarray(cap.image), np.asarray(cat.convert("RGB")))
    # Asked without a dialog of the portal's own, as the real protocol asks, and the file is gone.
    (call,) = portal_answering.calls()
    assert call["parent"] == "" and call["options"]["interactive"] is False
    assert call["handle"].endswith("/" + call["options"]["handle_token"])
    assert list(portal_answering.folder.iterdir()) == []
    full = take("full", None, env)
    assert full.image.size == (1024, 600) and full.rect == Rect(0, 0, 1024, 600)
    assert list(portal_answering.folder.iterdir()) == []


@pytest.mark.parametrize("portal_answering, why", [("cancel", "the screenshot was refused (by you, or by the "
                                                              "desktop's privacy settings)"),
                                                   ("deny", "the desktop refused the screenshot")],
                         indirect=["portal_answering"])
def test_a_refused_screenshot_is_said_in_one_line(bus, portal_answering, why):
    with pytest.raises(CaptureError) as err:
        take("full", None, _wayland(bus))
    assert str(err.value).startswith(why) and "capdesk caption" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("portal_answering", ["silent"], indirect=True)
def test_a_portal_that_never_answers_is_given_up_and_its_request_closed(bus, portal_answering):
    with pytest.raises(portal.PortalError, match="the desktop gave no screenshot within 1 s"):
        portal.screenshot(_wayland(bus), timeout=1)
    calls = portal_answering.calls()
    assert calls[-1] == {"closed": calls[0]["handle"]}


def test_without_a_portal_wayland_is_refused_saying_what_works(bus):
    why = refusal(_wayland(bus))  # a session bus, with no portal on it
    assert why is not None and "\n" not in why
    assert why.startswith("this is a Wayland session, where a program may not read the screen itself, and the "
                          "desktop portal is not installed")
    assert "X11" in why and "capdesk caption" in why
    no_bus = {k: v for k, v in _wayland(bus).items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    assert "no D-Bus session bus" in refusal(no_bus)


def test_the_active_window_is_refused_under_wayland(bus, portal_answering):
    with pytest.raises(CaptureError, match="a Wayland desktop tells no program where the active window is; --focus"):
        take("window", None, _wayland(bus))
    assert portal_answering.calls() == []  # refused before any screenshot was taken


@pytest.mark.skipif("take(" not in (ROOT / "capdesk" / "cli" / "screen.py").read_text(),
                    reason="capdesk/cli/screen.py does not capture through capdesk.screen.capture.take yet")
@pytest.mark.slow  # 7 s measured on two busy cores
def test_the_command_describes_the_region_under_wayland(bus, portal_answering):
    region = f"{PHOTO_AT[0]},{PHOTO_AT[1]},451,300"
    proc = subprocess.run([sys.executable, "-m", "capdesk", "screen", "--region", region, "--json"], env=_wayland(bus),
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    own = json.loads(subprocess.run([sys.executable, "-m", "capdesk", "caption", str(SAMPLES / "chelsea.png"),
                                     "--json"], capture_output=True, text=True, timeout=300, cwd=ROOT,
                                    check=True).stdout.splitlines()[0])
    assert rec["captured"]["rect"] == {"x": PHOTO_AT[0], "y": PHOTO_AT[1], "width": 451, "height": 300}
    assert (rec["caption"], rec["description"]) == (own["caption"], own["description"])
    assert list(portal_answering.folder.iterdir()) == []


def test_focus_under_wayland_is_cut_where_its_window_is_known(bus, portal_answering, monkeypatch):
    from capdesk.screen import capture
    from capdesk.screen.atspi import Target

    def focused(window: Rect):
        return lambda env: Target("image", "", Rect(*PHOTO_AT, 451, 300), window=window)

    # A program that knows where its window is (X11 programs under XWayland do): the picture is cut out.
    monkeypatch.setattr(capture, "focus_target", focused(Rect(80, 20, 900, 500)))
    cap = take("focus", None, _wayland(bus))
    with Image.open(SAMPLES / "chelsea.png") as cat:
        assert cap.role == "image" and np.array_equal(np.asarray(cap.image), np.asarray(cat.convert("RGB")))
    # Toolkits that do not (GTK and Qt on Wayland put their window at 0,0): refused before any screenshot.
    asked = len(portal_answering.calls())
    monkeypatch.setattr(capture, "focus_target", focused(Rect(0, 0, 900, 500)))
    with pytest.raises(CaptureError, match="does not say where its window is on the screen, so its focused image "
                                           "cannot be found in the screenshot; --full"):
        take("focus", None, _wayland(bus))
    assert len(portal_answering.calls()) == asked
