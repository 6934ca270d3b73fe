"""What a description of the screen says first: which object it is about.

A blind user who presses the key cannot see what was taken; the screen reader's browse mode and the
keyboard focus can be in different places, and a picture can be partly scrolled out of view. So the
description starts with the object, in plain words ("The picture of the link 'surf': ...", "The
picture 'harbour at dusk' (only part of the picture is on screen): ..."), and an object whose words
are its name (a text link) is said by that name alone.
"""

from __future__ import annotations

from capdesk.screen.atspi import PICTURES, Target

MAX_NAME = 150  # characters of a name said (a link around a whole paragraph is named by all of it)
# AT-SPI's role names, as a listener would say them
WORDS = {"push button": "button", "toggle button": "button", "document web": "page", "document frame": "page",
         "frame": "window", "table cell": "cell", "page tab": "tab", "internal frame": "frame",
         "scroll pane": "view", "static": "text"}
NOTHING = "CapDesk has nothing to say about it."


def _quoted(name: str) -> str:
    name = " ".join(name.split())
    return f"'{name if len(name) <= MAX_NAME else name[:MAX_NAME - 1].rstrip() + '…'}'"


def quoted(name: str) -> str:
    """A name as said: in quotes, spaces made single, at most ``MAX_NAME`` characters."""
    return _quoted(name)


def word(role: str) -> str:
    return "picture" if role in PICTURES else WORDS.get(role, role)


def intro(t: Target) -> str:
    """Which object the description is about, without a final stop."""
    name = t.name.strip() or t.description.strip()
    if t.holder is not None:
        holder_name = t.holder.name.strip() or name
        what = (f"The picture of the {word(t.holder.role)} {_quoted(holder_name)}" if holder_name
                else f"The picture in a {word(t.holder.role)} with no name")
    elif t.role in PICTURES:
        what = f"The picture {_quoted(name)}" if name else "A picture with no name"
    else:
        what = f"The {word(t.role)} {_quoted(name)}" if name else f"The {word(t.role)}"
    if t.partial:
        what += f" (only part of the {'picture' if t.holder is not None or t.role in PICTURES else word(t.role)}" \
                " is on screen)"
    return what


def said(t: Target | None, description: str) -> str:
    """The words to print and say: the object, then its description (``t`` None: the description alone)."""
    if t is None:
        return description
    if t.worded:
        return f"{intro(t)}, which holds no picture."
    return f"{intro(t)}: {description.strip() or NOTHING}"
