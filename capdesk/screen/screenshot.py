"""How a capture of the screen is described, every word of it read.

A window or the whole screen is a screenshot, not a photo of a scene: the caption models learnt from
photos, and of a browser showing a cat and a cup of coffee they say "a plate of food". So it is said as
a screenshot of the program it shows, by the window's name and role as the accessibility bus gives them
(``shown``; else the X11 title and WM_CLASS), a browser as a browser with the page it shows, and each
picture in it that the bus places is cut out and described on its own, as a picture ("It shows a
picture: A cat lying on a blanket."). The scene caption of the whole capture is never said; where the
bus says nothing, what the object detector surely saw is said instead ("Seen in it: a cat.").

Every capture (a region and the focused picture too) keeps the words read whole (``wholetext``), the
page's before the browser's own controls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from capdesk.describe import composer, policy
from capdesk.describe.alttext import quoted_text
from capdesk.describe.plainwords import listed
from capdesk.describe.seeing import seen_objects
from capdesk.screen import saying, wholetext
from capdesk.screen.atspi import Rect
from capdesk.screen.capture import wayland
from capdesk.screen.shown import Picture, Shown, is_browser, window_shown
from capdesk.status import SaidAs

SCREENSHOT = "a screenshot"
REASON = "a screenshot is said as the program it shows, with its pictures described one by one; the scene " \
         "caption of the whole capture is not said"


@dataclass
class ScreenReading:
    """A capture described: the describer's record of it (its description and text made whole), the
    words read, and for a screenshot what the bus said it shows and each picture's description."""

    described: Any  # capdesk.describe.describer.Described
    text: str | None
    text_cut: bool = False
    screenshot: bool = False
    shown: Shown | None = None
    program: str = ""  # the X11 WM_CLASS, where the bus names no program
    pictures: list[tuple[Picture, Any]] = field(default_factory=list)

    def spoken(self, printed: str, all_words: bool = False) -> str:
        """``printed`` as said aloud: a long text summarised unless ``all_words`` (``wholetext.spoken``)."""
        return wholetext.spoken(printed, self.text, all_words)

    def json_fields(self) -> dict:
        """What --json adds to the describer's fields: the text's size, and for a screenshot what it shows."""
        out: dict = {"text_words": wholetext.word_count(self.text), "text_cut": self.text_cut}
        if self.screenshot:
            s = self.shown
            out["screenshot"] = {
                "window": s.to_json() if s else None, "x11_class": self.program or None,
                "browser": _browser(s, self.program), "accessible": s is not None,
                "pictures": [{"name": p.name, "rect": p.rect.to_json(), "description": d.description,
                              "caption": d.caption.text if d.caption else None, "said_as": d.said_as}
                             for p, d in self.pictures]}
        return out


def describe(describer, image: Image.Image, what: str, label: str, rect: Rect, env: Mapping[str, str],
             title: str = "", program: str = "") -> ScreenReading:
    """The capture ``image`` of ``what`` ("window", "full", "region", "focus"), taken at ``rect`` on screen,
    described by ``describer``; ``title`` and ``program``: the X11 window's title and WM_CLASS."""
    if what not in ("window", "full"):
        d = describer.describe_images([image], [label])[0]
        text, cut = wholetext.whole_text(d.text_lines)
        _with_text(d, text, describer.options.show_guess)
        return ScreenReading(d, text, cut)
    shown = window_shown(env, rect, what == "full")
    if shown is not None and wayland(env):
        # Under Wayland a program places things inside its own window, which lies somewhere unknown to it:
        # the names hold, the rectangles do not.
        shown.pictures, shown.page = [], None
    pictures = shown.pictures if shown else []
    crops = [image.crop((p.rect.x - rect.x, p.rect.y - rect.y, p.rect.x - rect.x + p.rect.width,
                         p.rect.y - rect.y + p.rect.height)) for p in pictures]
    described = describer.describe_images([image, *crops], [label] + [f"{label}:picture {i + 1}"
                                                                      for i in range(len(crops))])
    d = described[0]
    page = None if shown is None or shown.page is None else Rect(shown.page.x - rect.x, shown.page.y - rect.y,
                                                                  shown.page.width, shown.page.height)
    text, cut = wholetext.whole_text(d.text_lines, page)
    r = ScreenReading(d, text, cut, True, shown, program, list(zip(pictures, described[1:])))
    _as_screenshot(r, what, title)
    return r


def _with_text(d, text: str | None, show_guess: bool) -> None:
    """``d``'s description and text with the whole text read, where the alt text held it cut short."""
    if not text or not d.text or d.decision is None or not d.decision.text:
        return
    d.text = text
    d.decision = dataclasses.replace(d.decision, text=text)
    d.description = composer.alt_text(d.decision, show_guess).text


def _as_screenshot(r: ScreenReading, what: str, title: str) -> None:
    """The capture's record said as a screenshot: its description, standing and long description."""
    d = r.described
    parts = [intro(what, r.shown, title, r.program), pictures_said(r.pictures)]
    if r.shown is None and d.evidence is not None:  # no bus to place the pictures: what surely is there
        seen = seen_objects(d.evidence, d.settings)[0]
        parts.append(f"Seen in it: {listed(seen)}." if seen else "")
    if r.text:
        parts.append(quoted_text(r.text))
    d.description = " ".join(p for p in parts if p)
    d.text = r.text
    d.said_as = SaidAs.WITHHELD
    d.review = any(pd.review for _, pd in r.pictures)
    # Why it needs review is a picture's reason, the first that needs it; else why no caption was said.
    d.reason = next((f"picture {i}: {pd.reason}" for i, (_, pd) in enumerate(r.pictures, 1) if pd.review), REASON)
    d.decision = policy.Decision(SaidAs.WITHHELD, text=r.text, reason=REASON, kind=SCREENSHOT)


def _browser(shown: Shown | None, program: str) -> bool:
    return is_browser(shown.program if shown else "", program)


def window_words(shown: Shown | None, title: str, program: str) -> str:
    """'the window 'Pets — Mozilla Firefox', a web browser showing the page 'Pets''."""
    name = (shown.name if shown and shown.name.strip() else title).strip()
    role = saying.word(shown.role) if shown and shown.role in ("dialog", "alert", "file chooser") else "window"
    said = f"the {role} {saying.quoted(name)}" if name else f"a {role} with no name"
    if not name and (program or (shown and shown.program)):
        said += f" of the program {saying.quoted((shown.program if shown else '') or program)}"
    if _browser(shown, program):
        said += ", a web browser"
        page = page_name(shown, name)
        if page:
            said += f" showing the page {saying.quoted(page)}"
        elif shown and shown.page is not None:
            said += " showing a page with no name"
    elif shown and shown.page is not None and shown.page_name.strip():
        said += f", showing the document {saying.quoted(shown.page_name)}"
    return said


def page_name(shown: Shown | None, title: str) -> str:
    """The name of the page a browser shows: its document's, else its title's part before the browser's
    name ("Pets — Mozilla Firefox"; Firefox names its document only once the bus has asked about it)."""
    if shown and shown.page_name.strip():
        return shown.page_name.strip()
    for mark in (" — ", " - ", " – "):
        if mark in title:
            return title.rsplit(mark, 1)[0].strip()
    return ""


def intro(what: str, shown: Shown | None, title: str, program: str) -> str:
    """'A screenshot of the window ...' or 'A screenshot of the whole screen, in front the window ...'."""
    if what == "window":
        return f"A screenshot of {window_words(shown, title, program)}."
    if shown is None and not title:
        return "A screenshot of the whole screen."
    return f"A screenshot of the whole screen, in front {window_words(shown, title, program)}."


def pictures_said(pictures: list[tuple[Picture, Any]]) -> str:
    """'It shows a picture: A cat ...', or 'It shows 2 pictures. Picture 1, 'coffee': ... Picture 2: ...'."""
    if not pictures:
        return ""

    def one(p: Picture, d, label: str) -> str:
        words = (d.description or "").strip() or saying.NOTHING
        named = f", {saying.quoted(p.name)}" if p.name.strip() else ""
        return f"{label}{named}: {words}"

    if len(pictures) == 1:
        return "It shows " + one(*pictures[0], "a picture")
    return f"It shows {len(pictures)} pictures. " + " ".join(one(p, d, f"Picture {i}")
                                                            for i, (p, d) in enumerate(pictures, 1))
