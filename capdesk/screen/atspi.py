"""Where the object with the keyboard focus is, asked of the accessibility bus (AT-SPI) over D-Bus.

The screen reader learns about the focus from events; a program started by a key press has seen none,
so it walks the accessible trees from the registry's root (the active window first, showing objects
only) to the object whose state says FOCUSED. Plain D-Bus calls through jeepney (pure Python): the
toolkit bindings (pyatspi, gi) belong to the system's Python, not to the one CapDesk runs in.

When the focused object is a link, a button or a cell holding a picture, the picture is what the user
means, so its rectangle is taken (unless the picture is a small icon beside the holder's own text); when
an object has no size (a link around a block image, as Firefox reports it, or an empty section), the
rectangle of its children is. What is taken is cut to the part showing through the window and the
scrolled views around it: a photo half scrolled out of view must not bring the toolbar above it along.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from jeepney import DBusAddress, Properties, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.wrappers import DBusErrorResponse, unwrap_msg

ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
REGISTRY = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
# AtspiStateType bit numbers (at-spi2-core's atspi-constants.h)
STATE_ACTIVE, STATE_DEFUNCT, STATE_FOCUSED, STATE_SHOWING = 1, 6, 12, 25
STATE_MANAGES_DESCENDANTS = 31
COORDS_SCREEN = 0
# Objects that hold a picture rather than being one: the picture inside is what the user asks about.
HOLDERS = frozenset({"link", "push button", "toggle button", "table cell", "list item", "tree item", "menu item",
                     "page tab", "section", "paragraph", "panel", "figure"})
PICTURES = frozenset({"image", "icon", "canvas", "animation"})
MAX_VISITED = 5000  # objects looked at before giving up (a web page has thousands)
MAX_CHILDREN = 400  # of one object (a table or list managing its own thousands of rows)
CALL_TIMEOUT_S = 1.0  # one unresponsive program must not hold the key press for long
INSIDE_DEPTH = 4  # how deep a picture is looked for inside a link or a button
# The picture stands for its holder when it covers at least this share of both together: a photo in a link
# does (Firefox gives the link only its line's height, or no size at all), a 12-pixel icon on a button
# beside the button's words does not.
PICTURE_SHARE = 0.25
# Ancestors whose rectangle is the visible view: what lies outside them is scrolled away or off the window.
WINDOWS = frozenset({"frame", "window", "dialog"})
VIEWS = WINDOWS | {"internal frame", "scroll pane", "viewport"}
MAX_ANCESTORS = 64
SIZE_RETRY_S = 0.1
SIZE_WAIT_S = 2.0  # how long a focused object without a size is asked again (see focus_target)

Ref = tuple[str, str]  # (bus name, object path): one accessible object


class AtspiError(Exception):
    """Why the focused object cannot be found, in one line for the user."""


class NoSize(AtspiError):
    """The focused object has no rectangle on screen (yet, or scrolled away)."""


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    @property
    def empty(self) -> bool:
        return self.width <= 0 or self.height <= 0

    @property
    def area(self) -> int:
        return 0 if self.empty else self.width * self.height

    def union(self, other: Rect) -> Rect:
        if self.empty:
            return other
        if other.empty:
            return self
        x, y = min(self.x, other.x), min(self.y, other.y)
        return Rect(x, y, max(self.x + self.width, other.x + other.width) - x,
                    max(self.y + self.height, other.y + other.height) - y)

    def intersect(self, other: Rect) -> Rect:
        x, y = max(self.x, other.x), max(self.y, other.y)
        right = min(self.x + self.width, other.x + other.width)
        bottom = min(self.y + self.height, other.y + other.height)
        return Rect(x, y, max(0, right - x), max(0, bottom - y))

    def to_json(self) -> dict:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}

    def __str__(self) -> str:
        return f"{self.x},{self.y},{self.width},{self.height}"


@dataclass
class Target:
    """What is captured: an accessible object's role, name and rectangle on screen, and the object
    holding it when the picture inside the focused one was taken."""

    role: str
    name: str
    rect: Rect
    holder: Target | None = field(default=None)
    window: Rect | None = field(default=None)  # the top-level window around it, where its program says

    def to_json(self) -> dict:
        return {"role": self.role, "name": self.name, "rect": self.rect.to_json(),
                "holder": None if self.holder is None else self.holder.to_json()}


def bus_address(env: Mapping[str, str]) -> str:
    """The accessibility bus's address: AT_SPI_BUS_ADDRESS, else asked of org.a11y.Bus on the session bus
    (which starts the bus when it is not running yet)."""
    if env.get("AT_SPI_BUS_ADDRESS"):
        return env["AT_SPI_BUS_ADDRESS"]
    if not env.get("DBUS_SESSION_BUS_ADDRESS"):
        raise AtspiError("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so the accessibility bus "
                         "cannot be reached; run it inside your desktop session, or use --window or --region")
    try:
        with open_dbus_connection(bus=env["DBUS_SESSION_BUS_ADDRESS"]) as conn:
            msg = new_method_call(DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus"),
                                  "GetAddress")
            return str(unwrap_msg(conn.send_and_get_reply(msg, timeout=5.0))[0])
    except (OSError, TimeoutError, DBusErrorResponse, RuntimeError) as exc:
        raise AtspiError(f"the accessibility bus cannot be reached ({_short(exc)}); is at-spi2-core installed "
                         "and accessibility turned on? --window and --region work without it") from None


class Bus:
    """A connection to the accessibility bus, and the few calls that finding the focus needs."""

    def __init__(self, address: str) -> None:
        try:
            self.conn: DBusConnection = open_dbus_connection(bus=address)
        except (OSError, RuntimeError) as exc:
            raise AtspiError(f"the accessibility bus at {address} refused the connection ({_short(exc)})") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Bus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, ref: Ref, interface: str, method: str, signature: str | None = None, body: tuple = ()) -> tuple:
        msg = new_method_call(DBusAddress(ref[1], bus_name=ref[0], interface=interface), method, signature, body)
        return unwrap_msg(self.conn.send_and_get_reply(msg, timeout=CALL_TIMEOUT_S))

    def children(self, ref: Ref) -> list[Ref]:
        return [(str(b), str(p)) for b, p in self.call(ref, ACCESSIBLE, "GetChildren")[0]]

    def states(self, ref: Ref) -> int:
        words = self.call(ref, ACCESSIBLE, "GetState")[0]
        return sum(int(w) << (32 * i) for i, w in enumerate(words))

    def role(self, ref: Ref) -> str:
        return str(self.call(ref, ACCESSIBLE, "GetRoleName")[0])

    def name(self, ref: Ref) -> str:
        msg = Properties(DBusAddress(ref[1], bus_name=ref[0], interface=ACCESSIBLE)).get("Name")
        try:
            return str(unwrap_msg(self.conn.send_and_get_reply(msg, timeout=CALL_TIMEOUT_S))[0][1])
        except (DBusErrorResponse, TimeoutError):
            return ""

    def parent(self, ref: Ref) -> Ref | None:
        msg = Properties(DBusAddress(ref[1], bus_name=ref[0], interface=ACCESSIBLE)).get("Parent")
        try:
            bus_name, path = unwrap_msg(self.conn.send_and_get_reply(msg, timeout=CALL_TIMEOUT_S))[0][1]
        except (DBusErrorResponse, TimeoutError, ValueError):
            return None
        return None if path in ("/org/a11y/atspi/null", ROOT_PATH) else (str(bus_name), str(path))

    def extents(self, ref: Ref) -> Rect:
        try:
            x, y, w, h = self.call(ref, COMPONENT, "GetExtents", "u", (COORDS_SCREEN,))[0]
        except (DBusErrorResponse, TimeoutError):
            return Rect(0, 0, 0, 0)  # not a visible component
        return Rect(int(x), int(y), int(w), int(h))


def _has(states: int, bit: int) -> bool:
    return bool(states >> bit & 1)


def _short(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def find_focused(bus: Bus, deadline: float) -> Ref | None:
    """The object whose state says FOCUSED, looked for in active windows first, then in every other."""
    try:
        apps = bus.children((REGISTRY, ROOT_PATH))
    except (DBusErrorResponse, TimeoutError) as exc:
        raise AtspiError(f"the accessibility registry did not answer ({_short(exc)})") from None
    active: list[Ref] = []
    rest: list[Ref] = []
    for app in apps:
        for win in _children(bus, app):
            st = _states(bus, win)
            (active if _has(st, STATE_ACTIVE) else rest).append(win)
    budget = [MAX_VISITED]
    hidden: list[Ref] = []
    for top in active + rest:
        found = _walk(bus, top, deadline, budget, hidden)
        if found is not None:
            return found
    return hidden[0] if hidden else None


def _children(bus: Bus, ref: Ref) -> list[Ref]:
    try:
        return bus.children(ref)
    except (DBusErrorResponse, TimeoutError):
        return []  # a program that went away, or hangs: the others are still asked


def _states(bus: Bus, ref: Ref) -> int:
    try:
        return bus.states(ref)
    except (DBusErrorResponse, TimeoutError):
        return 1 << STATE_DEFUNCT


def _walk(bus: Bus, top: Ref, deadline: float, budget: list[int], hidden: list[Ref]) -> Ref | None:
    """The focused object on screen under ``top``; a focused one that is not SHOWING goes into ``hidden``."""
    stack = [top]
    while stack and budget[0] > 0 and time.monotonic() < deadline:
        ref = stack.pop()
        budget[0] -= 1
        st = _states(bus, ref)
        if _has(st, STATE_DEFUNCT):
            continue
        showing = ref == top or _has(st, STATE_SHOWING)
        if _has(st, STATE_FOCUSED):
            if showing:
                return ref
            # A link whose line is scrolled away while the photo inside it still shows is not SHOWING in
            # Firefox: kept, in case nothing on screen says it has the focus.
            hidden.append(ref)
        if not showing:
            continue  # what is not on screen (a tab in the background) holds no focus the user can see
        kids = _children(bus, ref)
        if _has(st, STATE_MANAGES_DESCENDANTS):
            kids = kids[:MAX_CHILDREN]
        stack.extend(reversed(kids))
    return None


def _descendants(bus: Bus, ref: Ref, depth: int) -> Iterator[Ref]:
    if depth <= 0:
        return
    for kid in _children(bus, ref)[:MAX_CHILDREN]:
        yield kid
        yield from _descendants(bus, kid, depth - 1)


def _picture_inside(bus: Bus, ref: Ref) -> tuple[Ref, Rect] | None:
    """The largest picture on screen inside ``ref``, or None."""
    best: tuple[Ref, Rect] | None = None
    for kid in _descendants(bus, ref, INSIDE_DEPTH):
        try:
            role = bus.role(kid)
        except (DBusErrorResponse, TimeoutError):
            continue
        if role in PICTURES:
            r = bus.extents(kid)
            if not r.empty and (best is None or r.area > best[1].area):
                best = (kid, r)
    return best


def _extent(bus: Bus, ref: Ref, depth: int = INSIDE_DEPTH) -> Rect:
    """``ref``'s rectangle, or where it has none, the rectangle around its children's."""
    rect = bus.extents(ref)
    if rect.empty and depth > 0:
        rect = Rect(0, 0, 0, 0)
        for kid in _children(bus, ref)[:MAX_CHILDREN]:
            rect = rect.union(_extent(bus, kid, depth - 1))
    return rect if not rect.empty else Rect(0, 0, 0, 0)


def _view(bus: Bus, ref: Ref) -> tuple[Rect | None, Rect | None]:
    """The part of the screen through which ``ref`` can be seen (its window cut by the scrolled views
    around it), and its window's rectangle; None where no ancestor says."""
    view: Rect | None = None
    window: Rect | None = None
    for _ in range(MAX_ANCESTORS):
        parent = bus.parent(ref)
        if parent is None:
            break
        ref = parent
        try:
            role = bus.role(ref)
        except (DBusErrorResponse, TimeoutError):
            break
        if role in VIEWS:
            r = bus.extents(ref)
            if not r.empty:
                view = r if view is None else view.intersect(r)
                window = r if role in WINDOWS else window
    return view, window


def target_of(bus: Bus, ref: Ref) -> Target:
    """What to capture for the focused object ``ref``: the picture it holds, itself, or its children."""
    view, window = _view(bus, ref)
    focused = Target(bus.role(ref), bus.name(ref), _extent(bus, ref), window=window)
    if focused.role in HOLDERS:
        inside = _picture_inside(bus, ref)
        if inside is not None and inside[1].area >= PICTURE_SHARE * focused.rect.union(inside[1]).area:
            kid, rect = inside
            shown = rect if view is None else rect.intersect(view)
            if not shown.empty:
                return Target(bus.role(kid), bus.name(kid), shown, holder=focused, window=window)
    if view is not None and not focused.rect.empty:
        focused.rect = focused.rect.intersect(view)
    if focused.rect.empty:
        raise NoSize(f"the focused {focused.role} {focused.name!r} has no size on screen (is it scrolled "
                         "out of view?)")
    return focused


def focus_target(env: Mapping[str, str] | None = None, timeout: float = 5.0) -> Target:
    """What has the keyboard focus now, as the capture should frame it. Raises AtspiError saying why not."""
    env = os.environ if env is None else env
    deadline = time.monotonic() + timeout
    sized_by = min(deadline, time.monotonic() + SIZE_WAIT_S)
    with Bus(bus_address(env)) as bus:
        while True:
            ref = find_focused(bus, deadline)
            if ref is None:
                raise AtspiError("no program told the accessibility bus what has the keyboard focus (is "
                                 "accessibility turned on for it?); --window describes the active window")
            try:
                return target_of(bus, ref)
            except (DBusErrorResponse, TimeoutError) as exc:
                raise AtspiError(f"the focused object went away while it was asked about ({_short(exc)})") from None
            except NoSize:
                # Firefox tells where things are a moment after it tells the focus moved (its content
                # process sends the sizes on): asked again while there is time.
                if time.monotonic() + SIZE_RETRY_S > sized_by:
                    raise
                time.sleep(SIZE_RETRY_S)
