"""One key, from anywhere on an X11 desktop: a passive grab of it on the root window (XGrabKey), so that
no desktop's own shortcut settings are needed.

The key is written as GNOME writes its shortcuts (``<Super>d``, ``<Primary><Alt>F12``, ``Print``). The
X server tells only the exact modifiers held, so the key is grabbed four times: as written, and with
Num Lock, Caps Lock, or both on, or it would go dead whenever one of those lights is lit. The grab
lives in a thread of its own with its own connection to the display (Xlib connections are not to be
shared between threads); presses are handed to a callback there.
"""

from __future__ import annotations

import contextlib
import queue
import re
import select
import threading
from collections.abc import Callable

POLL_S = 0.5

# GTK's accelerator modifier names, lower-cased (gtk_accelerator_parse), with the keysym that says which
# X modifier bit each one is on this keyboard ("" for the fixed ones).
MODIFIERS = {"shift": "", "control": "", "ctrl": "", "ctl": "", "primary": "", "alt": "Alt_L",
             "super": "Super_L", "hyper": "Hyper_L", "meta": "Meta_L",
             "mod1": "", "mod2": "", "mod3": "", "mod4": "", "mod5": ""}
_PART = re.compile(r"<([^<>]+)>")


class BadKey(ValueError):
    """The key cannot be read or grabbed, in one line for the user."""


def parse_accelerator(text: str) -> tuple[tuple[str, ...], str, int]:
    """(modifier names, key name, keysym) of ``<Super>d``-style text; BadKey saying what is wrong."""
    from Xlib import XK

    rest, mods = text.strip(), []
    while rest.startswith("<"):
        m = _PART.match(rest)
        if m is None:
            raise BadKey(f"{text!r}: a modifier is not closed with '>'")
        name = m.group(1).strip().lower()
        if name not in MODIFIERS:
            raise BadKey(f"{text!r}: unknown modifier <{m.group(1)}> (known: Shift, Control, Primary, Alt, "
                            "Super, Hyper, Meta, Mod1 to Mod5)")
        mods.append("control" if name in ("ctrl", "ctl", "primary") else name)
        rest = rest[m.end():].strip()
    if not rest:
        raise BadKey(f"{text!r}: no key after the modifiers (write it as GNOME does, e.g. <Super>d)")
    keysym = XK.string_to_keysym(rest)
    if not keysym and len(rest) == 1:
        keysym = XK.string_to_keysym(rest.lower())
    if not keysym:
        keysym = next((k for k in (XK.string_to_keysym(rest.capitalize()), XK.string_to_keysym(rest.upper())) if k), 0)
    if not keysym:
        raise BadKey(f"{text!r}: no key is called {rest!r} (X key names: d, F12, Print, space, Return ...)")
    return tuple(dict.fromkeys(mods)), rest, keysym


class KeyGrab:
    """A key grabbed on ``display`` while this runs; ``on_press`` is called (in the grab's thread) at each press."""

    def __init__(self, display: str, on_press: Callable[[], None]) -> None:
        from Xlib import display as xdisplay
        from Xlib.error import DisplayError

        try:
            self._d = xdisplay.Display(display)
        except (DisplayError, OSError) as exc:
            raise BadKey(f"the X display {display!r} cannot be opened for the key ({exc})") from None
        self._root = self._d.screen().root
        self._on_press = on_press
        self._grabbed: list[tuple[int, int]] = []  # (keycode, modifiers) held
        self._keycode = 0
        self._requests: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self.key = ""
        self._thread = threading.Thread(target=self._run, name="capdesk-keygrab", daemon=True)
        self._thread.start()

    def set_key(self, accel: str, timeout: float = 10.0) -> str | None:
        """Grab ``accel`` instead of the key held ("" grabs none); why it could not be, or None."""
        done: queue.Queue = queue.Queue()
        self._requests.put((accel, done))
        try:
            return done.get(timeout=timeout)
        except queue.Empty:
            return "the display did not answer in time"

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    # -- the grab's thread ---------------------------------------------------------------------
    def _run(self) -> None:
        from Xlib import X

        d = self._d
        try:
            while not self._stop.is_set():
                while not self._requests.empty():
                    accel, done = self._requests.get()
                    done.put(self._apply(accel))
                ready, _, _ = select.select([d.fileno()], [], [], POLL_S)
                if not ready and not d.pending_events():
                    continue
                for _ in range(d.pending_events()):
                    ev = d.next_event()
                    if ev.type == X.KeyPress and ev.detail == self._keycode:
                        with contextlib.suppress(Exception):  # a failing press must not end the grab
                            self._on_press()
        except Exception:  # the display went away: the service goes on, answering its socket
            pass
        finally:
            with contextlib.suppress(Exception):
                self._ungrab()
                d.close()

    def _mask(self, keysym_name: str, fallback: int) -> int:
        from Xlib import XK

        code = self._d.keysym_to_keycode(XK.string_to_keysym(keysym_name))
        for bit, codes in enumerate(self._d.get_modifier_mapping()):
            if code and code in codes:
                return 1 << bit
        return fallback

    def _apply(self, accel: str) -> str | None:
        from Xlib import X
        from Xlib.error import CatchError

        self._ungrab()
        self.key = ""
        if not accel.strip():
            return None
        try:
            names, key, keysym = parse_accelerator(accel)
        except BadKey as exc:
            return str(exc)
        fixed = {"shift": X.ShiftMask, "control": X.ControlMask, "mod1": X.Mod1Mask, "mod2": X.Mod2Mask,
                 "mod3": X.Mod3Mask, "mod4": X.Mod4Mask, "mod5": X.Mod5Mask}
        fallbacks = {"alt": X.Mod1Mask, "super": X.Mod4Mask, "hyper": X.Mod4Mask, "meta": X.Mod1Mask}
        mods = 0
        for n in names:
            mods |= fixed[n] if n in fixed else self._mask(MODIFIERS[n], fallbacks[n])
        keycode = self._d.keysym_to_keycode(keysym)
        if not keycode:
            return f"{accel!r}: this keyboard has no {key} key"
        num_lock = self._mask("Num_Lock", X.Mod2Mask)
        catch = CatchError()
        for extra in {0, X.LockMask, num_lock, X.LockMask | num_lock}:
            self._root.grab_key(keycode, mods | extra, True, X.GrabModeAsync, X.GrabModeAsync, onerror=catch)
            self._grabbed.append((keycode, mods | extra))
        self._d.sync()
        if catch.get_error() is not None:
            self._ungrab()
            return (f"{accel} is taken by another program's shortcut: choose another key, or let that shortcut run "
                    "'capdesk screen --focus --speak', which the service answers all the same")
        self._keycode, self.key = keycode, accel
        return None

    def _ungrab(self) -> None:
        from Xlib.error import CatchError

        catch = CatchError()
        for keycode, mods in self._grabbed:
            self._root.ungrab_key(keycode, mods, onerror=catch)
        if self._grabbed:
            self._d.sync()
        self._grabbed, self._keycode = [], 0
