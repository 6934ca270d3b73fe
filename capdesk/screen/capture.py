"""The screen's pixels, read into memory: what the screen reader is on (``atspi``), the active window, a
rectangle, or all of it; or, for an object whose words are its name, no pixels at all (``saying``).

Nothing is written anywhere: the picture lives only in this process until the caller saves it. Under
X11, Pillow reads the pixels (XCB); python-xlib finds the active window (EWMH's _NET_ACTIVE_WINDOW, or the
window holding the keyboard focus where no window manager says). Under Wayland a program may not read
other programs' pixels (and the X server that Wayland desktops run for older programs shows only those
programs), so the desktop portal is asked for a screenshot (``portal``), whose file is deleted as soon as
it is read, and the rectangle is cut from it. Where there is no portal, capturing is refused in one line
saying what works instead. A Wayland desktop tells no program where the active window is, so ``window``
is refused there; ``focus`` works where the focused program knows where its window is on the screen.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

from PIL import Image

from capdesk.screen import saying
from capdesk.screen.atspi import AtspiError, NoPicture, Rect, Target, focus_target

WHAT = ("focus", "window", "region", "full")
ELSEWHERE = ("log in to an X11 session ('on Xorg' at the login screen), or take a screenshot (Print Screen) and "
             "run capdesk caption on the file")


class CaptureError(Exception):
    """Why the screen cannot be captured, in one line for the user."""


class NothingToTake(CaptureError):
    """Nothing to capture where the screen reader is (no picture at the reading position): said as it is."""


@dataclass
class Capture:
    image: Image.Image | None  # None: the object is said by its name (a text link), nothing was captured
    rect: Rect  # where on the screen the pixels came from, in screen pixels
    role: str  # "region", "screen", "window", or the accessible role of the focused object
    name: str = ""
    holder: dict | None = None  # the focused link or button, when the picture inside it was taken
    target: Target | None = None  # with "focus": the object the screen reader is on, as it was taken
    program: str = ""  # with "window" and "full": the (active) window's X11 WM_CLASS, its program
    title: str = ""  # with "full": the active window's X11 title (with "window" it is ``name``)

    def said(self, description: str) -> str:
        """What to print and say: which object it is about (with "focus"), then ``description``."""
        return saying.said(self.target, description)

    def target_json(self) -> dict | None:
        """For the JSON output: what was taken, how it was found, whether it is whole, and the words said
        before the description."""
        if self.target is None:
            return None
        return {**self.target.summary(), "intro": saying.intro(self.target)}

    def named_json(self, what: str) -> dict:
        """The JSON output for an object said by its name: the caption's fields, empty."""
        said = self.said("")
        return {"path": f"screen:{what}", "caption": None, "confidence": None, "in_domain": None,
                "domain_score": None, "tags": [], "text": None, "description": said, "words": None,
                "model": None, "error": None, "said_as": None, "review": False, "reason": None,
                "text_status": "none", "trust": None, "concepts": [], "objects": [],
                "captured": {"what": what, "role": self.role, "name": self.name, "rect": self.rect.to_json(),
                             "holder": self.holder, "saved": None, "sidecars": []},
                "target": self.target_json()}


def wayland(env: Mapping[str, str]) -> bool:
    return bool(env.get("WAYLAND_DISPLAY")) or env.get("XDG_SESSION_TYPE", "").lower() == "wayland"


def refusal(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str | None:
    """Why the screen cannot be captured in this session, or None when it can (X11, or Wayland with the
    desktop portal)."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return ("capdesk screen captures the screen on Linux (X11 or Wayland) only; elsewhere, take a screenshot "
                "and run capdesk caption on it")
    if wayland(env):
        from capdesk.screen import portal

        why = portal.unavailable(env)
        if why:
            return f"this is a Wayland session, where a program may not read the screen itself, and {why}: {ELSEWHERE}"
        return None
    if not env.get("DISPLAY"):
        return "no X display to capture (DISPLAY is not set): run it inside your desktop session"
    return None


def take(what: str, region: Rect | None = None, env: Mapping[str, str] | None = None) -> Capture:
    """``what`` (one of WHAT; ``region`` for "region") captured in this session, from the X display or, under
    Wayland, from the desktop portal's screenshot. Raises CaptureError saying why not."""
    env = os.environ if env is None else env
    rect, role, name, holder, t = None, "screen", "", None, None
    title = program = ""
    if what == "focus":
        try:
            t = focus_target(env)
        except NoPicture as exc:
            raise NothingToTake(str(exc)) from None
        except AtspiError as exc:
            raise CaptureError(str(exc)) from None
        if t.worded:  # said by its name: no pixels needed
            return Capture(None, t.rect, t.role, t.name, None, t)
        if wayland(env) and (t.window is None or (t.window.x, t.window.y) == (0, 0)):
            # Toolkits under Wayland give places inside their window, which lies somewhere unknown to them.
            raise CaptureError(f"under Wayland, the program with the focus does not say where its window is on the "
                               f"screen, so its focused {t.role} cannot be found in the screenshot; --full "
                               "describes the whole screen, --region X,Y,W,H a part of it")
        rect, role, name = t.rect, t.role, t.name
        holder = None if t.holder is None else {"role": t.holder.role, "name": t.holder.name,
                                                "rect": t.holder.rect.to_json()}
    elif what == "window":
        if wayland(env):
            raise CaptureError("a Wayland desktop tells no program where the active window is; --focus, --full "
                               "or --region X,Y,W,H work")
        rect, name, program = active_window(env.get("DISPLAY", ""))
        role = "window"
    elif what == "region":
        rect, role = region, "region"
    elif what != "full":
        raise ValueError(f"unknown capture {what!r} (one of {', '.join(WHAT)})")
    elif not wayland(env):
        title, program = _active_window_named(env.get("DISPLAY", ""))
    image, got = from_portal(rect, env) if wayland(env) else grab(rect, env.get("DISPLAY", ""))
    if t is not None and t.scrolled and not wayland(env):
        image, got = _settled(rect, env.get("DISPLAY", ""), image, got)
    return Capture(image, got, role, name, holder, t, program, title)


def _active_window_named(display: str) -> tuple[str, str]:
    """The active window's title and program, to say what the whole screen shows; empty where none is."""
    try:
        _, title, program = active_window(display)
    except CaptureError:
        return "", ""
    return title, program


SETTLE_MIN_S, SETTLE_MAX_S = 0.4, 3.0


def _settled(rect: Rect | None, display: str, image: Image.Image, got: Rect) -> tuple[Image.Image, Rect]:
    """The picture just scrolled into view, once the program has painted it: a program says where things
    are before it paints them there, so the pixels are taken again until two takes agree, from a moment
    after the scroll (a busy machine paints late) to a few seconds at most."""
    start = time.monotonic()
    while time.monotonic() - start < SETTLE_MAX_S:
        time.sleep(0.1)
        again, got_again = grab(rect, display)
        if again.tobytes() == image.tobytes() and time.monotonic() - start >= SETTLE_MIN_S:
            return again, got_again
        image, got = again, got_again
    return image, got


def parse_region(text: str) -> Rect:
    """``X,Y,W,H`` in screen pixels; ValueError saying what was expected."""
    parts = [p.strip() for p in text.split(",")]
    try:
        x, y, w, h = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"expected X,Y,WIDTH,HEIGHT in whole pixels, got {text!r}") from None
    if w <= 0 or h <= 0 or x < 0 or y < 0:
        raise ValueError(f"expected a position from 0,0 and a width and height above 0, got {text!r}")
    return Rect(x, y, w, h)


def grab(rect: Rect | None, display: str) -> tuple[Image.Image, Rect]:
    """The pixels of ``rect`` (None: the whole screen) on the X display, clipped to the screen, and the
    rectangle they came from. Raises CaptureError when the display cannot be read or the rectangle is off
    screen."""
    from PIL import ImageGrab

    try:
        whole = ImageGrab.grab(xdisplay=display)
    except OSError as exc:
        raise CaptureError(f"the X display {display} cannot be read ({exc})") from None
    return _cut(whole, rect)


def from_portal(rect: Rect | None, env: Mapping[str, str]) -> tuple[Image.Image, Rect]:
    """As ``grab``, from the Wayland desktop portal's screenshot (its file deleted once read)."""
    from capdesk.screen import portal

    try:
        whole = portal.screenshot(env)
    except portal.PortalError as exc:
        raise CaptureError(f"{exc}; {ELSEWHERE}") from None
    return _cut(whole, rect)


def _cut(whole: Image.Image, rect: Rect | None) -> tuple[Image.Image, Rect]:
    screen = Rect(0, 0, whole.width, whole.height)
    got = screen if rect is None else rect.intersect(screen)
    if got.empty:
        raise CaptureError(f"the rectangle {rect} lies outside the screen ({screen.width}x{screen.height})")
    if got != screen:
        whole = whole.crop((got.x, got.y, got.x + got.width, got.y + got.height))
    return whole.convert("RGB"), got


def active_window(display: str) -> tuple[Rect, str, str]:
    """Where the active window's contents are on screen, its title, and its program (WM_CLASS's class)."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay
    from Xlib.error import DisplayError, XError

    try:
        d = xdisplay.Display(display)
    except (DisplayError, OSError) as exc:
        raise CaptureError(f"the X display {display} cannot be opened ({exc})") from None
    try:
        root = d.screen().root
        wid = 0
        atom = d.intern_atom("_NET_ACTIVE_WINDOW", only_if_exists=True)
        if atom:
            prop = root.get_full_property(atom, X.AnyPropertyType)
            wid = int(prop.value[0]) if prop is not None and len(prop.value) else 0
        win = d.create_resource_object("window", wid) if wid else _focused_top_level(d, root)
        if win is None:
            raise CaptureError("no window is active (and none has the keyboard focus)")
        geom = win.get_geometry()
        origin = win.translate_coords(root, 0, 0)  # the window's top left corner, in screen coordinates
        title = _title(d, win, Xatom.STRING)
        return Rect(-origin.x, -origin.y, geom.width, geom.height), title, _program(win)
    except XError as exc:
        raise CaptureError(f"the active window went away while it was asked about ({exc})") from None
    finally:
        d.close()


def _focused_top_level(d, root):
    """Without a window manager: the top-level window holding the keyboard focus, or None."""
    focus = d.get_input_focus().focus
    if isinstance(focus, int) or focus is None or focus.id == root.id:
        return None  # PointerRoot or None: nobody holds the focus
    win = focus
    while True:
        tree = win.query_tree()
        if tree.parent is None or tree.parent.id == root.id:
            return win
        win = tree.parent


def _program(win) -> str:
    """The window's WM_CLASS class ("firefox-esr"'s is "Firefox-esr"), or its instance, or ""."""
    try:
        got = win.get_wm_class()
    except Exception:  # python-xlib raises its own errors for a window gone or a malformed property
        return ""
    return next((str(n) for n in reversed(got or ()) if n), "")


def _title(d, win, string_atom: int) -> str:
    utf8 = d.intern_atom("UTF8_STRING")
    for name, kind in (("_NET_WM_NAME", utf8), ("WM_NAME", string_atom)):
        prop = win.get_full_property(d.intern_atom(name), kind)
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return ""
