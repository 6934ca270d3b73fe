"""What the screen reader is on, asked of the accessibility bus (AT-SPI) over D-Bus.

The screen reader learns about the focus from events; a program started by a key press has seen none,
so it walks the accessible trees from the registry's root (the active window first, showing objects
only) to the object whose state says FOCUSED. Plain D-Bus calls through jeepney (pure Python): the
toolkit bindings (pyatspi, gi) belong to the system's Python, not to the one CapDesk runs in.

In a web page the screen reader's browse mode moves a point of its own, which is not the keyboard focus:
pictures that are not links never get the focus. What it leaves behind (Orca 43 in Firefox, as seen on
the bus) decides, in this order: a focused link or button holding a picture (Orca focuses a link it
moves to); the document's caret, when it is at a picture or in an object holding one (Orca moves the
caret where there is text to hold it); and, when nothing has the focus (Orca moving to a picture that
is no link blurs the link it left, and a picture holds no caret), the picture at the top edge of the
page's view, where Orca's structural navigation (G) scrolls what it moves to.

When the focused object is a link, a button or a cell holding a picture, the picture is what the user
means, so its rectangle is taken (unless the picture is a small icon beside the holder's own text); when
an object has no size (a link around a block image, as Firefox reports it, or an empty section), the
rectangle of its children is. A picture partly scrolled out of view is scrolled into it (Component's
ScrollTo, as the screen reader itself scrolls) so that it is taken whole; where it still is not (larger
than the view, or a program that does not scroll), what is taken is cut to the part showing through the
window and the scrolled views around it, and the target says it is partial: a photo half scrolled out of
view must not bring the toolbar above it along. An object whose words are its name (a text link) is
said by that name: its pixels are not read.
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
TEXT = "org.a11y.atspi.Text"
HYPERTEXT = "org.a11y.atspi.Hypertext"
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
VIEWS = WINDOWS | {"internal frame", "scroll pane", "viewport", "document web", "document frame"}
MAX_ANCESTORS = 64
SIZE_RETRY_S = 0.1
SIZE_WAIT_S = 2.0  # how long a focused object without a size is asked again (see focus_target)
DOCUMENTS = frozenset({"document web", "document frame"})
# What the caret being in makes the picture inside what the screen reader is on; a paragraph or a section
# is not among them: the caret in a line of text is on the text, not on a picture further along the line.
CARET_HOLDERS = frozenset({"link", "push button", "toggle button", "table cell", "list item", "figure"})
MAX_CHROME = 2000  # objects of a window looked at for its showing document (a browser's own controls)
MAX_PAGE = 3000  # objects of a page looked at for the picture at the top of its view
CARET_DEPTH = 16  # embedded objects followed down from the document's caret
# Orca scrolls what structural navigation moves to so that its top is at the top edge of the view; a
# pixel or two of rounding either way is the same place.
TOP_EDGE_PX = 3
SCROLL_TOP_EDGE, SCROLL_ANYWHERE = 2, 6  # AtspiScrollType
SCROLL_WAIT_S = 1.5  # Firefox says where things are a moment after it scrolled
# Objects whose words are their name: a text link is said by its name, not read from its pixels. A button
# is not among them: its name may stand for an icon (Qt's "Photo of the day" button showing a photo).
WORDED = frozenset({"link", "heading", "label", "static", "list item", "menu item", "page tab", "check box",
                    "radio button", "tree item"})
EMBEDDED = "\ufffc"  # where a child object (a picture, a link) sits in its parent's text

Ref = tuple[str, str]  # (bus name, object path): one accessible object


class AtspiError(Exception):
    """Why the focused object cannot be found, in one line for the user."""


class NoSize(AtspiError):
    """The focused object has no rectangle on screen (yet, or scrolled away)."""


class NoPicture(AtspiError):
    """In a page, neither the caret nor the top of the view is at a picture: said as it is, never the whole
    page described in its place."""


NO_PICTURE = "No picture at the reading position"


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
    found_by: str = "focus"  # "focus", "caret" (the document's caret), or "view top" (see the module's words)
    partial: bool = False  # only part of it is on screen, and only that part is in ``rect``
    scrolled: bool = False  # scrolled into view to be taken whole
    worded: bool = False  # its name says what it is (a text link): said, not captured
    description: str = ""  # the accessible description (a title), where the name is empty

    def to_json(self) -> dict:
        return {"role": self.role, "name": self.name, "rect": self.rect.to_json(),
                "holder": None if self.holder is None else self.holder.to_json()}

    def summary(self) -> dict:
        """What was taken, for the JSON output: how it was found, and whether it is whole."""
        return {"role": self.role, "name": self.name or self.description, "found_by": self.found_by,
                "holder": None if self.holder is None else {"role": self.holder.role, "name": self.holder.name},
                "partial": self.partial, "scrolled": self.scrolled, "named_only": self.worded}


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

    def prop(self, ref: Ref, interface: str, name: str):
        """A property's value, or None where the object has no such interface or property."""
        msg = Properties(DBusAddress(ref[1], bus_name=ref[0], interface=interface)).get(name)
        try:
            return unwrap_msg(self.conn.send_and_get_reply(msg, timeout=CALL_TIMEOUT_S))[0][1]
        except (DBusErrorResponse, TimeoutError, ValueError, IndexError):
            return None

    def description(self, ref: Ref) -> str:
        value = self.prop(ref, ACCESSIBLE, "Description")
        return str(value) if value else ""

    def interfaces(self, ref: Ref) -> list[str]:
        try:
            return [str(i) for i in self.call(ref, ACCESSIBLE, "GetInterfaces")[0]]
        except (DBusErrorResponse, TimeoutError):
            return []

    def caret_child(self, ref: Ref) -> tuple[Ref | None, int]:
        """Where ``ref``'s text caret is: the child object embedded there (None at a plain character), and
        the offset (-1: the caret is not in ``ref``)."""
        if TEXT not in self.interfaces(ref):
            return None, -1
        offset = self.prop(ref, TEXT, "CaretOffset")
        if offset is None or int(offset) < 0:
            return None, -1
        offset = int(offset)
        try:
            char = str(self.call(ref, TEXT, "GetText", "ii", (offset, offset + 1))[0])
            if char != EMBEDDED:
                return None, offset
            index = int(self.call(ref, HYPERTEXT, "GetLinkIndex", "i", (offset,))[0])
            if index < 0:
                return None, offset
            kid = self.call(ref, ACCESSIBLE, "GetChildAtIndex", "i", (index,))[0]
        except (DBusErrorResponse, TimeoutError, ValueError):
            return None, offset
        path = str(kid[1])
        return (None if path == "/org/a11y/atspi/null" else (str(kid[0]), path)), offset

    def scroll_to(self, ref: Ref, how: int = SCROLL_ANYWHERE) -> bool:
        """Ask the program to scroll ``ref`` into view; whether it said it did."""
        try:
            return bool(self.call(ref, COMPONENT, "ScrollTo", "u", (how,))[0])
        except (DBusErrorResponse, TimeoutError):
            return False


def _has(states: int, bit: int) -> bool:
    return bool(states >> bit & 1)


def _short(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _windows(bus: Bus) -> list[Ref]:
    """Every program's top-level windows, the active ones first."""
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
    return active + rest


def find_focused(bus: Bus, deadline: float) -> Ref | None:
    """The object whose state says FOCUSED, looked for in active windows first, then in every other."""
    budget = [MAX_VISITED]
    hidden: list[Ref] = []
    for top in _windows(bus):
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


def _role(bus: Bus, ref: Ref) -> str:
    try:
        return bus.role(ref)
    except (DBusErrorResponse, TimeoutError):
        return ""


def _is_picture(t: Target) -> bool:
    return t.role in PICTURES or t.holder is not None


def _whole(bus: Bus, ref: Ref, rect: Rect, view: Rect | None) -> tuple[Rect, bool, bool]:
    """The picture ``ref`` (at ``rect``) as it can be taken: scrolled into ``view`` when part of it lies
    outside and it fits; its rectangle on screen, whether only part of it is there, and whether it was
    scrolled."""
    if view is None or rect.intersect(view) == rect:
        return rect, False, False
    scrolled = False
    if rect.width <= view.width and rect.height <= view.height and bus.scroll_to(ref):
        # Firefox tells where things are a moment after it scrolled: asked again until it says.
        until = time.monotonic() + SCROLL_WAIT_S
        while True:
            now = bus.extents(ref)
            if (now != rect and now.intersect(view) == now) or time.monotonic() > until:
                break
            time.sleep(0.05)
        scrolled, rect = now != rect, now if not now.empty else rect
    shown = rect.intersect(view)
    return shown, shown != rect, scrolled


def target_of(bus: Bus, ref: Ref, found_by: str = "focus") -> Target:
    """What to capture for the object ``ref`` (the focused one, or the one at the caret): the picture it
    is or holds, scrolled into view where it can be; an object whose words are its name, to be said by
    it; else itself, or its children."""
    view, window = _view(bus, ref)
    focused = Target(bus.role(ref), bus.name(ref), _extent(bus, ref), window=window, found_by=found_by)
    picture: tuple[Ref, Rect] | None = None
    holder: Target | None = None
    if focused.role in PICTURES and not focused.rect.empty:
        picture = (ref, focused.rect)
    elif focused.role in HOLDERS:
        inside = _picture_inside(bus, ref)
        if inside is not None and inside[1].area >= PICTURE_SHARE * focused.rect.union(inside[1]).area:
            picture, holder = inside, focused
    if picture is not None:
        kid, rect = picture
        shown, partial, scrolled = _whole(bus, kid, rect, view)
        if not shown.empty:
            name = focused.name if holder is None else bus.name(kid)
            return Target(focused.role if holder is None else bus.role(kid), name, shown, holder=holder,
                          window=window, found_by=found_by, partial=partial, scrolled=scrolled,
                          description="" if name else bus.description(kid))
    if focused.role in WORDED and focused.name.strip():
        focused.worded = True
        return focused
    if view is not None and not focused.rect.empty:
        whole = focused.rect
        focused.rect = focused.rect.intersect(view)
        focused.partial = not focused.rect.empty and focused.rect != whole
    if focused.rect.empty:
        raise NoSize(f"the focused {focused.role} {focused.name!r} has no size on screen (is it scrolled "
                         "out of view?)")
    return focused


def find_document(bus: Bus, deadline: float) -> Ref | None:
    """The page showing in the active window, looked for among the window's own controls (not inside pages)."""
    budget = MAX_CHROME
    for top in _windows(bus):
        stack = [top]
        while stack and budget > 0 and time.monotonic() < deadline:
            ref = stack.pop()
            budget -= 1
            st = _states(bus, ref)
            if _has(st, STATE_DEFUNCT) or (ref != top and not _has(st, STATE_SHOWING)):
                continue  # a tab in the background shows no page
            if _role(bus, ref) in DOCUMENTS:
                return ref
            stack.extend(reversed(_children(bus, ref)[:MAX_CHILDREN]))
    return None


def document_of(bus: Bus, ref: Ref) -> Ref | None:
    """The outermost document around ``ref`` (or ``ref`` itself), or None where it is in no page."""
    found = ref if _role(bus, ref) in DOCUMENTS else None
    for _ in range(MAX_ANCESTORS):
        parent = bus.parent(ref)
        if parent is None:
            break
        ref = parent
        role = _role(bus, ref)
        if role in DOCUMENTS:
            found = ref
        elif role in WINDOWS:
            break
    return found


def caret_object(bus: Bus, doc: Ref) -> Ref | None:
    """The innermost object at the document's caret (a picture sitting in a line's text, the link the
    caret is in), or None where the caret is in no object of it."""
    ref = doc
    for _ in range(CARET_DEPTH):
        kid, offset = bus.caret_child(ref)
        if offset < 0:
            return None if ref == doc else ref  # a picture has no text of its own: the caret is at it
        if kid is None:
            return ref
        ref = kid
    return ref


def picture_at_top(bus: Bus, doc: Ref, deadline: float) -> Ref | None:
    """The largest picture of the page whose top is at the top edge of the page's view, or None."""
    view = bus.extents(doc)
    if view.empty:
        return None
    best: tuple[Ref, int] | None = None
    stack = list(reversed(_children(bus, doc)[:MAX_CHILDREN]))
    budget = MAX_PAGE
    while stack and budget > 0 and time.monotonic() < deadline:
        ref = stack.pop()
        budget -= 1
        r = bus.extents(ref)
        # Nothing inside a block scrolled wholly above or below the view is at its top (Firefox gives a link
        # around a photo the photo's last line only, which lies inside the view with the photo).
        if not r.empty and (r.y + r.height < view.y or r.y > view.y + view.height):
            continue
        role = _role(bus, ref)
        if role in PICTURES:
            if abs(r.y - view.y) <= TOP_EDGE_PX and not r.intersect(view).empty \
                    and (best is None or r.area > best[1]):
                best = (ref, r.area)
            continue
        stack.extend(reversed(_children(bus, ref)[:MAX_CHILDREN]))
    return None if best is None else best[0]


def _in_page(bus: Bus, doc: Ref, unfocused: bool, deadline: float, top_first: bool = False) -> Target | None:
    """What the screen reader is on in the page ``doc`` by its caret, or with nothing focused (``unfocused``)
    or only the page itself (``top_first``) by the picture at the top of the view; None where neither says."""
    if unfocused or top_first:
        # Orca moved to a picture that is no link: the caret stayed in the text it left, the picture went
        # to the top of the view.
        top = picture_at_top(bus, doc, deadline)
        if top is not None:
            return target_of(bus, top, "view top")
    at = caret_object(bus, doc)
    if at is None:
        return None
    try:
        t = target_of(bus, at, "caret")
    except NoSize:
        return None  # the caret left behind out of view
    at_picture = t.role in PICTURES and t.holder is None or t.holder is not None and t.holder.role in CARET_HOLDERS
    return t if unfocused or at_picture else None


def reader_target(bus: Bus, deadline: float) -> Target:
    """What the screen reader is on, as the capture should frame it (see the module's words)."""
    focused = find_focused(bus, deadline)
    doc = find_document(bus, deadline) if focused is None else document_of(bus, focused)
    if focused is not None and focused != doc:
        t = target_of(bus, focused)
        if _is_picture(t) or doc is None:
            return t
    if doc is not None:
        # The document itself focused is a page where nothing but the page has had the focus: Orca's G onto
        # a picture that is no link left it so, and the picture is at the top of the view as when nothing is
        # focused.
        t = _in_page(bus, doc, focused is None, deadline, top_first=focused is None or focused == doc)
        if t is not None:
            return t
        if focused == doc:
            raise NoPicture(NO_PICTURE)
    if focused is None:
        raise AtspiError("no program told the accessibility bus what has the keyboard focus (is "
                         "accessibility turned on for it?); --window describes the active window")
    return target_of(bus, focused)


def focus_target(env: Mapping[str, str] | None = None, timeout: float = 5.0) -> Target:
    """What the screen reader is on now (the keyboard focus, or in a page its browse-mode caret), as the
    capture should frame it. Raises AtspiError saying why not."""
    env = os.environ if env is None else env
    deadline = time.monotonic() + timeout
    sized_by = min(deadline, time.monotonic() + SIZE_WAIT_S)
    with Bus(bus_address(env)) as bus:
        while True:
            try:
                return reader_target(bus, deadline)
            except (DBusErrorResponse, TimeoutError) as exc:
                raise AtspiError(f"the focused object went away while it was asked about ({_short(exc)})") from None
            except NoSize:
                # Firefox tells where things are a moment after it tells the focus moved (its content
                # process sends the sizes on): asked again while there is time.
                if time.monotonic() + SIZE_RETRY_S > sized_by:
                    raise
                time.sleep(SIZE_RETRY_S)
