"""``capdesk screen`` in a real browser: Firefox ESR on a virtual display (Xvfb), with accessibility turned
on the way a desktop turns it on for a screen reader (org.a11y.Status IsEnabled on the session bus), shows a
local page where a link wraps a photo without alt text, between two other photos. Tab puts the keyboard focus
on that link; ``--focus`` must then take the photo inside the link (its rectangle as the page itself measures
it, its pixels, its caption) and say first which picture it is, take it whole when it is half scrolled out
of view, and say the page's text link by its name; ``--window`` the Firefox window, and ``--speak`` must
reach speech-dispatcher. (Browse mode with the real Orca: test_screen_orca_firefox.py, on BROWSE_PAGE.)"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES
from jeepney import DBusAddress, Properties
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg
from PIL import Image
from screen_harness import _env, _read_line, _rect, _stop, display, screen  # noqa: F401 (display: a fixture)

from capdesk.screen import atspi

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")
START_TIMEOUT_S = 60.0  # Firefox starting on two busy cores
WINDOW_SIZE = (1000, 700)

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("Xvfb") is None,
                       reason="needs Linux and Xvfb (Debian package xvfb)"),
    pytest.mark.skipif(FIREFOX is None, reason="needs Firefox (Debian package firefox-esr)"),
    pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool (Debian package xdotool) to press Tab"),
]

# The photo of the cat is in a link and has no alt text; a coffee cup before it and a rocket after it, both
# scaled by the page, are pictures too. The page writes into its title where the cat is on the screen, in
# screen pixels (the browser's own measure, not the accessibility bus's), and which element has the focus.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loading</title>
<style>body { margin: 16px; font: 16px sans-serif } img { vertical-align: top; border: 0 }</style></head>
<body>
<p><a id="first" href="elsewhere.html">First link</a></p>
<img src="coffee.png" width="200" height="133">
<a id="pic" href="cat.html"><img id="cat" src="chelsea.png"></a>
<img src="rocket.jpg" width="300" height="200">
<div style="height: 2000px"></div>
<script>
function report() {
  const r = document.getElementById("cat").getBoundingClientRect(), d = window.devicePixelRatio;
  const screen = (x, y, w, h) => {  // edges rounded to whole pixels, as they are drawn
    const [x0, y0, x1, y1] = [x, y, x + w, y + h].map((v, i) => Math.round(((i % 2 ? mozInnerScreenY :
                                                                            mozInnerScreenX) + v) * d));
    return [x0, y0, x1 - x0, y1 - y0];
  };
  const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, window.innerHeight);
  const ready = [...document.images].every(i => i.complete && i.naturalWidth > 0);
  document.title = (ready ? "rect:" + screen(r.left, r.top, r.width, r.height).join(",") + " shown:" +
                    screen(r.left, top, r.width, bottom - top).join(",") + " scrolled:" + Math.round(scrollY * d)
                    : "loading") + " focus:" + (document.hasFocus() && document.activeElement.id || "-");
}
setInterval(report, 100);
</script>
</body></html>
"""

# Photos as a blind user meets them in browse mode: some are links, some are not, one has no alt text, and a
# text link ends the page. The space after it lets the screen reader scroll each photo to the top of the view.
BROWSE_PICTURES = ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "page.png")
BROWSE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Trip photos</title>
<style>body { margin: 16px; font: 16px sans-serif } img { border: 0 }</style></head>
<body>
<h1>Trip photos</h1>
<p>Pictures from the trip, some of them linked.</p>
<p><a href="astronaut.html"><img src="astronaut.png" alt="portrait of an astronaut" width="400" height="400"></a></p>
<p>The cat at home.</p>
<p><img src="chelsea.png" width="451" height="300"></p>
<p><img src="coffee.png" alt="coffee on a saucer" width="450" height="300"></p>
<p>Launch day.</p>
<p><a href="rocket.html"><img src="rocket.jpg" alt="rocket launch" width="450" height="300"></a></p>
<p><img src="page.png" alt="a page of a letter" width="384" height="191"></p>
<p><a href="more.html">More photos</a></p>
<p>The end.</p>
<div style="height: 1500px"></div>
</body></html>
"""

# A fresh profile that opens the page at once: no first-run pages, no default-browser question, no updates,
# telemetry or safe-browsing lists asked of a network there is not.
PREFS = {
    "browser.shell.checkDefaultBrowser": False, "browser.aboutwelcome.enabled": False,
    "browser.startup.homepage_override.mstone": "ignore", "startup.homepage_welcome_url": "",
    "startup.homepage_welcome_url.additional": "", "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.normandy.enabled": False, "app.update.auto": False, "extensions.update.enabled": False,
    "browser.sessionstore.resume_from_crash": False, "browser.tabs.warnOnClose": False,
    "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
    "browser.safebrowsing.malware.enabled": False, "browser.safebrowsing.phishing.enabled": False,
    "layout.css.devPixelsPerPx": "1.0", "general.smoothScroll": False,
}


def write_profile(folder: Path) -> Path:
    """A Firefox profile of its own in ``folder`` (see PREFS)."""
    profile = folder / "profile"
    profile.mkdir()
    (profile / "user.js").write_text("".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n"
                                             for k, v in PREFS.items()))
    return profile


def _until(what: str, check, timeout: float = START_TIMEOUT_S):
    """``check()``'s first true value, polled until ``timeout``; fails saying ``what`` never came."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.1)


def _until_or_none(check, timeout: float):
    try:
        return _until("", check, timeout)
    except AssertionError:
        return None


def _xdotool(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=30).stdout.strip()


@pytest.fixture(scope="module")
def a11y_bus(display, tmp_path_factory):  # noqa: F811 (the fixture imported above)
    """A D-Bus session bus with the accessibility bus on it, as test_screen's, but with GLib's settings in
    memory: turning accessibility on makes at-spi-bus-launcher write GNOME's toolkit-accessibility key,
    which must not change the settings of the person running the tests."""
    launcher = next((p for p in ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher",
                                 shutil.which("at-spi-bus-launcher")) if p and Path(p).exists()), None)
    if launcher is None:
        pytest.skip("needs at-spi2-core's at-spi-bus-launcher (Debian package at-spi2-core)")
    if shutil.which("dbus-daemon") is None:
        pytest.skip("needs dbus-daemon (Debian package dbus-daemon)")
    home = tmp_path_factory.mktemp("a11y-home")
    env = dict(os.environ, DISPLAY=display, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               GSETTINGS_BACKEND="memory")
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env=env)
    procs = [bus]
    try:
        address = _read_line(bus, bus.stdout, START_TIMEOUT_S)
        procs.append(subprocess.Popen([launcher, "--launch-immediately"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=dict(env, DBUS_SESSION_BUS_ADDRESS=address)))
        _accessibility_on(address)
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)


def _accessibility_on(bus: str) -> None:
    """What a desktop does when the screen reader starts: programs that read it (Firefox) then expose
    themselves on the accessibility bus."""
    status = Properties(DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Status"))
    with open_dbus_connection(bus=bus) as conn:
        unwrap_msg(conn.send_and_get_reply(status.set("IsEnabled", "b", True), timeout=10))


class Firefox:
    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.env = env
        for name in ("chelsea.png", "coffee.png", "rocket.jpg"):
            shutil.copy(SAMPLES / name, folder / name)
        (folder / "page.html").write_text(PAGE, encoding="utf-8")
        profile = write_profile(folder)
        self.log_path = folder / "firefox.log"
        self.started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [FIREFOX, "-no-remote", "-profile", str(profile), "--width", str(WINDOW_SIZE[0]), "--height",
                 str(WINDOW_SIZE[1]), (folder / "page.html").as_uri()],
                env=dict(env, HOME=str(folder), XDG_CONFIG_HOME=str(folder / "config"),
                         XDG_CACHE_HOME=str(folder / "cache"), XDG_DATA_HOME=str(folder / "data"),
                         GSETTINGS_BACKEND="memory", MOZ_CRASHREPORTER_DISABLE="1", GDK_BACKEND="x11"),
                stdout=log, stderr=log)
        self.window = _until("Firefox showing the page", self._page_window)

    def log(self) -> str:
        """The end of what Firefox wrote, for a failure's message."""
        return "Firefox said: " + " | ".join(self.log_path.read_text(errors="replace").splitlines()[-8:])

    def _page_window(self) -> str | None:
        assert self.proc.poll() is None, f"Firefox stopped (exit status {self.proc.returncode}); {self.log()}"
        found = _xdotool(self.env, "search", "--name", r"^rect:")
        return found.splitlines()[0] if found else None

    def title(self) -> str:
        return _xdotool(self.env, "getwindowname", self.window)

    def photo_rect(self, which: str = "rect") -> dict:
        """Where the photo is on screen, or with ``which="shown"`` the part of it in the page's view."""
        m = re.search(rf"\b{which}:(\d+),(\d+),(\d+),(\d+) ", self.title())
        assert m, self.title()
        return _rect([int(v) for v in m.groups()])

    def scrolled(self) -> int:
        m = re.search(r" scrolled:(\d+) ", self.title())
        return int(m.group(1)) if m else 0

    def geometry(self) -> dict:
        out = dict(line.split("=") for line in _xdotool(self.env, "getwindowgeometry", "--shell",
                                                        self.window).splitlines())
        return _rect([int(out[k]) for k in ("X", "Y", "WIDTH", "HEIGHT")])

    def close(self) -> None:
        _stop(self.proc)


def _focused_on_bus(env: dict[str, str]) -> tuple[tuple[str, str], str, list[str]] | None:
    """The focused object, its role and its children's roles, as Firefox told the accessibility bus."""
    try:
        with atspi.Bus(atspi.bus_address(env)) as bus:
            ref = atspi.find_focused(bus, time.monotonic() + 5)
            return None if ref is None else (ref, bus.role(ref), [bus.role(k) for k in bus.children(ref)])
    except Exception:  # Firefox still registering, or the object gone as the focus moved: asked again
        return None


@pytest.fixture(scope="module")
def firefox(display, a11y_bus, tmp_path_factory):  # noqa: F811 (the fixture imported above)
    env = _env(display, a11y_bus)
    ff = Firefox(env, tmp_path_factory.mktemp("firefox"))
    try:
        ff.startup_s = time.monotonic() - ff.started
        _xdotool(env, "windowfocus", "--sync", ff.window)
        # Tab, as a person would, one key at a time, each once Firefox has told the bus where the focus went,
        # until the page and the bus agree that the link has it.
        was = _until("Firefox telling the accessibility bus where the focus is", lambda: _focused_on_bus(env))
        for _ in range(15):
            if was[1:] == ("link", ["image"]) and _until_or_none(lambda: "focus:pic" in ff.title(), 3):
                break
            _xdotool(env, "key", "Tab")
            was = _until("the focus moving on the accessibility bus",
                         lambda before=was: (now := _focused_on_bus(env)) and now[0] != before[0] and now, 15)
        else:
            raise AssertionError(f"Tab never put the focus on the link ({ff.title()!r}, {ff.log()})")
        yield ff
    finally:
        ff.close()


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``capdesk screen`` with the user folders of this test (conftest gives each test its own), not those
    of the module's setup, where Firefox's environment was made: --save writes the sidecar ledger there."""
    xdg = {k: v for k, v in os.environ.items() if k.startswith("XDG_") and k != "XDG_RUNTIME_DIR"}
    return screen(*args, env={**env, **xdg})


def _similarity(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference of two pictures at ``a``'s size, 0 (same) to 255."""
    b = b.convert("RGB").resize(a.size)
    return float(np.abs(np.asarray(a.convert("RGB"), dtype=np.int16) - np.asarray(b, dtype=np.int16)).mean())


def test_focus_takes_the_photo_inside_the_focused_link(firefox, tmp_path):
    rec = json.loads(_run("--focus", "--json", "--save", str(tmp_path), env=firefox.env).stdout)
    cap = rec["captured"]
    assert cap["what"] == "focus" and cap["role"] == "image" and cap["name"] == ""  # no alt text: no name
    assert cap["holder"]["role"] == "link"
    truth = firefox.photo_rect()
    assert cap["rect"] == truth, (cap["rect"], truth)
    # The pixels are the cat's, not the coffee's or the rocket's, nor the window around them.
    with Image.open(cap["saved"]) as shot:
        shot.load()
    assert shot.size == (truth["width"], truth["height"])
    apart = {name: _similarity(shot, Image.open(SAMPLES / name)) for name in ("chelsea.png", "coffee.png",
                                                                                "rocket.jpg")}
    assert apart["chelsea.png"] < 3 and min(apart["coffee.png"], apart["rocket.jpg"]) > 30, apart
    # Described as the photo itself is.
    own = json.loads(subprocess.run([sys.executable, "-m", "capdesk", "caption", str(SAMPLES / "chelsea.png"),
                                     "--json"], capture_output=True, text=True, timeout=300, cwd=ROOT,
                                    check=True).stdout.splitlines()[0])
    # Firefox draws its focus ring across the photo (the link's line box), which may change a word of the
    # caption; what is said, and the tags, are the photo's.
    assert rec["description"] == own["description"], (rec, own)
    assert [t["label"] for t in rec["tags"]] == [t["label"] for t in own["tags"]], (rec, own)
    assert firefox.startup_s < START_TIMEOUT_S
    # What was described is said first: a picture in a link, neither of them named.
    assert rec["target"] == {"role": "image", "name": "", "found_by": "focus", "holder": {"role": "link", "name": ""},
                             "partial": False, "scrolled": False, "named_only": False,
                             "intro": "The picture in a link with no name"}, rec["target"]
    plain = _run("--focus", env=firefox.env).stdout.strip()
    assert plain.startswith("The picture in a link with no name: ") and len(plain) > 40, plain


def test_window_is_the_firefox_window(firefox):
    rec = json.loads(_run("--window", "--json", env=firefox.env).stdout)
    cap = rec["captured"]
    assert cap["role"] == "window" and cap["rect"] == firefox.geometry(), (cap, firefox.geometry())
    assert cap["name"].startswith("rect:") and "Firefox" in cap["name"]


def test_speak_reaches_speech_dispatcher(firefox, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_screen", ROOT / "bench" / "bench_screen.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    speechd = bench.FakeSpeechd(tmp_path / "speechd.sock")
    env = dict(firefox.env, SPEECHD_ADDRESS=f"unix_socket:{tmp_path / 'speechd.sock'}", XDG_RUNTIME_DIR=str(tmp_path))
    proc = _run("--focus", "--speak", env=env)
    assert proc.stdout.strip() and "own voice" not in proc.stderr
    assert len(speechd.arrived) == 1  # the description was handed to speech-dispatcher, once


def test_a_photo_half_scrolled_away_is_scrolled_back_and_taken_whole(firefox, tmp_path):
    # Down arrows scroll the page while the link keeps the focus, until the top of the photo is under the
    # toolbar: the photo is scrolled back into view and taken whole, the same at every press, not the part
    # that happens to show.
    full = firefox.photo_rect()
    for _ in range(20):
        if firefox.photo_rect("shown")["height"] <= full["height"] - 100:
            break
        was = firefox.scrolled()
        _xdotool(firefox.env, "key", "Down")
        _until("the page scrolling", lambda before=was: firefox.scrolled() != before, 10)
    shown = firefox.photo_rect("shown")
    assert 0 < shown["height"] < full["height"] and "focus:pic" in firefox.title(), firefox.title()
    rec = json.loads(_run("--focus", "--json", "--save", str(tmp_path), env=firefox.env).stdout)
    got = rec["captured"]["rect"]
    assert rec["captured"]["role"] == "image" and got["height"] == full["height"], (rec["captured"], full)
    assert rec["target"]["scrolled"] is True and rec["target"]["partial"] is False, rec["target"]
    # Where the page itself now draws it.
    _until("the page saying where the photo now is", lambda: firefox.photo_rect() == got, 10)
    with Image.open(rec["captured"]["saved"]) as shot:
        shot.load()
    assert _similarity(shot, Image.open(SAMPLES / "chelsea.png")) < 3
    again = json.loads(_run("--focus", "--json", env=firefox.env).stdout)
    assert again["captured"]["rect"] == got and again["description"] == rec["description"], (again, rec)


def test_a_zoomed_page_gives_the_photo_as_drawn(firefox, tmp_path):
    # Back to the top (Home), then 120 % (Ctrl and + twice): the photo is drawn larger, and taken as drawn.
    _xdotool(firefox.env, "key", "Home")
    _until("the page scrolling back", lambda: firefox.scrolled() == 0, 10)
    natural = firefox.photo_rect()
    _xdotool(firefox.env, "key", "ctrl+plus", "ctrl+plus")
    _until("the page zooming", lambda: firefox.photo_rect()["width"] >= natural["width"] * 1.15, 10)
    zoomed = firefox.photo_rect()
    rec = json.loads(_run("--focus", "--json", "--save", str(tmp_path), env=firefox.env).stdout)
    got = rec["captured"]["rect"]
    assert rec["captured"]["role"] == "image", rec["captured"]
    # Firefox rounds the zoomed edges in its own units (1/60 of a pixel): a pixel either way is the same place.
    assert all(abs(got[k] - zoomed[k]) <= 1 for k in zoomed), (got, zoomed)
    with Image.open(rec["captured"]["saved"]) as shot:
        shot.load()
    apart = {name: _similarity(shot, Image.open(SAMPLES / name)) for name in ("chelsea.png", "coffee.png",
                                                                                "rocket.jpg")}
    assert apart["chelsea.png"] < 10 and min(apart["coffee.png"], apart["rocket.jpg"]) > 30, apart


def test_a_text_link_is_said_by_its_name(firefox):
    # Shift+Tab back to "First link": its words are its name, said as such; its underlined pixels are not read.
    _xdotool(firefox.env, "key", "shift+Tab")
    _until("the focus on the text link", lambda: "focus:first" in firefox.title(), 10)
    _until("the accessibility bus telling it", lambda: (got := _focused_on_bus(firefox.env)) and got[1] == "link"
           and not got[2], 10)
    proc = _run("--focus", env=firefox.env)
    assert proc.stdout.strip() == "The link 'First link', which holds no picture.", proc.stdout
    rec = json.loads(_run("--focus", "--json", env=firefox.env).stdout)
    assert rec["target"]["named_only"] is True and rec["target"]["role"] == "link", rec
    assert rec["text"] is None and rec["caption"] is None and rec["captured"]["role"] == "link", rec
