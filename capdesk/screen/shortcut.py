"""The key that runs ``capdesk screen --focus --speak`` from anywhere: its notation, and GNOME's binding.

The key is written as GNOME writes it (``<Super>d``, ``<Control><Alt>p``, ``Print``); ``Super+D`` and
``Ctrl+Alt+P`` are understood too and turned into that notation. A key that would be taken from every
program's typing (a letter alone, or with Shift only) is refused, saying why.

GNOME keeps custom shortcuts as a list of paths in ``org.gnome.settings-daemon.plugins.media-keys``, each
path naming a name, a command and a binding. CapDesk's path and name are the ones ``install-user.sh
--shortcut`` writes, so that the installer and the Settings dialog change the same shortcut; the other
paths in the list (the user's own shortcuts) are kept as they are. gsettings is run as a program: GLib's
Python bindings belong to the system's Python, not to the one CapDesk runs in.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

KEYS = "org.gnome.settings-daemon.plugins.media-keys"
PATH = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/capdesk-screen/"
ONE = f"{KEYS}.custom-keybinding:{PATH}"
NAME = "CapDesk: describe the focused picture"
ARGS = ("screen", "--focus", "--speak")
GSETTINGS_TIMEOUT_S = 10.0
MAX_LENGTH = 100
# GTK's modifier names (gtk_accelerator_parse), each with the spelling GNOME stores.
MODIFIERS = {"control": "Control", "ctrl": "Control", "ctl": "Control", "primary": "Primary", "shift": "Shift",
             "alt": "Alt", "mod1": "Alt", "super": "Super", "win": "Super", "hyper": "Hyper", "meta": "Meta",
             "mod2": "Mod2", "mod3": "Mod3", "mod4": "Mod4", "mod5": "Mod5"}
# Keys that type nothing, so they may be bound alone.
ALONE = re.compile(r"F([1-9]|[12][0-9]|3[0-5])|Print|Pause|Scroll_Lock|Break|XF86\w+")


class ShortcutError(ValueError):
    """Why a key cannot be bound, or the binding not written, in one line for the user."""


def normalize(text: str) -> str:
    """``text`` in GNOME's notation ("" for no key); ShortcutError saying what is wrong with it."""
    text = text.strip()
    if not text:
        return ""
    if len(text) > MAX_LENGTH or "\0" in text:
        raise ShortcutError(f"the key is too long to be one key (at most {MAX_LENGTH} characters)")
    if len(text) > 1 and text.endswith("+") and not text.endswith("++"):
        raise ShortcutError(f"{text!r} has no key after its modifiers; write it as GNOME does, e.g. <Super>d")
    if "<" in text or ">" in text:
        mods = re.findall(r"<([^<>]*)>", text)
        key = re.sub(r"<[^<>]*>", "", text).strip()
        if re.search(r"[<>]", key):
            raise ShortcutError(f"{text!r}: a modifier is not closed; write it as GNOME does, e.g. <Super>d")
    elif "+" in text[:-1]:  # Super+D; Ctrl++ is Control and the plus key
        *mods, key = [part.strip() for part in (text[:-2].split("+") + ["+"] if text.endswith("++")
                                                 else text.split("+"))]
    else:
        mods, key = [], text
    names = []
    for m in mods:
        name = MODIFIERS.get(m.strip().lower())
        if name is None:
            raise ShortcutError(f"{text!r}: {m!r} is not a modifier (use Super, Control, Alt, Shift, Hyper or Meta)")
        if name not in names:
            names.append(name)
    if not key:
        raise ShortcutError(f"{text!r} has no key after its modifiers; write it as GNOME does, e.g. <Super>d")
    key = _key_name(key, text)
    if not (set(names) - {"Shift"}) and not ALONE.fullmatch(key):
        raise ShortcutError(f"{text!r} would be taken from every program's typing: add a modifier, e.g. <Super>{key}")
    return "".join(f"<{n}>" for n in names) + key


def _key_name(key: str, text: str) -> str:
    """The key's X keysym name, as GNOME stores it (letters in lower case)."""
    if len(key) == 1 and key.isalpha():
        return key.lower()
    try:
        from Xlib import XK
    except ImportError:  # not Linux: the name is taken as written
        if re.fullmatch(r"\w+", key):
            return key
        raise ShortcutError(f"{text!r}: {key!r} is not a key name") from None
    for name in (key, key.capitalize(), key.lower(), key.upper()):
        if XK.string_to_keysym(name):
            return name
    if len(key) == 1:  # "/" is "slash" to GNOME: the name of the keysym with that character's code
        names = [n[3:] for n, v in vars(XK).items() if n.startswith("XK_") and v == ord(key)]
        if names:
            return names[0]
    raise ShortcutError(f"{text!r}: {key!r} is not a key name (e.g. d, F9, Print, space)")


def command(executable: str | None = None, frozen: bool | None = None) -> str:
    """The command line the desktop runs for the key, quoted as GNOME parses it (a folder with spaces
    works): the installed app itself, else the ``capdesk`` script beside this Python, else ``python -m``."""
    frozen = getattr(sys, "frozen", False) if frozen is None else frozen
    exe = executable or sys.executable
    if frozen:
        argv = [exe]
    elif (Path(exe).parent / "capdesk").exists():
        argv = [str(Path(exe).parent / "capdesk")]
    elif shutil.which("capdesk"):
        argv = [str(shutil.which("capdesk"))]
    else:
        argv = [exe, "-m", "capdesk"]
    return shlex.join([*argv, *ARGS])


def _gsettings(env: Mapping[str, str], *args: str) -> str:
    try:
        done = subprocess.run(["gsettings", *args], env=dict(env), capture_output=True, text=True,
                              timeout=GSETTINGS_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ShortcutError(f"gsettings did not run ({exc})") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        raise ShortcutError(f"gsettings {args[0]} failed ({why})")
    return done.stdout.strip()


def gnome_available(env: Mapping[str, str] | None = None) -> bool:
    """Whether GNOME's shortcut settings are here: gsettings, and its schema installed."""
    env = os.environ if env is None else env
    if shutil.which("gsettings", path=env.get("PATH")) is None:
        return False
    try:
        return KEYS in _gsettings(env, "list-schemas").splitlines()
    except ShortcutError:
        return False


def _text(value: str) -> str:
    """``value`` as a GVariant string, for gsettings to read it as written (quotes and all)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _paths(env: Mapping[str, str]) -> list[str]:
    text = _gsettings(env, "get", KEYS, "custom-keybindings")
    text = text.removeprefix("@as ").strip()
    try:
        paths = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ShortcutError(f"GNOME's list of custom shortcuts cannot be read ({text[:60]!r})") from None
    return [str(p) for p in paths]


def _set_paths(env: Mapping[str, str], paths: list[str]) -> None:
    _gsettings(env, "set", KEYS, "custom-keybindings", "[" + ", ".join(f"'{p}'" for p in paths) + "]")


def current(env: Mapping[str, str] | None = None) -> str | None:
    """The key GNOME has bound to CapDesk's shortcut now, or None (none, or no GNOME settings here)."""
    env = os.environ if env is None else env
    try:
        if not gnome_available(env) or PATH not in _paths(env):
            return None
        binding = ast.literal_eval(_gsettings(env, "get", ONE, "binding"))
    except (ShortcutError, ValueError, SyntaxError):
        return None
    return str(binding) or None


def apply(key: str, env: Mapping[str, str] | None = None, cmd: str | None = None) -> str:
    """Bind ``key`` (GNOME's notation; "" removes the binding) in GNOME's settings, keeping the user's other
    shortcuts; what was done, in one line. ShortcutError when the key is bad or gsettings fails."""
    env = os.environ if env is None else env
    key = normalize(key)
    if not gnome_available(env):
        return (f"no GNOME keyboard settings here (gsettings and {KEYS}), so no shortcut was set in them"
                if key else "no GNOME keyboard settings here, so there was no shortcut in them to remove")
    paths = _paths(env)
    if not key:
        if PATH in paths:
            _set_paths(env, [p for p in paths if p != PATH])
        for field in ("name", "command", "binding"):
            _gsettings(env, "reset", ONE, field)
        return "GNOME's shortcut for capdesk screen is removed"
    _gsettings(env, "set", ONE, "name", _text(NAME))
    _gsettings(env, "set", ONE, "command", _text(cmd or command()))
    _gsettings(env, "set", ONE, "binding", _text(key))
    if PATH not in paths:
        _set_paths(env, [*paths, PATH])
    return f"in GNOME, {key} now runs capdesk screen --focus --speak"
