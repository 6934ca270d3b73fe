"""The middle of the window: the picture, the caption's words and where the model looked for each,
the caption details and the alt text, with the buttons that act on them. It draws one
``capdesk.session.core.Picture``; it decides nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from capdesk.model.attention import overlay, strip
from capdesk.session import messages
from capdesk.session.core import Picture

from .qtutil import pil_to_qpixmap
from .widgets import StatusLabel, button, named

WORDS_HELP = "Select a word to see where the model looked for it"


def details(p: Picture) -> str:
    """Caption details in words: model, confidence, domain, tags, the model's words, why to review."""
    d = p.described
    if d is None:
        return p.error
    conf = f"confidence {d.confidence:.2f}" if d.confidence is not None else ""
    dom = "" if d.in_domain is None else ("in the model's domain" if d.in_domain else "outside the model's domain")
    tag_text = ", ".join(f"{n} {pr:.0%}" for n, pr in d.tags)
    cap = ""
    if d.caption is not None:
        cap = f"the model's guess, withheld: {d.caption.text}" if p.withheld else f"caption: {d.caption.text}"
    review = f"needs review: {p.reason}" if p.reason else ""
    parts = (f"model {d.model}", conf, dom, f"tags: {tag_text}" if tag_text else "", cap, review)
    return " · ".join(x for x in parts if x)


class PicturePane(QWidget):
    def __init__(self, actions: dict) -> None:
        super().__init__()
        self.picture: Picture | None = None
        mv = QVBoxLayout(self)
        self.view = named(QLabel("Open a folder or an image (Ctrl+O)"), "Picture",
                          "The selected picture; with a word selected, where the model looked")
        self.view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view.setMinimumSize(320, 240)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        mv.addWidget(self.view, 3)
        wl = QLabel("Wor&ds (select one to see where the model looked)")
        self.words = named(QListWidget(), "Caption words", WORDS_HELP)
        self.words.setFlow(QListWidget.Flow.LeftToRight)
        self.words.setWrapping(True)
        self.words.setMaximumHeight(70)
        wl.setBuddy(self.words)
        self.words.currentRowChanged.connect(self._on_word)
        mv.addWidget(wl)
        mv.addWidget(self.words)
        # The strip repeats, as pictures, what the Words list gives by keyboard: no Tab stop of its own,
        # and its words and places are its text alternative.
        self.strip = named(QLabel(), "Attention strip")
        self.strip_area = QScrollArea()
        self.strip_area.setWidget(self.strip)
        self.strip_area.setWidgetResizable(True)
        self.strip_area.setMaximumHeight(150)
        self.strip_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        named(self.strip_area, "Attention strip")
        mv.addWidget(self.strip_area)
        self.info = StatusLabel("Caption details")
        mv.addWidget(self.info)
        al = QLabel("&Alt text (edit and save with Ctrl+S)")
        self.alt = named(QPlainTextEdit(), "Alt text",
                         "The description of the picture; edit it and save to write the sidecars")
        self.alt.setTabChangesFocus(True)
        self.alt.setMaximumHeight(110)
        al.setBuddy(self.alt)
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
        self.picture = p
        self.view.setText(text)
        self.view.setAccessibleDescription(text)
        self.alt.setPlainText("")
        self._clear_words("")
        self.info.setText(p.error)

    def show_waiting(self, p: Picture) -> None:
        self.picture = p
        self.view.setText(messages.captioning(p.name))
        self.alt.setPlainText("")
        self._clear_words("")
        self.info.setText("")

    def show_picture(self, p: Picture, keep_text: bool = False) -> None:
        """Draw a described picture; ``keep_text`` leaves the alt text box as it is. The box shows the
        person's unsaved draft for this picture when there is one, else its alt text."""
        self.picture = p
        d = p.described
        if not keep_text:
            self.alt.setPlainText(p.draft or p.alt_text)
        self.info.setText(details(p))
        cap = d.caption if d is not None else None
        if cap is None or not cap.words or p.withheld:
            # A withheld caption is no description of the picture: its words are not offered one by one.
            self._clear_words("No words: the caption was withheld" if cap is not None else "")
        else:
            self._fill_words(p)
        self.draw(None)

    def _clear_words(self, why: str) -> None:
        self.words.blockSignals(True)
        self.words.clear()
        self.words.blockSignals(False)
        self.words.setAccessibleDescription(why or WORDS_HELP)
        self.strip.clear()
        self.strip.setAccessibleDescription("")

    def _fill_words(self, p: Picture) -> None:
        cap = p.described.caption
        places = [messages.where(cap.attention_map(i)) for i in range(len(cap.words))]
        self.words.blockSignals(True)
        self.words.clear()
        for w, place in zip(cap.words, places):
            it = QListWidgetItem(w)
            it.setData(Qt.ItemDataRole.AccessibleDescriptionRole, f"looked {place}")
            self.words.addItem(it)
        self.words.setCurrentRow(-1)
        self.words.blockSignals(False)
        self.words.setAccessibleDescription(WORDS_HELP)
        self.strip.setAccessibleDescription("; ".join(f"{w}: {pl}" for w, pl in zip(cap.words, places)))
        if p.preview is not None:
            self.strip.setPixmap(pil_to_qpixmap(strip(p.preview, cap.words, cap.attention, cap.grid, tile=96,
                                                      per_row=len(cap.words) + 1)))

    def draw(self, word: int | None) -> None:
        p = self.picture
        if p is None or p.described is None:
            return
        if p.preview is None:
            self.view.setText("(no preview)")
            return
        img = p.preview
        cap = p.described.caption
        if word is not None and cap is not None and 0 <= word < len(cap.words) and not p.withheld:
            img = overlay(img, cap.attention_map(word))
            self.view.setAccessibleDescription(messages.attention(cap.words[word],
                                                                  messages.where(cap.attention_map(word))))
        else:
            self.view.setAccessibleDescription(p.alt_text or "The selected picture")
        pm = pil_to_qpixmap(img)
        self.view.setPixmap(pm.scaled(self.view.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                      Qt.TransformationMode.SmoothTransformation))
        self.view.setProperty("attention_word", -1 if word is None else word)

    def _on_word(self, row: int) -> None:
        self.draw(row if row >= 0 else None)

    def step_word(self, delta: int) -> str:
        """Show the next (or previous) word's attention map; what is now shown, in words."""
        n = self.words.count()
        if not n:
            why = self.words.accessibleDescription()
            return why if why != WORDS_HELP else messages.NO_WORDS
        row = self.words.currentRow()
        row = (row + delta) % n if row >= 0 else (0 if delta > 0 else n - 1)
        self.words.setCurrentRow(row)
        item = self.words.item(row)
        place = str(item.data(Qt.ItemDataRole.AccessibleDescriptionRole)).removeprefix("looked ")
        return messages.attention_step(row, n, item.text(), place)

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(ev)
        row = self.words.currentRow()
        self.draw(row if row >= 0 else None)
