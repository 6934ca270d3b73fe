"""A person's saved alt text after a restart: shown and said as saved, never captioned over without a
question, and Ctrl+S with nothing edited writes nothing. Real model, real sidecars, real threads."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES

from capdesk.session.core import PictureStatus, Session
from capdesk.session.settings import Settings
from capdesk.session.tasks import ThreadRunner

TIMEOUT = 180
WORDS = "My grandmother's tabby, asleep on the red rug."


@pytest.fixture
def folder(tmp_path, settings_file):
    d = tmp_path / "photos"
    d.mkdir()
    for n in ("astronaut.png", "chelsea.png"):
        shutil.copy(SAMPLES / n, d / n)
    # A first session: the person writes and saves their own words for chelsea.png.
    s, runner = _session()
    s.open_paths(d)
    _settle(s, runner, lambda: s.current.described is not None)
    s.select(str(d / "chelsea.png"))
    _settle(s, runner, lambda: s.current.described is not None)
    assert s.save_current(WORDS)
    s.close()
    return d


def _session() -> tuple[Session, ThreadRunner]:
    runner = ThreadRunner()
    return Session(Settings(ocr="never", speech="off"), runner, lambda: True), runner


def _settle(s: Session, runner: ThreadRunner, until=lambda: True) -> None:
    assert runner.pump(lambda: s._busy == 0 and until(), TIMEOUT)


def _on_disk(d) -> tuple[bytes, bytes]:
    return (d / "chelsea.txt").read_bytes(), (d / "chelsea.png.xmp").read_bytes()


def test_after_a_restart_the_persons_words_are_shown_and_said_not_a_caption(folder):
    before = _on_disk(folder)
    s, runner = _session()
    said = []
    s.message.connect(said.append)
    s.open_paths(folder)
    _settle(s, runner, lambda: s.current.described is not None)
    said.clear()
    s.select(str(folder / "chelsea.png"))
    p = s.current
    assert p.status is PictureStatus.EDITED and p.label == "chelsea.png, alt text written or edited by a person"
    assert p.alt_text == WORDS and p.described is None  # not captioned over
    assert [m.text for m in said] == [WORDS]
    _settle(s, runner)
    assert p.described is None and p.status is PictureStatus.EDITED

    # Ctrl+S with nothing edited: nothing written, and the person hears why.
    said.clear()
    assert not s.save_current(WORDS)
    assert said[-1].text == "Nothing to save: the alt text is as it was saved"
    assert _on_disk(folder) == before

    # Captioning again (F5, once the window has asked) offers the caption as an unsaved edit: the person's
    # words stay on disk and in the list until the person saves.
    s.caption_again()
    _settle(s, runner, lambda: p.described is not None)
    assert p.alt_text == WORDS and p.draft == p.described.description != WORDS
    assert s.has_unsaved_edit(p.draft) and p.label.startswith("chelsea.png, edited, not saved")
    assert said[-1].text.startswith("New caption, not saved; the saved alt text stays until you save: ")
    assert _on_disk(folder) == before
    s.close()


def test_a_watched_picture_whose_sidecars_a_person_wrote_says_their_words(folder):
    s, runner = _session()
    s.settings.watch_write_sidecars = True
    said = []
    s.message.connect(said.append)
    # As the watcher hands over a picture that changed (its sidecars kept as the person's).
    s._on_watched([folder / "chelsea.png"])
    _settle(s, runner)
    p = s.pictures[str(folder / "chelsea.png")]
    assert p.status is PictureStatus.EDITED and p.alt_text == WORDS
    assert WORDS in said[-1].text
    s.close()


@pytest.mark.slow  # 4.0 s measured on two busy cores
def test_a_batch_keeps_the_words_a_person_saved_even_when_the_picture_changed(folder):
    """Words saved with Ctrl+S are recorded as CapDesk's writing but are the person's: a batch over the
    folder (the picture edited since, so it is described again) keeps them; --overwrite replaces them."""
    import os

    from conftest import run_cli

    before = _on_disk(folder)
    os.utime(folder / "chelsea.png", (1_700_000_000, 1_700_000_000))  # the picture changed since
    r = run_cli("batch", str(folder), "-q")
    assert r.returncode == 0, r.stderr
    assert _on_disk(folder) == before
    r = run_cli("batch", str(folder), "-q", "--overwrite")
    assert r.returncode == 0 and _on_disk(folder) != before


@pytest.mark.slow  # 1.3 s measured on two busy cores
def test_a_huge_clipboard_picture_is_kept_at_a_bounded_size(settings_file):
    from PIL import Image

    from capdesk.session.core import CLIPBOARD_MAX_SIDE

    s, runner = _session()
    huge = Image.new("RGB", (8000, 6000), (200, 120, 40))
    p = s.add_clipboard_image(huge)
    assert max(p.image.size) == CLIPBOARD_MAX_SIDE and p.image.size[0] / p.image.size[1] == 8000 / 6000
    _settle(s, runner, lambda: p.described is not None)
    s.close()


def test_a_first_start_without_a_voice_or_player_shows_descriptions_and_no_speech_error(settings_file, monkeypatch,
                                                                                          tmp_path):
    """No screen reader and no way to sound (no aplay, paplay or pw-play): "auto" shows the description and
    says nothing about audio players; Speak, asked for, still says why it cannot."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    d = tmp_path / "one"
    d.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", d / "chelsea.png")
    runner = ThreadRunner()
    s = Session(Settings(ocr="never", speech="auto"), runner, lambda: False)
    said = []
    s.message.connect(said.append)
    s.open_paths(d)
    _settle(s, runner, lambda: s.current.described is not None)
    assert s.speaker is None  # nothing tried to speak
    assert s.current.described.description in [m.text for m in said]
    assert not any("audio player" in m.text for m in said)
    s.speak("Read this.")  # asked: the reason is said
    _settle(s, runner, lambda: any("audio player" in m.text for m in said))
    s.close()


def test_the_alt_fill_outcome_counts_documents_as_documents_and_says_what_needs_review():
    from capdesk.altfill.rows import AltFillResult, FillStatus, ImageRow, PageRow
    from capdesk.session import messages

    result = AltFillResult(pages=[PageRow("/w/report.docx", "changed", kind="docx"),
                                  PageRow("/w/book.epub", "changed", kind="epub", note="every picture has alt text")])
    for review in (True, True, False):
        row = ImageRow.__new__(ImageRow)
        row.status, row.needs_review = FillStatus.FILLED, review
        result.images.append(row)
    said = messages.altfill_outcome(messages.altfill_summary(result), False, False)
    assert said == ("Alt text finished: 2 documents: 3 alt texts written, 2 need review; every picture now has "
                    "alt text in book.epub")
    assert "page" not in said
