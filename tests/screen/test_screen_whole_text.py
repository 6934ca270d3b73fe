"""``capdesk screen`` reads the screen whole: every word of a window, in reading order, the page's words before
the browser's own controls, printed and in --json, with a long text said aloud by its length and first words;
and a window is said as a screenshot of its program, each picture in it described as a picture, never the
whole capture captioned as a scene. On a real X display (Xvfb) with a real Qt window of several labels, and,
for what the accessibility bus says, a real bus with the same window on it, or a stand-in bus saying what
Firefox says of a browser window."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time

import pytest
from screen_harness import PHOTO, START_TIMEOUT_S, _env, _read_line, _stop

from capdesk.screen import atspi, screenshot, shown, wholetext
from capdesk.screen.atspi import Rect

needs_x = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("Xvfb") is None,
                             reason="needs Linux and Xvfb (Debian package xvfb)")

# A departures board of some 700 characters in eight labels; the news is its last word.
BOARD = ["Platform one, the eight fifteen train to the harbour leaves on time today.",
         "Platform two, the nine thirty service to the airport is running late by twenty minutes.",
         "Platform three, the morning train to the old market stops at every station on the way.",
         "Platform four, passengers for the river bridge should change at the central station.",
         "Platform five, the evening express to the northern hills has been moved to platform six.",
         "Platform six, the slow train to the quiet valley will wait for the bus from the park.",
         "Platform eight, the afternoon train to the seaside town leaves from the far end of the hall.",
         "Platform seven, the night train to the castle gardens and the lake is Cancelled"]
TITLE = "Departures board"

# The board's labels, and with "picture" a photo below them in a label named as a person would name it.
BOARD_WINDOW = r"""
import json, sys
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
app = QApplication(sys.argv[:1])
lines, title, photo = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
w = QWidget()
w.setWindowTitle(title)
w.setStyleSheet("background: white; color: black")
lay = QVBoxLayout(w)
for text in lines:
    label = QLabel(text)
    font = label.font()
    font.setPixelSize(17)
    label.setFont(font)
    lay.addWidget(label)
pic = None
if photo:
    pic = QLabel()
    pic.setPixmap(QPixmap(photo))
    pic.setAccessibleName("Photo of the day")
    lay.addWidget(pic, 0, Qt.AlignLeft)  # the label as large as its photo
w.move(10, 10)
w.show()
w.activateWindow()

def report():
    if not w.isActiveWindow():
        w.activateWindow()
        QTimer.singleShot(50, report)
        return
    g = w.geometry()
    at = [0, 0, 0, 0] if pic is None else [*(lambda p: (p.x(), p.y()))(pic.mapToGlobal(pic.rect().topLeft())),
                                          pic.pixmap().width(), pic.pixmap().height()]
    print(json.dumps({"window": [g.x(), g.y(), g.width(), g.height()], "picture": at}), flush=True)

QTimer.singleShot(0, report)
app.exec()
"""


class Board:
    """The board's window on the display of ``env``; with ``photo`` the sample photo under the words."""

    def __init__(self, env: dict[str, str], photo: bool = False) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", BOARD_WINDOW, json.dumps(BOARD), TITLE,
                                      str(PHOTO) if photo else ""], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        geo = json.loads(_read_line(self.proc, self.proc.stdout, START_TIMEOUT_S))
        self.window, self.picture = Rect(*geo["window"]), Rect(*geo["picture"])

    def close(self) -> None:
        _stop(self.proc)


def _letters(text: str) -> str:
    """Only the letters and digits, lower case: the words as read, whatever the reader made of the spaces and
    commas between them ("Platforms even" is "Platform seven")."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


class Heard:
    """``capdesk screen``'s speech, kept (the Speech protocol of capdesk.session.screen_speech)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def stop(self, env: dict[str, str]) -> None:
        pass

    def say(self, text: str, env: dict[str, str]) -> str | None:
        self.said.append(text)
        return None


# -- the words, whole and in order -----------------------------------------------------------------------------

def _line(text: str, x0: float, y0: float, x1: float, y1: float) -> wholetext.Line:
    return text, (x0, y0, x1, y1)


def test_the_page_is_read_before_the_browsers_own_controls():
    lines = [_line("Pets - Mozilla Firefox", 0, 5, 300, 20), _line("file:///pets.html", 40, 40, 400, 60),
             _line("Pets", 10, 100, 80, 130), _line("Our cat sleeps in the sun.", 10, 140, 500, 160),
             _line("Downloads 2", 0, 700, 200, 720)]
    page = Rect(0, 85, 1000, 600)
    assert wholetext.in_reading_order(lines, page) == [
        "Pets", "Our cat sleeps in the sun.", "Pets - Mozilla Firefox", "file:///pets.html", "Downloads 2"]
    assert wholetext.whole_text(lines) == ("Pets - Mozilla Firefox file:///pets.html Pets Our cat sleeps in the "
                                           "sun. Downloads 2", False)


def test_a_text_past_the_bound_says_that_it_goes_on():
    lines = [_line(f"line {i} of the long article", 0, 20 * i, 300, 20 * i + 15) for i in range(100)]
    text, cut = wholetext.whole_text(lines, limit=100)
    assert cut and len(text) < 160 and text.startswith("line 0 of the long article line 1")
    assert text.endswith("… (the text goes on past 100 characters)")
    whole, cut = wholetext.whole_text(lines)  # the real bound, far past a window's words
    assert not cut and whole.endswith("line 99 of the long article") and wholetext.MAX_CHARS >= 20_000


def test_a_long_text_is_said_by_its_length_and_first_words_unless_all_are_asked_for():
    text = " ".join(f"w{i}" for i in range(640))
    printed = f'A screenshot of the window \'Board\'. Text: "{text}"'
    said = wholetext.spoken(printed, text)
    first = " ".join(f"w{i}" for i in range(wholetext.START_WORDS))
    assert said == f'A screenshot of the window \'Board\'. Text, 640 words, starting: "{first} …"'
    assert wholetext.spoken(printed, text, all_words=True) == printed
    short = " ".join(f"w{i}" for i in range(wholetext.LONG_WORDS))
    assert wholetext.spoken(f'Text: "{short}"', short) == f'Text: "{short}"'


@pytest.fixture(scope="module")
def engine():
    """``capdesk screen``'s describer, opened once for the module's runs (as ``capdesk service`` keeps it)."""
    from capdesk.cli.common import open_engine
    from capdesk.cli.main import build_parser

    describer = open_engine(build_parser().parse_args(["screen", "--window"]))
    assert describer is not None
    return lambda ns: describer


def _screen_here(env: dict[str, str], engine, capsys, *args: str) -> tuple[dict, Heard]:
    """``capdesk screen ARGS --json`` run as the command runs it (``capdesk.cli.screen.run``), in the session of
    ``env``: what it printed, and what it said."""
    from capdesk.cli.main import build_parser
    from capdesk.cli.screen import run

    heard = Heard()
    capsys.readouterr()
    assert run(build_parser().parse_args(["screen", *args, "--json"]), env, engine, heard) == 0
    return json.loads(capsys.readouterr().out), heard


@needs_x
@pytest.mark.slow  # 8 s measured on two cores busy with other work, the model and text reader loaded first
def test_every_word_of_a_700_character_window_is_printed_in_order_and_the_speech_summarises(display, engine, capsys):
    env = _env(display)
    board = Board(env)
    try:
        rec, heard = _screen_here(env, engine, capsys, "--window", "--speak")
    finally:
        board.close()
    drawn = " ".join(BOARD)
    assert len(drawn) > 650 and rec["captured"]["name"] == TITLE
    # Every word, in the order drawn: the text in --json and in the description printed.
    assert _letters(rec["text"]) == _letters(drawn), rec["text"]
    assert rec["text"].endswith("Cancelled") and rec["text_cut"] is False and rec["text_words"] >= 110
    assert rec["description"] == f"A screenshot of the window '{TITLE}'. Text: \"{rec['text']}\"", rec["description"]
    # Said aloud: what it is, then the text by its length and first words, never cut silently.
    assert len(heard.said) == 1
    said = heard.said[0]
    assert said.startswith(f"A screenshot of the window '{TITLE}'. Text, {rec['text_words']} words, starting: "
                           '"Platform one'), said
    assert said.endswith(' …"') and len(said.split()) < 60, said


@needs_x
@pytest.mark.slow  # 7 s measured on two cores busy with other work
def test_a_window_with_a_picture_is_a_screenshot_of_that_window_never_a_scene(display, session_bus, engine, capsys):
    env = _env(display, session_bus)
    board = Board(env, photo=True)
    try:
        # The window registers with the accessibility bus on its own time: asked until it names the picture.
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ((s := shown.window_shown(env, board.window, False)) and s.pictures):
            assert time.monotonic() < deadline, "the window never told the accessibility bus of its picture"
            time.sleep(0.1)
        rec, heard = _screen_here(env, engine, capsys, "--window", "--speak")
    finally:
        board.close()
    said = rec["description"]
    assert said.startswith(f"A screenshot of the window '{TITLE}'. It shows a picture, 'Photo of the day': "), said
    pictures = rec["screenshot"]["pictures"]
    assert [p["name"] for p in pictures] == ["Photo of the day"]
    assert pictures[0]["rect"] == board.picture.to_json()
    assert "cat" in pictures[0]["description"].lower(), pictures  # the photo, described as the photo it is
    # The whole capture's own caption is never said: it is withheld, and not in the words printed.
    assert rec["said_as"] == "withheld" and rec["caption"]
    assert rec["caption"].rstrip(".").lower() not in said.lower()
    assert rec["screenshot"]["window"]["name"] == TITLE and rec["screenshot"]["accessible"] is True
    assert _letters(rec["text"]).startswith(_letters(" ".join(BOARD))), rec["text"]
    assert heard.said == [wholetext.spoken(said, rec["text"])]  # said as printed, its long text summarised


# -- what the bus says a browser window shows ------------------------------------------------------------------

FOCUSED, SHOWING, ACTIVE = 1 << atspi.STATE_FOCUSED, 1 << atspi.STATE_SHOWING, 1 << atspi.STATE_ACTIVE


class Browser(atspi.Bus):
    """A Firefox window showing the page "Pets", as Firefox tells the bus: two photos in the page (one named
    by its alt text), a toolbar icon, a photo scrolled half out of the page's view, and a background tab.
    The page and the photo with no alt text have no size the first time they are asked (Firefox sends the
    sizes a moment after the bus first asks)."""

    def __init__(self) -> None:  # no connection: every call is answered from the dict
        self.objects: dict[atspi.Ref, dict] = {}
        self.add("app", None, "application", "Firefox", Rect(0, 0, 0, 0))
        self.add("other", "app", "frame", "Elsewhere — Mozilla Firefox", Rect(600, 500, 300, 200), SHOWING)
        self.add("frame", "app", "frame", "Pets — Mozilla Firefox", Rect(0, 0, 1000, 740), ACTIVE | SHOWING)
        self.add("toolbar", "frame", "tool bar", "Navigation", Rect(0, 40, 1000, 45))
        self.add("icon", "toolbar", "push button", "Back", Rect(5, 45, 30, 30))
        self.add("iconpic", "icon", "image", "", Rect(10, 50, 20, 20))
        self.add("hidden", "frame", "document web", "Background tab", Rect(0, 85, 1000, 655), 0)
        self.add("doc", "frame", "document web", "Pets", Rect(0, 85, 1000, 655), unsized=1)
        self.add("cat", "doc", "image", "", Rect(16, 201, 300, 200), unsized=2)
        self.add("para", "doc", "paragraph", "", Rect(16, 410, 600, 20))
        self.add("coffee", "para", "image", "coffee on a saucer", Rect(321, 201, 300, 200))
        self.add("low", "doc", "image", "rocket", Rect(16, 640, 300, 200))

    def add(self, name: str, parent: str | None, role: str, label: str, rect: Rect, states: int = SHOWING,
            unsized: int = 0) -> None:
        self.objects[(":1.1", name)] = {"role": role, "name": label, "rect": rect, "states": states, "kids": [],
                                        "unsized": unsized}
        if parent is not None:
            self.objects[(":1.1", parent)]["kids"].append((":1.1", name))

    def children(self, ref):
        if ref == (atspi.REGISTRY, atspi.ROOT_PATH):
            return [(":1.1", "app")]
        return list(self.objects[ref]["kids"])

    def states(self, ref):
        return self.objects[ref]["states"]

    def role(self, ref):
        return self.objects[ref]["role"]

    def name(self, ref):
        return self.objects[ref]["name"]

    def description(self, ref):
        return ""

    def extents(self, ref):
        o = self.objects[ref]
        if o["unsized"]:
            o["unsized"] -= 1
            return Rect(0, 0, 0, 0)
        return o["rect"]

    def close(self) -> None:
        pass


def test_a_browser_window_is_named_with_its_page_and_its_pictures_placed():
    bus = Browser()
    s = shown.look(bus, Rect(0, 0, 1000, 740), False, time.monotonic() + 5)
    assert (s.name, s.role, s.program) == ("Pets — Mozilla Firefox", "frame", "Firefox")
    assert (s.page, s.page_name) == (Rect(0, 85, 1000, 655), "Pets")  # the showing tab's page, not the background's
    # The toolbar's icon is no picture to describe; the photo half scrolled away is the part in the page's view.
    assert [(p.name, p.rect) for p in s.pictures] == [("", Rect(16, 201, 300, 200)),
                                                      ("coffee on a saucer", Rect(321, 201, 300, 200)),
                                                      ("rocket", Rect(16, 640, 300, 100))]
    assert screenshot.intro("window", s, "", "firefox-esr") == \
        "A screenshot of the window 'Pets — Mozilla Firefox', a web browser showing the page 'Pets'."
    # The whole screen: the active window is the one said, not the other one showing.
    whole = shown.look(bus, Rect(0, 0, 1024, 768), True, time.monotonic() + 5)
    assert screenshot.intro("full", whole, "", "") == ("A screenshot of the whole screen, in front the window "
                                                       "'Pets — Mozilla Firefox', a web browser showing the page "
                                                       "'Pets'.")
    # A capture that is no window the bus knows is said from X11 alone.
    assert shown.look(bus, Rect(200, 200, 300, 300), False, time.monotonic() + 5) is None
    assert screenshot.intro("window", None, "Pets — Mozilla Firefox", "Firefox-esr") == \
        "A screenshot of the window 'Pets — Mozilla Firefox', a web browser showing the page 'Pets'."
    assert screenshot.intro("window", None, "notes.txt", "Gedit") == "A screenshot of the window 'notes.txt'."
