"""What ``capdesk screen --focus`` takes in a web page, decided from what the accessibility bus says, on a
stand-in bus that says what Firefox says under Orca's browse mode (seen with the real Orca 43.1 and Firefox
ESR): a link Orca moves to is focused; a picture that is no link gets neither the focus nor the caret, and
nothing is focused then, but Orca scrolls it to the top of the page's view; the document's caret sits in
the text Orca moved through, embedded objects standing in it for their children."""

from __future__ import annotations

import time

import pytest

from capdesk.screen import atspi, saying
from capdesk.screen.atspi import Rect

FOCUSED, SHOWING, ACTIVE = 1 << atspi.STATE_FOCUSED, 1 << atspi.STATE_SHOWING, 1 << atspi.STATE_ACTIVE
VIEW = Rect(300, 192, 1000, 715)  # the page's view in the window


class Page(atspi.Bus):
    """A Firefox window showing a page, as its objects: (bus name, path) refs, each with a role, a name, a
    rectangle, states, children, and for text objects a caret offset and the child at it."""

    def __init__(self) -> None:  # no connection: every call below is answered from the dicts
        self.objects: dict[atspi.Ref, dict] = {}
        self.scrolls: list[atspi.Ref] = []
        self.add("app", None, "application", "Firefox", Rect(0, 0, 0, 0))
        self.add("frame", "app", "frame", "Trip photos — Mozilla Firefox", Rect(300, 107, 1000, 800),
                 ACTIVE | SHOWING)
        self.add("doc", "frame", "document web", "Trip photos", VIEW)

    def add(self, name: str, parent: str | None, role: str, label: str, rect: Rect, states: int = SHOWING,
            caret: int = -1, at: str | None = None, description: str = "", on_scroll: Rect | None = None) -> None:
        self.objects[(":1.1", name)] = {"parent": None if parent is None else (":1.1", parent), "role": role,
                                        "name": label, "rect": rect, "states": states, "kids": [],
                                        "caret": caret, "at": None if at is None else (":1.1", at),
                                        "description": description, "on_scroll": on_scroll}
        if parent is not None:
            self.objects[(":1.1", parent)]["kids"].append((":1.1", name))

    def ref(self, name: str) -> atspi.Ref:
        return (":1.1", name)

    def children(self, ref):
        if ref == (atspi.REGISTRY, atspi.ROOT_PATH):
            return [self.ref("app")]
        return list(self.objects[ref]["kids"])

    def states(self, ref):
        return self.objects[ref]["states"]

    def role(self, ref):
        return self.objects[ref]["role"]

    def name(self, ref):
        return self.objects[ref]["name"]

    def description(self, ref):
        return self.objects[ref]["description"]

    def parent(self, ref):
        return self.objects[ref]["parent"]

    def extents(self, ref):
        return self.objects[ref]["rect"]

    def caret_child(self, ref):
        o = self.objects[ref]
        return (o["at"], o["caret"]) if o["role"] not in atspi.PICTURES else (None, -1)

    def scroll_to(self, ref, how=atspi.SCROLL_ANYWHERE):
        self.scrolls.append(ref)
        to = self.objects[ref]["on_scroll"]
        if to is None:
            return False
        self.objects[ref]["rect"] = to
        return True

    def close(self) -> None:
        pass


def _photos(page: Page, first_top: int, focused: str | None = None) -> None:
    """The page of the journey: a linked astronaut, an unnamed cat, a coffee, a linked rocket, 'More photos'."""
    y = first_top
    for name, linked, alt, h in (("astronaut", True, "portrait of an astronaut", 400), ("cat", False, "", 300),
                                 ("coffee", False, "coffee on a saucer", 300), ("rocket", True, "rocket launch", 300)):
        if name == "cat":
            page.add("p-text", "doc", "paragraph", "", Rect(316, y - 35, 968, 19))  # "The cat at home."
        page.add(f"p-{name}", "doc", "paragraph", "", Rect(316, y, 968, h + 4))
        parent = f"p-{name}"
        if linked:
            page.add(f"a-{name}", parent, "link", alt, Rect(316, y + h - 15, 400, 19),
                     SHOWING | (FOCUSED if focused == f"a-{name}" else 0))
            parent = f"a-{name}"
        page.add(name, parent, "image", alt, Rect(316, y, 450, h))
        y += h + 40
    page.add("p-more", "doc", "paragraph", "", Rect(316, y, 968, 19))
    page.add("more", "p-more", "link", "More photos", Rect(316, y, 99, 19),
             SHOWING | (FOCUSED if focused == "more" else 0))


def _target(page: Page) -> atspi.Target:
    return atspi.reader_target(page, time.monotonic() + 5)


def test_a_picture_orca_moved_to_with_g_is_the_one_at_the_top_of_the_view():
    # G to the coffee: no focus anywhere, the caret left in the text above, the coffee scrolled to the top.
    page = Page()
    _photos(page, first_top=192 - 400 - 40 - 300 - 40)
    page.objects[page.ref("doc")].update(caret=3, at=page.ref("p-text"))
    page.objects[page.ref("p-text")].update(caret=0)
    t = _target(page)
    assert (t.role, t.name, t.found_by, t.partial) == ("image", "coffee on a saucer", "view top", False)
    assert t.rect == Rect(316, 192, 450, 300)
    assert saying.said(t, "A cup of coffee.") == "The picture 'coffee on a saucer': A cup of coffee."


def test_the_picture_at_the_top_wins_over_a_caret_left_in_a_heading():
    # ctrl+Home put the caret in the heading, Tab and G moved on to the cat, which took the top of the view.
    page = Page()
    page.add("h1", "doc", "heading", "Trip photos", Rect(316, 100, 968, 37))
    _photos(page, first_top=192 - 400 - 40)
    page.objects[page.ref("doc")].update(caret=0, at=page.ref("h1"))
    page.objects[page.ref("h1")].update(caret=0)
    t = _target(page)
    assert (t.name, t.found_by, t.worded) == ("", "view top", False)


def test_an_unnamed_picture_says_so():
    page = Page()
    _photos(page, first_top=192 - 400 - 40)
    t = _target(page)
    assert (t.name, t.found_by) == ("", "view top")
    assert saying.intro(t) == "A picture with no name"


def test_the_focused_link_wins_and_its_photo_is_scrolled_into_view_whole():
    # Tab to the rocket's link, its photo half under the toolbar: scrolled back into view and taken whole.
    page = Page()
    _photos(page, first_top=192 - 400 - 40 - 300 - 40 - 300 - 40 - 150, focused="a-rocket")
    page.objects[page.ref("rocket")]["on_scroll"] = Rect(316, 192, 450, 300)
    t = _target(page)
    assert (t.role, t.name, t.holder.role, t.found_by) == ("image", "rocket launch", "link", "focus")
    assert (t.scrolled, t.partial, t.rect) == (True, False, Rect(316, 192, 450, 300))
    assert page.scrolls == [page.ref("rocket")]
    assert saying.intro(t) == "The picture of the link 'rocket launch'"


def test_a_picture_that_cannot_be_scrolled_whole_is_said_to_be_partial():
    page = Page()
    _photos(page, first_top=192 - 150, focused="a-astronaut")  # nothing scrolls: the program said no
    t = _target(page)
    assert (t.partial, t.scrolled, t.rect) == (True, False, Rect(316, 192, 450, 250))
    assert saying.said(t, "An astronaut.") == ("The picture of the link 'portrait of an astronaut' (only part of "
                                               "the picture is on screen): An astronaut.")


def test_the_caret_at_a_picture_in_a_line_is_taken():
    page = Page()
    _photos(page, first_top=250)
    page.objects[page.ref("doc")].update(states=SHOWING | FOCUSED, caret=5, at=page.ref("p-cat"))
    page.objects[page.ref("p-cat")].update(caret=0, at=page.ref("cat"))
    t = _target(page)
    assert (t.name, t.found_by, t.role) == ("", "caret", "image")


def test_a_focused_text_link_is_said_by_its_name():
    page = Page()
    _photos(page, first_top=192 - 1400, focused="more")
    t = _target(page)
    assert (t.worded, t.role, t.name) == (True, "link", "More photos")
    assert saying.said(t, "") == "The link 'More photos', which holds no picture."


def test_outside_a_page_the_focus_is_taken_as_before():
    # A Qt window's focused button showing a photo as its icon: no picture inside it on the bus, so the
    # button is taken, and said by its name before its description.
    page = Page()
    page.objects.clear()
    page.add("app", None, "application", "window.py", Rect(0, 0, 0, 0))
    page.add("win", "app", "frame", "Screen test window", Rect(40, 30, 480, 360), ACTIVE | SHOWING)
    page.add("button", "win", "push button", "Photo of the day", Rect(50, 80, 460, 310), SHOWING | FOCUSED)
    t = _target(page)
    assert (t.role, t.found_by, t.worded, t.rect) == ("push button", "focus", False, Rect(50, 80, 460, 310))
    assert saying.said(t, "A cat.") == "The button 'Photo of the day': A cat."


def test_nothing_focused_and_no_page_is_said():
    page = Page()
    page.objects[page.ref("frame")]["kids"].clear()
    with pytest.raises(atspi.AtspiError, match="no program told the accessibility bus"):
        _target(page)


def test_with_only_the_page_focused_g_onto_a_picture_takes_the_picture_at_the_top_of_the_view():
    # Nothing but the document has had the focus: the document is the focused object, the caret stayed in
    # the text Orca left, and G scrolled the coffee (no link) to the top of the view.
    page = Page()
    _photos(page, first_top=192 - 400 - 40 - 300 - 40)
    page.objects[page.ref("doc")].update(states=SHOWING | FOCUSED, caret=3, at=page.ref("p-text"))
    page.objects[page.ref("p-text")].update(caret=0)
    t = _target(page)
    assert (t.role, t.name, t.found_by) == ("image", "coffee on a saucer", "view top")


def test_with_only_the_page_focused_and_no_picture_there_it_says_so_never_the_page():
    page = Page()
    page.add("h1", "doc", "heading", "Trip photos", Rect(316, 192, 968, 37))
    _photos(page, first_top=192 + 60)  # the first picture lies below the top of the view
    page.objects[page.ref("doc")].update(states=SHOWING | FOCUSED, caret=0, at=page.ref("h1"))
    page.objects[page.ref("h1")].update(caret=0)
    with pytest.raises(atspi.NoPicture, match="No picture at the reading position"):
        _target(page)
