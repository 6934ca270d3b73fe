"""The screen of a Wayland session, through the desktop portal's screenshot (org.freedesktop.portal.Screenshot).

Under Wayland a program may not read other programs' pixels; the desktop (GNOME, KDE Plasma, wlroots
compositors with xdg-desktop-portal-wlr) hands a screenshot to a program that asks its portal, after asking
the user's leave where it is set up to. The portal answers through a Request object: the call returns its
path, and the Request's Response signal carries the outcome (0 taken, 1 refused by the user, 2 otherwise
refused) and the screenshot's address, a file the portal wrote.

The pixels must stay private: the file is read into memory and deleted at once, before anything else is
done with it, so the picture lives only in this process, as it does under X11.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse, unwrap_msg
from PIL import Image

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"
CALL_TIMEOUT_S = 10.0  # the portal starts on first use (D-Bus activation)
# The desktop may ask the user's leave the first time (GNOME does): time for a person to answer.
ANSWER_TIMEOUT_S = 60.0
OUTCOMES = {1: "the screenshot was refused (by you, or by the desktop's privacy settings)",
            2: "the desktop refused the screenshot"}


class PortalError(Exception):
    """Why the portal gave no screenshot, in one line for the user."""


def _short(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def unavailable(env: Mapping[str, str]) -> str | None:
    """Why the screenshot portal cannot be asked in this session (a clause), or None when it can."""
    address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        return "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set) to reach the desktop portal"
    try:
        with open_dbus_connection(bus=address) as conn:
            bus = message_bus
            owned = unwrap_msg(conn.send_and_get_reply(bus.NameHasOwner(PORTAL), timeout=CALL_TIMEOUT_S))[0]
            if not owned:
                names = unwrap_msg(conn.send_and_get_reply(bus.ListActivatableNames(), timeout=CALL_TIMEOUT_S))[0]
                if PORTAL not in names:
                    return ("the desktop portal is not installed (xdg-desktop-portal with the desktop's own "
                            "backend, e.g. xdg-desktop-portal-gnome, -kde or -wlr)")
    except (OSError, TimeoutError, DBusErrorResponse, RuntimeError, ValueError) as exc:
        return f"the D-Bus session bus cannot be reached ({_short(exc)})"
    return None


def screenshot(env: Mapping[str, str], timeout: float = ANSWER_TIMEOUT_S) -> Image.Image:
    """The whole screen, asked of the desktop portal without a dialog of its own (interactive=false); the
    file the portal wrote is deleted as soon as it is read. Raises PortalError saying why not."""
    address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        raise PortalError(unavailable(env) or "no D-Bus session bus")
    try:
        with open_dbus_connection(bus=address) as conn:
            uri = _ask(conn, timeout)
    except (OSError, DBusErrorResponse, RuntimeError, ValueError) as exc:
        raise PortalError(f"the desktop portal failed ({_short(exc)})") from None
    return _read_and_delete(uri)


def _ask(conn, timeout: float) -> str:
    token = "capdesk" + secrets.token_hex(8)
    sender = conn.unique_name.lstrip(":").replace(".", "_")
    handle = f"/org/freedesktop/portal/desktop/request/{sender}/{token}"
    # Listened for before asking: the answer may come before the call's own reply does.
    rule = MatchRule(type="signal", interface=REQUEST, member="Response", path=handle)
    unwrap_msg(conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=CALL_TIMEOUT_S))
    with conn.filter(rule) as answers:
        call = new_method_call(DBusAddress(PORTAL_PATH, bus_name=PORTAL, interface=SCREENSHOT), "Screenshot",
                               "sa{sv}", ("", {"handle_token": ("s", token), "interactive": ("b", False),
                                               "modal": ("b", False)}))
        try:
            got = unwrap_msg(conn.send_and_get_reply(call, timeout=CALL_TIMEOUT_S))[0]
        except TimeoutError:
            raise PortalError("the desktop portal did not answer") from None
        except DBusErrorResponse as exc:
            raise PortalError(f"the desktop portal has no screenshot ({exc.name})") from None
        if got != handle:
            raise PortalError("the desktop portal is too old (before version 0.9): it answered elsewhere")
        try:
            response = conn.recv_until_filtered(answers, timeout=timeout)
        except TimeoutError:
            _close(conn, handle)
            raise PortalError(f"the desktop gave no screenshot within {timeout:.0f} s") from None
    code, results = response.body
    if code != 0:
        raise PortalError(OUTCOMES.get(int(code), f"the desktop refused the screenshot (response {code})"))
    uri = results.get("uri", ("s", ""))[1]
    if not uri:
        raise PortalError("the desktop portal said it took the screenshot but named no file")
    return str(uri)


def _close(conn, handle: str) -> None:
    """Withdraw the request (its dialog, if any, goes away)."""
    with contextlib.suppress(OSError, TimeoutError, DBusErrorResponse):
        conn.send_and_get_reply(new_method_call(DBusAddress(handle, bus_name=PORTAL, interface=REQUEST), "Close"),
                                timeout=2.0)


def _read_and_delete(uri: str) -> Image.Image:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise PortalError(f"the desktop portal gave the screenshot at {uri[:80]!r}, not in a file")
    path = Path(unquote(parsed.path))
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise PortalError(f"the desktop portal's screenshot {path} is not a file")
    except FileNotFoundError:
        raise PortalError(f"the desktop portal's screenshot {path} is not there") from None
    try:
        with Image.open(path) as im:
            im.load()
            return im.convert("RGB")
    except (OSError, Image.DecompressionBombError) as exc:
        raise PortalError(f"the desktop portal's screenshot cannot be read ({_short(exc)})") from None
    finally:
        _delete(path)  # at once: the screen's pixels are kept nowhere but in this process


def _delete(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise PortalError(f"the screenshot the desktop wrote to {path} could not be deleted ({exc.strerror}); "
                          "delete it yourself") from None
