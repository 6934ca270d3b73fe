"""What a person sees of the attention maps, and hears of the caption's words: the real window (Qt
offscreen) over the real model and the sample pictures."""

from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.model.attention import colormap, heatmap, overlay

pytest.importorskip("PySide6")
from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402

from capdesk.session.core import PictureStatus  # noqa: E402

TIMEOUT = 120_000


def _yellowness(rgb) -> float:
    """How far a colour is towards inferno's bright yellow end and away from its dark purple one."""
    r, g, b = (float(c) for c in rgb[:3])
    return r + g - b


# -- the map itself ---------------------------------------------------------------------------------
def test_colour_scale_runs_dark_to_bright_yellow():
    ends = colormap(np.array([0.0, 0.5, 1.0]))
    assert ends.shape == (3, 3)
    assert ends[0].sum() < 30  # almost black
    assert ends[2][0] > 240 and ends[2][1] > 240 and ends[2][2] < 200  # pale yellow
    lum = ends @ np.array([0.299, 0.587, 0.114])
    assert lum[0] < lum[1] < lum[2]  # brighter all the way: readable without telling hues apart


def test_overlay_is_colour_where_the_model_looked_not_a_darkening():
    grey = Image.new("RGB", (210, 210), (128, 128, 128))
    att = np.full((7, 7), 0.01)
    att[1, 5] = 0.5  # one cell, top right
    out = np.asarray(overlay(grey, att)).astype(int)
    hot = out[45, 165]  # the middle of row 1, column 5
    cold = out[195, 15]  # bottom left
    assert hot[0] > 180 and hot[1] > 150 and hot[2] < hot[0] - 40, hot  # yellow-orange
    assert _yellowness(hot) - _yellowness(cold) > 150, (hot, cold)
    assert cold.sum() < 3 * 128 * 0.75  # the rest is dimmer than the picture, still not black
    assert cold.sum() > 3 * 128 * 0.3
    h = heatmap(att, (210, 210))
    assert h.max() > 0.8 and h[195, 15] < 0.1  # smooth, stretched 0..1 (blurring lowers a lone peak)


# -- the window -------------------------------------------------------------------------------------
@pytest.fixture
def window(open_window, confidence_rule_models, without_detector):
    # As in test_gui: the older confidence rule at threshold 0 says the astronaut's caption as fact,
    # so its words are offered one by one.
    return open_window(models=confidence_rule_models, size=(1200, 760), confidence_threshold=0.0)


@pytest.fixture
def photos(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    for n in ("astronaut.png", "chelsea.png"):
        shutil.copy(SAMPLES / n, d / n)
    return d


def _described(window):
    return lambda: window.session.current is not None and window.session.current.described is not None \
        and window.session._busy == 0


def _captioned(qtbot, window, path):
    window.open_path(path)
    qtbot.waitUntil(_described(window), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.pane.words.count() > 0, timeout=TIMEOUT)
    qtbot.wait(50)  # the Words list fits its height once Qt has laid out its entries
    return window.pane


def test_every_word_label_is_shown_in_full_in_the_strip(qtbot, window, photos):
    pane = _captioned(qtbot, window, photos / "astronaut.png")
    strip, area = pane.strip, pane.strip_area
    words = [pane.words.item(i).text() for i in range(pane.words.count())]
    assert len(strip.labels) == len(words) + 1  # the picture, then one column a word
    view = area.viewport()
    assert view.height() >= strip.height()  # no part of the strip is below its visible area
    fm = strip.fontMetrics()
    shot = area.grab().toImage()
    ink = QColor(strip.palette().color(strip.foregroundRole()))
    for word, label, col in zip(words, strip.labels[1:], strip.columns[1:]):
        text = fm.boundingRect(label, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, word)
        assert label.contains(text), (word, label, text)  # the word fits its label, no eliding
        assert col.contains(label)
        top = strip.mapTo(view, label.topLeft())
        bottom = strip.mapTo(view, label.bottomRight())
        assert top.y() >= 0 and bottom.y() < view.height(), (word, top, bottom, view.height())
        # And the letters are really there: the label's box holds pixels of the text colour.
        at = view.mapTo(area, top)
        box = QRect(at, label.size()).intersected(QRect(0, 0, shot.width(), shot.height()))
        if box.width() > 0:  # columns scrolled out of view sideways are reached by scrolling
            dark = sum(1 for x in range(box.left(), box.right() + 1) for y in range(box.top(), box.bottom() + 1)
                       if _close(shot.pixelColor(x, y), ink))
            assert dark > 3, word
    # The Words list shows all its rows too.
    last = pane.words.visualItemRect(pane.words.item(pane.words.count() - 1))
    assert last.bottom() < pane.words.viewport().height()


def _close(a: QColor, b: QColor, tol: int = 90) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < tol


def test_selected_word_shows_its_map_in_colour_large_and_highlighted(qtbot, window, photos):
    pane = _captioned(qtbot, window, photos / "astronaut.png")
    plain = pane.view.pixmap().toImage()
    cap = window.session.current.described.caption
    word = 1
    pane.words.setCurrentRow(word)
    shown = pane.view.pixmap().toImage()
    assert shown.size() == plain.size()
    at = cap.words.index(pane.words.item(word).text())  # its place in the caption, whose maps these are
    h = heatmap(cap.attention_map(at), (shown.width(), shown.height()))
    h = h[: int(shown.height() * 0.75)]  # the note along the foot is no part of the map
    hot = np.argwhere(h >= np.quantile(h, 0.95))
    cold = np.argwhere(h <= np.quantile(h, 0.05))
    assert len(hot) and len(cold)
    picks = np.random.default_rng(0).choice

    def mean_shift(cells) -> float:
        """How much yellower the shown picture is than the plain one, over some of ``cells``."""
        sel = cells[picks(len(cells), size=min(200, len(cells)), replace=False)]
        return float(np.mean([_yellowness(_rgb(shown, x, y)) - _yellowness(_rgb(plain, x, y)) for y, x in sel]))

    assert mean_shift(hot) - mean_shift(cold) > 120  # bright yellow where it looked, dark where it did not
    # The strip highlights the same word.
    assert pane.strip.selected == word
    col = pane.strip.columns[word + 1]
    hl = pane.strip.palette().color(pane.strip.palette().ColorRole.Highlight)
    assert _close(pane.strip.pixmap().toImage().pixelColor(col.left() + 1, col.bottom() - 1), hl, 30)
    # A click on another word's map in the strip selects that word.
    other = pane.strip.columns[1]
    from PySide6.QtTest import QTest

    QTest.mouseClick(pane.strip, Qt.MouseButton.LeftButton, pos=QPoint(other.center().x(), other.center().y()))
    assert pane.words.currentRow() == 0 and pane.view.property("attention_word") == 0


def _rgb(img: QImage, x: int, y: int) -> tuple[int, int, int]:
    c = img.pixelColor(int(x), int(y))
    return c.red(), c.green(), c.blue()


@pytest.mark.slow  # 2 s measured on two busy cores
def test_picture_stays_in_view_while_it_is_captioned(qtbot, window, photos):
    s = window.session
    gate = threading.Event()
    work = s._describe_work
    s._describe_work = lambda p: (gate.wait(60), work(p))[1]  # captioning lasts until the test says
    try:
        window.open_path(photos / "astronaut.png")
        pane = window.pane
        assert s.current.status is PictureStatus.DESCRIBING
        qtbot.waitUntil(lambda: not pane.view.pixmap().isNull(), timeout=TIMEOUT)  # not a blank "Captioning…"
        assert s.current.status is PictureStatus.DESCRIBING and s.current.described is None
        assert pane.view.accessibleDescription() == "Captioning astronaut.png…"
        waiting = pane.view.pixmap().toImage()
        gate.set()
        qtbot.waitUntil(_described(window), timeout=TIMEOUT)
        assert not pane.view.pixmap().isNull()
        # Captioned again: the picture never leaves the view, and says it is being captioned.
        gate.clear()
        window.caption_current()
        assert s.current.status is PictureStatus.DESCRIBING
        assert not pane.view.pixmap().isNull() and pane.view.accessibleDescription().startswith("Captioning ")
        assert pane.view.pixmap().toImage().size() == waiting.size()
        gate.set()
        qtbot.waitUntil(_described(window), timeout=TIMEOUT)
        assert not pane.view.pixmap().isNull()
    finally:
        gate.set()


def test_tab_selects_the_word_and_space_says_it_in_full(qtbot, window, photos):
    window.session.screen_reader = lambda: True
    pane = _captioned(qtbot, window, photos / "astronaut.png")
    words = pane.words
    n = words.count()
    heard: list[str] = []
    pane.said.connect(heard.append)
    window.activateWindow()
    window.list.setFocus()
    qtbot.waitUntil(window.list.hasFocus, timeout=5000)
    qtbot.keyClick(window.list, Qt.Key.Key_Tab)  # from the Images list into the Words list
    qtbot.waitUntil(words.hasFocus, timeout=5000)
    # Tab in selects the current word, which the screen reader then reads with where the model looked
    # (an announcement on top of that was heard as the same word twice under Orca)
    qtbot.waitUntil(lambda: words.item(0).isSelected(), timeout=5000)
    assert str(words.item(0).data(Qt.ItemDataRole.AccessibleDescriptionRole)).startswith("looked ")
    assert pane.view.property("attention_word") == 0  # and its map is shown
    assert heard == []
    qtbot.keyClick(words, Qt.Key.Key_Right)
    qtbot.keyClick(words, Qt.Key.Key_Space)
    w1 = words.item(1).text()
    assert heard[-1].startswith(f"Word 2 of {n}, “{w1}”: looked ")
    assert window.announcer.said[-1] == heard[-1]
    assert words.currentRow() == 1  # Space says the word; it moves nothing


def test_space_on_a_withheld_caption_says_why_there_are_no_words(qtbot, window, photos):
    window.session.screen_reader = lambda: True
    window.open_path(photos / "chelsea.png")
    qtbot.waitUntil(_described(window), timeout=TIMEOUT)
    pane = window.pane
    assert pane.words.count() == 0
    heard: list[str] = []
    pane.said.connect(heard.append)
    qtbot.keyClick(pane.words, Qt.Key.Key_Space)
    assert heard == ["No words: the caption was withheld"]
