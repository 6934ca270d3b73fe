"""The screen's pixels, read from the X11 display into memory: a rectangle, the active window, or all of it.

Nothing is written anywhere: the picture lives only in this process until the caller saves it. Pillow
reads the pixels (XCB); python-xlib finds the active window (EWMH's _NET_ACTIVE_WINDOW, or the window
holding the keyboard focus where no window manager says). Under Wayland a program may not read other
programs' pixels, and the X server that Wayland desktops run for older programs shows only those
programs, so capturing there is refused, saying what works instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from PIL import Image

from capdesk.screen.atspi import Rect


class CaptureError(Exception):
    """Why the screen cannot be captured, in one line for the user."""


@dataclass
class Capture:
    image: Image.Image
    rect: Rect  # where on the screen the pixels came from, in screen pixels
    role: str  # "region", "screen", "window", or the accessible role of the focused object
    name: str = ""
    holder: dict | None = None  # the focused link or button, when the picture inside it was taken


def refusal(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str | None:
    """Why the screen cannot be captured in this session, or None when it can (X11)."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return ("capdesk screen captures the screen on Linux (X11) only; elsewhere, take a screenshot and run "
                "capdesk caption on it")
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return ("this is a Wayland session, where a program may not read the screen: log in to an X11 session "
                "('on Xorg' at the login screen) to use capdesk screen, or take a screenshot (Print Screen) and "
                "run capdesk caption on the file")
    if not env.get("DISPLAY"):
        return "no X display to capture (DISPLAY is not set): run it inside your desktop session"
    return None


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
    """The pixels of ``rect`` (None: the whole screen), clipped to the screen, and the rectangle they
    came from. Raises CaptureError when the display cannot be read or the rectangle is off screen."""
    from PIL import ImageGrab

    try:
        whole = ImageGrab.grab(xdisplay=display)
    except OSError as exc:
        raise CaptureError(f"the X display {display} cannot be read ({exc})") from None
    screen = Rect(0, 0, whole.width, whole.height)
    got = screen if rect is None else rect.intersect(screen)
    if got.empty:
        raise CaptureError(f"the rectangle {rect} lies outside the screen ({screen.width}x{screen.height})")
    if got != screen:
        whole = whole.crop((got.x, got.y, got.x + got.width, got.y + got.height))
    return whole.convert("RGB"), got


def active_window(display: str) -> tuple[Rect, str]:
    """Where the active window's contents are on screen, and its title."""
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
        return Rect(-origin.x, -origin.y, geom.width, geom.height), title
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


def _title(d, win, string_atom: int) -> str:
    utf8 = d.intern_atom("UTF8_STRING")
    for name, kind in (("_NET_WM_NAME", utf8), ("WM_NAME", string_atom)):
        prop = win.get_full_property(d.intern_atom(name), kind)
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return ""
