"""What the accessibility bus (AT-SPI) says a captured window, or the whole screen, shows: the window's
name and role, the program it belongs to, the page showing in it (a browser's document and where it is),
and the pictures in it with where each is.

A screenshot of a window is not a photo of a scene: a listener wants to hear which program it is, the
page's words before the browser's own controls, and the pictures in it described one by one. The
program knows all of that and tells the bus; asking is bounded (objects looked at, seconds), and where
there is no bus, or the program does not answer, nothing is known and ``window_shown`` gives None.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from jeepney.wrappers import DBusErrorResponse

from capdesk.screen import atspi
from capdesk.screen.atspi import DOCUMENTS, PICTURES, Bus, Rect, Ref

MAX_LOOKED_AT = 3000  # objects of one window looked at (a web page has thousands)
LOOK_TIMEOUT_S = 4.0  # the whole look, bus connection included
SIZE_WAIT_S = 1.0  # how long a page without a size yet is asked again
# A window is the captured one when their rectangles overlap this much (intersection over union): a
# window manager's frame adds a title bar and borders around what the program says is its window.
SAME_WINDOW = 0.6
# The roles of pictures: AT-SPI's, and Qt's name for a label showing a pixmap.
PICTURE_ROLES = PICTURES | {"graphic"}
MIN_PICTURE_PX = 48  # a picture narrower or lower than this on screen is an icon, not a picture to describe
MAX_PICTURES = 6  # pictures described in one capture, the largest (each costs a caption)
# Programs that are web browsers, by their accessible application name or X11 WM_CLASS (lower case).
BROWSERS = ("firefox", "chromium", "chrome", "epiphany", "falkon", "konqueror", "midori", "opera", "vivaldi",
            "brave", "librewolf", "qutebrowser", "microsoft-edge", "web browser", "icecat", "waterfox")


@dataclass
class Picture:
    """A picture in the window: its accessible name (its alt text in a page) and where it is on screen."""

    name: str
    rect: Rect


@dataclass
class Shown:
    """What the bus says a window shows (rectangles in screen pixels)."""

    name: str  # the window's accessible name: its title
    role: str  # "frame", "dialog", "window"
    program: str  # the application's accessible name ("Firefox")
    page: Rect | None = None  # the showing document's rectangle: the page, inside the browser's controls
    page_name: str = ""
    page_role: str = ""
    pictures: list[Picture] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "role": self.role, "program": self.program,
                "page": None if self.page is None else {"name": self.page_name, "role": self.page_role,
                                                        "rect": self.page.to_json()}}


def is_browser(*names: str) -> bool:
    """Whether a program named so (its accessible name, its WM_CLASS) is a web browser."""
    return any(b in n.lower() for n in names if n for b in BROWSERS)


def window_shown(env: Mapping[str, str], rect: Rect, whole_screen: bool,
                 timeout: float = LOOK_TIMEOUT_S) -> Shown | None:
    """What the window captured at ``rect`` shows (``whole_screen``: the active window of the screen); None
    where the bus cannot be reached or names no such window."""
    deadline = time.monotonic() + timeout
    try:
        with Bus(atspi.bus_address(env)) as bus:
            return look(bus, rect, whole_screen, deadline)
    except (atspi.AtspiError, DBusErrorResponse, TimeoutError, OSError, ValueError):
        return None


def look(bus: Bus, rect: Rect, whole_screen: bool, deadline: float) -> Shown | None:
    """``window_shown`` on a connection."""
    win = _the_window(bus, rect, whole_screen)
    if win is None:
        return None
    ref, app = win
    shown = Shown(bus.name(ref), atspi._role(bus, ref), bus.name(app) if app else "")
    late: list[tuple[Ref, str]] = []  # the pictures, sized once the walk is done
    doc: Ref | None = None
    stack = list(reversed(atspi._children(bus, ref)[:atspi.MAX_CHILDREN]))
    budget = MAX_LOOKED_AT
    while stack and budget > 0 and time.monotonic() < deadline:
        obj = stack.pop()
        budget -= 1
        st = atspi._states(bus, obj)
        if atspi._has(st, atspi.STATE_DEFUNCT) or not atspi._has(st, atspi.STATE_SHOWING):
            continue  # a tab in the background, a closed menu: not on screen
        role = atspi._role(bus, obj)
        if role in PICTURE_ROLES:
            late.append((obj, bus.name(obj) or bus.description(obj)))
            continue
        if role in DOCUMENTS and doc is None:
            doc = obj
            shown.page_name, shown.page_role = bus.name(obj), role
        stack.extend(reversed(atspi._children(bus, obj)[:atspi.MAX_CHILDREN]))
    sizes = _sized(bus, ([doc] if doc is not None else []) + [pic for pic, _ in late], deadline)
    shown.page = sizes.get(doc) if doc is not None else None
    found = [Picture(name, sizes[pic]) for pic, name in late if pic in sizes]
    shown.pictures = pictures_on_screen(found, rect, shown.page)
    return shown


def _sized(bus: Bus, refs: list[Ref], deadline: float) -> dict[Ref, Rect]:
    """The rectangles of ``refs`` that have one, those without asked again for a moment: Firefox sends
    the sizes of a page and its pictures a moment after the bus first asks about them."""
    until = min(deadline, time.monotonic() + SIZE_WAIT_S)
    sizes: dict[Ref, Rect] = {}
    while True:
        for ref in refs:
            if ref not in sizes and not (r := bus.extents(ref)).empty:
                sizes[ref] = r
        if len(sizes) == len(refs) or time.monotonic() + atspi.SIZE_RETRY_S > until:
            return sizes
        time.sleep(atspi.SIZE_RETRY_S)


def pictures_on_screen(found: list[Picture], capture: Rect, page: Rect | None) -> list[Picture]:
    """The pictures to describe: cut to what shows of them (inside the capture, and the page's view for
    those in it), large enough to be more than icons, the ``MAX_PICTURES`` largest, in reading order."""
    kept: list[Picture] = []
    for p in found:
        r = p.rect.intersect(capture)
        if page is not None and not p.rect.intersect(page).empty:
            r = r.intersect(page)  # scrolled partly out of the page's view: the part showing
        if r.width >= MIN_PICTURE_PX and r.height >= MIN_PICTURE_PX and all(r != k.rect for k in kept):
            kept.append(Picture(p.name, r))
    kept = sorted(kept, key=lambda p: -p.rect.area)[:MAX_PICTURES]
    return sorted(kept, key=lambda p: (p.rect.y, p.rect.x))


def _overlap(a: Rect, b: Rect) -> float:
    inter = a.intersect(b).area
    union = a.area + b.area - inter
    return inter / union if union else 0.0


def _the_window(bus: Bus, rect: Rect, whole_screen: bool) -> tuple[Ref, Ref | None] | None:
    """The top-level window captured (the one whose rectangle is the capture's; on the whole screen, the
    active one, else the largest showing), and its application."""
    try:
        apps = bus.children((atspi.REGISTRY, atspi.ROOT_PATH))
    except (DBusErrorResponse, TimeoutError):
        return None
    best: tuple[float, Ref, Ref] | None = None
    for app in apps[:atspi.MAX_CHILDREN]:
        for win in atspi._children(bus, app)[:atspi.MAX_CHILDREN]:
            st = atspi._states(bus, win)
            if atspi._has(st, atspi.STATE_DEFUNCT) or not atspi._has(st, atspi.STATE_SHOWING):
                continue
            r = bus.extents(win)
            if whole_screen:
                score = (2.0 if atspi._has(st, atspi.STATE_ACTIVE) else 1.0) if not r.intersect(rect).empty else 0.0
                score += r.intersect(rect).area / max(1, rect.area)
            else:
                score = _overlap(r, rect)
                if score < SAME_WINDOW:
                    continue
            if score > 0 and (best is None or score > best[0]):
                best = (score, win, app)
    return None if best is None else (best[1], best[2])
