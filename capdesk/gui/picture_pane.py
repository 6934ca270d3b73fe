"""The middle of the window: the picture, the caption's words and where the model looked for each,
the caption details and the alt text, with the buttons that act on them. It draws one
``capdesk.session.core.Picture``; it decides nothing."""

from __future__ import annotations

import re

from PIL import Image
from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidgetItem,
    QPlainTextEdit,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from capdesk.imageio import ImageError, load_image
from capdesk.model.attention import legend, overlay
from capdesk.session import messages
from capdesk.session.core import PREVIEW_SIZE, Picture, PictureStatus
from capdesk.status import SaidAs

from .qtutil import QtRunner, make_plain, pil_to_qpixmap
from .widgets import AttentionStrip, StatusLabel, WordList, button, named

WORDS_HELP = "Select a word to see where the model looked for it"
STRIP_HINT = "Each word of the caption will show here with where the model looked for it"
NONE_KEPT = "No words: the alt text keeps none of the caption's words"
_WORD = re.compile(r"[\w'-]+")


def _said(word: str) -> str:
    return word.lower().strip("'-")


def kept_words(words: list[str], alt: str) -> list[int]:
    """Which of the caption's ``words`` the alt text ``alt`` holds, by their place in the caption.

    Where the evidence mended the caption ("a group of people standing next to each other" said as
    "Probably a person standing."), a word the alt text no longer says was still offered, and Ctrl+.
    read it out as if the description said it."""
    said = {_said(w) for w in _WORD.findall(alt)}
    return [i for i, w in enumerate(words) if _said(w) in said]


def details(p: Picture) -> str:
    """Caption details in words: model, confidence, domain, tags, the model's words, why to review."""
    d = p.described
    if d is None:
        return p.error or (p.status.value if p.person_text is not None else "")
    subject_only = bool(getattr(d, "decision", None) and d.decision.fact)
    conf = sureness(d.confidence, getattr(d, "said_as", None), subject_only) if d.confidence is not None else ""
    dom = "" if d.in_domain is None else ("a kind of picture the model was taught" if d.in_domain
                                          else "not the kind of picture the model was taught")
    tag_text = ", ".join(f"{n} {pr:.0%}" for n, pr in d.tags)
    cap = ""
    if d.caption is not None:
        cap = f"the model's guess, withheld: {d.caption.text}" if p.withheld else f"caption: {d.caption.text}"
        said = d.said_caption
        if not p.withheld and said and _plain(said) != _plain(d.caption.text):
            # Mended by what was seen: the words below (and their maps) are the model's own, not the alt text's.
            cap = f"the model's own words: {d.caption.text} (said as: {said})"
    review = f"needs review: {p.reason}" if p.reason else ""
    parts = (f"model {d.model}", conf, dom, f"tags: {tag_text}" if tag_text else "", cap, review)
    # Semicolons, not middle dots: flat review reads a dot as a word.
    return "; ".join(x for x in parts if x)


def sureness(confidence: float, said_as: object = None, subject_only: bool = False) -> str:
    """The model's confidence in words a listener can weigh ("confidence 0.35" was heard as jargon), in
    agreement with how the alt text says it: a description said as fact was confirmed by what was seen in
    the picture, so "the model is unsure" beside it was heard as a contradiction. ``subject_only``: of the
    caption only its subject and how many are said as fact, the rest as a guess."""
    score = f"{round(confidence * 100)} percent"
    if said_as == SaidAs.FACT and subject_only:
        return (f"said as fact: the object detector confirms who or what is there and how many; the rest is a "
                f"guess (the caption model's own score {score})")
    if said_as == SaidAs.FACT:
        return f"said as fact: what was seen in the picture confirms it (the caption model's own score {score})"
    word = "sure" if confidence >= 0.8 else ("fairly sure" if confidence >= 0.5 else "unsure")
    if said_as == SaidAs.PROBABLY:
        return f"said as a guess: the model is {word} ({score})"
    return f"the model is {word} ({score})"


def _plain(text: str) -> str:
    return " ".join(text.lower().removeprefix("probably").strip(" .").split())


def fit(img: Image.Image, width: int, height: int) -> Image.Image:
    """``img`` scaled to fit inside width x height, its shape kept."""
    scale = min(width / img.width, height / img.height)
    return img.convert("RGB").resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                                     Image.BICUBIC)


def with_note(pm: QPixmap, text: str, scale: QPixmap | None = None) -> QPixmap:
    """``pm`` with ``text`` on a dark band along its foot, after ``scale`` (a colour scale, "less" to
    "more"); the text wraps, and goes under the scale when both do not fit on one line."""
    out = QPixmap(pm)
    p = QPainter(out)
    fm = p.fontMetrics()
    pad, line = 8, fm.height()
    width = max(1, out.width() - 2 * pad)
    legend_w = 0 if scale is None else fm.horizontalAdvance("less more") + scale.width() + 12 + 2 * pad
    beside = legend_w + fm.horizontalAdvance(text) <= width
    flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
    text_w = width - legend_w if beside else width
    text_h = fm.boundingRect(QRect(0, 0, text_w, 10 * line), flags, text).height()
    legend_h = 0 if scale is None or beside else line + 4
    band = QRect(0, out.height() - (legend_h + max(line, text_h) + 2 * pad // 2 + 4), out.width(), 0)
    band.setBottom(out.height() - 1)
    p.fillRect(band, QColor(0, 0, 0, 180))
    p.setPen(QColor("white"))
    x, y = pad, band.top() + 6
    if scale is not None:
        for word in ("less", None, "more"):
            if word is None:
                p.drawPixmap(x, y + (line - scale.height()) // 2, scale)
                x += scale.width() + 6
            else:
                p.drawText(QRect(x, y, fm.horizontalAdvance(word) + 2, line), Qt.AlignmentFlag.AlignVCenter, word)
                x += fm.horizontalAdvance(word) + 6
        x, y = (x + pad, y) if beside else (pad, y + legend_h)
    p.drawText(QRect(x, y, text_w, text_h), flags, text)
    p.end()
    return out


class PicturePane(QWidget):
    # Text for the screen reader: a word asked for in full from the Words list (Space, or Tab into it).
    said = Signal(str)

    def __init__(self, actions: dict) -> None:
        super().__init__()
        self.picture: Picture | None = None
        self._shown: list[int] = []  # the caption words in the Words list, by row: their place in the caption
        self._waiting = False  # the picture is being captioned: shown as it is, with a note
        # A picture being captioned for the first time has no preview in the session yet; the pane
        # loads one to show meanwhile (the picture, the image).
        self._loaded: tuple[Picture, Image.Image | None] | None = None
        self._runner = QtRunner()
        mv = QVBoxLayout(self)
        self.view = named(make_plain(QLabel("Open a folder or an image (Ctrl+O)")), "Picture",
                          "The selected picture; with a word selected, where the model looked")
        self.view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view.setMinimumSize(320, 200)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        mv.addWidget(self.view, 3)
        wl = QLabel("Wor&ds (select one to see where the model looked)")
        self.words = named(WordList(), "Caption words", WORDS_HELP)
        wl.setBuddy(self.words)
        self.words.currentRowChanged.connect(self._on_word)
        self.words.asked.connect(self._say_word)
        mv.addWidget(wl)
        mv.addWidget(self.words)
        # The strip repeats, as pictures, what the Words list gives by keyboard: no Tab stop of its own,
        # and its words and places are its text alternative.
        self.strip = AttentionStrip("Attention strip")
        self.strip_area = self.strip.area
        self.strip.picked.connect(self.words.setCurrentRow)
        mv.addWidget(self.strip_area)
        self.info = StatusLabel("Caption details")
        # Three lines whatever the text: the picture above keeps its size when the details change (a
        # longer text must not shrink the view between one drawing of the picture and the next).
        self.info.setFixedHeight(self.info.fontMetrics().lineSpacing() * 3 + 2)
        self.info.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        mv.addWidget(self.info)
        al = QLabel("&Alt text (edit and save with Ctrl+S)")
        self.alt = named(QPlainTextEdit(), "Alt text",
                         "The description of the picture; edit it and save to write the sidecars")
        self.alt.setTabChangesFocus(True)
        self.alt.setMaximumHeight(96)
        al.setBuddy(self.alt)
        # The words offered are those of the alt text shown, the person's edits included.
        self.alt.textChanged.connect(self._alt_changed)
        mv.addWidget(al)
        mv.addWidget(self.alt)
        row = QHBoxLayout()
        self.btn_caption = button("Caption a&gain (F5)", "Caption the selected picture again", actions["caption"])
        self.btn_speak = button("S&peak (F6)", "Speak the alt text", actions["speak"])
        self.btn_save = button("&Save alt text (Ctrl+S)", "Write the alt text to the sidecars", actions["save"])
        self.btn_copy = button("C&opy alt text (Ctrl+Shift+C)", "Copy the alt text", actions["copy"])
        self.buttons = (self.btn_caption, self.btn_speak, self.btn_save, self.btn_copy)
        for b in self.buttons:
            row.addWidget(b)
        mv.addLayout(row)
        QWidget.setTabOrder(self.words, self.alt)
        for a, b in zip((self.alt, *self.buttons), self.buttons):
            QWidget.setTabOrder(a, b)

    # -- drawing -----------------------------------------------------------------------------
    def show_problem(self, p: Picture, text: str) -> None:
        self.picture, self._waiting = p, False
        self.view.setText(text)
        self.view.setAccessibleDescription(text)
        self.alt.setPlainText("")
        self._clear_words("")
        self.info.setText(p.error)

    def show_waiting(self, p: Picture) -> None:
        """The picture stays in view while it is captioned, with a note saying so."""
        self.picture, self._waiting = p, True
        self.alt.setPlainText("")
        self._clear_words("")
        self.info.setText("")
        if self._image(p) is None and p.path is not None and (self._loaded is None or self._loaded[0] is not p):
            self._loaded = (p, None)
            self._runner.run(self._load, p, on_done=self._on_loaded)
        self.draw(None)

    @staticmethod
    def _load(p: Picture) -> tuple[Picture, Image.Image | None]:
        try:
            return p, load_image(p.path, draft_size=PREVIEW_SIZE)
        except ImageError:
            return p, None  # said when its captioning fails

    def _on_loaded(self, result: tuple[Picture, Image.Image | None]) -> None:
        p, img = result
        if self._loaded is not None and self._loaded[0] is p:
            self._loaded = result
            if self.picture is p:
                self.draw(None)

    def _image(self, p: Picture) -> Image.Image | None:
        if p.preview is not None or p.image is not None:
            return p.preview if p.preview is not None else p.image
        return self._loaded[1] if self._loaded is not None and self._loaded[0] is p else None

    def show_picture(self, p: Picture, keep_text: bool = False) -> None:
        """Draw a described picture; ``keep_text`` leaves the alt text box as it is. The box shows the
        person's unsaved draft for this picture when there is one, else its alt text."""
        self.picture, self._waiting = p, False
        d = p.described
        if not keep_text:
            self.alt.blockSignals(True)  # the words are filled below, from this text
            self.alt.setPlainText(p.draft or p.alt_text)
            self.alt.blockSignals(False)
        self.info.setText(details(p))
        cap = d.caption if d is not None else None
        if cap is None or not cap.words or p.withheld:
            # A withheld caption is no description of the picture: its words are not offered one by one.
            self._clear_words("No words: the caption was withheld" if cap is not None else "")
        else:
            self._fill_words(p)
        self.draw(None)

    def _alt_changed(self) -> None:
        p = self.picture
        cap = p.described.caption if p is not None and p.described is not None else None
        if self._waiting or cap is None or not cap.words or p.withheld:
            return
        if kept_words(cap.words, self.alt.toPlainText()) != self._shown:
            self._fill_words(p)
            self.draw(None)

    def _clear_words(self, why: str) -> None:
        self._shown = []
        self.words.blockSignals(True)
        self.words.clear()
        self.words.blockSignals(False)
        self.words.setAccessibleDescription(why or WORDS_HELP)
        self.strip.clear_words(why or STRIP_HINT)
        self.strip.setAccessibleDescription("")

    def _fill_words(self, p: Picture) -> None:
        cap = p.described.caption
        shown = kept_words(cap.words, self.alt.toPlainText())
        if not shown:
            self._clear_words(NONE_KEPT)
            return
        self._shown = shown
        words = [cap.words[i] for i in shown]
        places = [messages.where(cap.attention_map(i)) for i in shown]
        self.words.blockSignals(True)
        self.words.clear()
        for w, place in zip(words, places):
            it = QListWidgetItem(w)
            it.setData(Qt.ItemDataRole.AccessibleDescriptionRole, f"looked {place}")
            self.words.addItem(it)
        self.words.setCurrentRow(-1)
        self.words.blockSignals(False)
        self.words.setAccessibleDescription(WORDS_HELP)
        self.strip.setAccessibleDescription("; ".join(f"{w}: {pl}" for w, pl in zip(words, places)))
        img = self._image(p)
        if img is None:
            self.strip.clear_words(STRIP_HINT)
            return
        t = self.strip.tile
        thumb = fit(img, round(t * 1.6), t)
        self.strip.show_words(pil_to_qpixmap(thumb),
                              [pil_to_qpixmap(overlay(thumb, cap.attention_map(i))) for i in shown], words)

    def draw(self, word: int | None) -> None:
        """The picture as large as the view allows; with ``word`` (a row of the Words list), where the model
        looked for it, in colour."""
        p = self.picture
        if p is None or (p.described is None and p.person_text is None and not self._waiting):
            return
        img = self._image(p)
        if img is None:
            text = messages.captioning(p.name) if self._waiting else "(no preview)"
            self.view.setText(text)
            self.view.setAccessibleDescription(text)
            return
        img = fit(img, max(1, self.view.width()), max(1, self.view.height()))
        cap = p.described.caption if p.described is not None else None
        note, scale = "", None
        if self._waiting or p.status is PictureStatus.DESCRIBING:
            note = messages.captioning(p.name)
            self.view.setAccessibleDescription(note)
        elif word is not None and cap is not None and 0 <= word < len(self._shown) and not p.withheld:
            i = self._shown[word]
            img = overlay(img, cap.attention_map(i))
            note = messages.attention(cap.words[i], messages.where(cap.attention_map(i)))
            self.view.setAccessibleDescription(note)
            scale = pil_to_qpixmap(legend(64, self.fontMetrics().height()))
        else:
            self.view.setAccessibleDescription(p.alt_text or "The selected picture")
        pm = pil_to_qpixmap(img)
        self.view.setPixmap(with_note(pm, note, scale) if note else pm)
        self.view.setProperty("attention_word", -1 if word is None else word)
        self.strip.select(word)

    def _on_word(self, row: int) -> None:
        self.draw(row if row >= 0 else None)

    def word_said(self, row: int) -> str:
        """Word ``row`` in full, as Ctrl+. says it: "Word 2 of 9, “cat”: looked centre"."""
        n = self.words.count()
        if not n or not 0 <= row < n:
            why = self.words.accessibleDescription()
            return why if why != WORDS_HELP else messages.NO_WORDS
        item = self.words.item(row)
        place = str(item.data(Qt.ItemDataRole.AccessibleDescriptionRole)).removeprefix("looked ")
        return messages.attention_step(row, n, item.text(), place)

    def _say_word(self, row: int) -> None:
        self.said.emit(self.word_said(row))

    def step_word(self, delta: int) -> str:
        """Show the next (or previous) word's attention map; what is now shown, in words."""
        n = self.words.count()
        if not n:
            return self.word_said(-1)
        row = self.words.currentRow()
        row = (row + delta) % n if row >= 0 else (0 if delta > 0 else n - 1)
        self.words.setCurrentRow(row)
        return self.word_said(row)

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(ev)
        row = self.words.currentRow()
        self.draw(row if row >= 0 else None)
