"""Reading the text in a picture: words at screen scale read from the pixels as they are, and the spaces
the recogniser leaves out between English words put back (``capdesk.describe.ocr``), with the real
RapidOCR models and the real word-frequency list."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from capdesk.describe import ocr

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs rapidocr-onnxruntime (the main install has it)")
SIGN = ("Gate seven departures delayed", "Meeting moved to room twelve")


@pytest.mark.parametrize(("text", "said"), [
    ("moved toroom twelve", "moved to room twelve"),
    ("lostaftersalecall", "lost after sale call"),
    ("of greyvalues:", "of grey values:"),
    ("the background.These markers", "the background. These markers"),
])
def test_words_run_together_are_spaced(text: str, said: str) -> None:
    assert ocr.spaced(text) == said


@pytest.mark.parametrize("text", [
    "Region-based segmentation of the histogram",  # English words stay as they are
    "tom no ducls ticlcets",  # misread words are not cut into rare pieces ("du cls", "ti clc ets")
    "CapDesk Ljubljana Schwarzenegger hunter2",  # names and words no list has
    "e.g. 3.5 km, U.S.A.",
])
def test_words_that_are_not_run_together_stay_as_read(text: str) -> None:
    assert ocr.spaced(text) == text


def test_a_long_run_of_common_words_is_split_into_them() -> None:
    # "Gatesevendepartures" splits as "Gates even departures": spoken, it sounds as drawn; run together,
    # a screen reader spells it out.
    assert ocr.spaced("Gatesevendepartures delayed").split() == ["Gates", "even", "departures", "delayed"]


def _sign(px: int) -> Image.Image:
    img = Image.new("RGB", (480, 320), (34, 34, 40))  # a dark theme's colours
    d = ImageDraw.Draw(img)
    for i, line in enumerate(SIGN):
        d.text((12, 40 + 3 * px * i), line, fill=(230, 230, 230), font_size=px)
    return img


@needs_ocr
@pytest.mark.parametrize("px", [14, 20])
def test_screen_text_is_read_word_for_word_from_its_own_pixels(px: int) -> None:
    read = ocr.read_text(_sign(px), upscale=1.0)
    assert read is not None and read.split() == " ".join(SIGN).split(), read


@needs_ocr
def test_no_words_run_together_when_read_at_screen_scale() -> None:
    # As RapidOCR enlarges it (short side to 736 px) these lines come back run together, which is what the
    # screen path avoids; spaced or not, no read word may be longer than the longest drawn one.
    longest = max(len(w) for w in " ".join(SIGN).split())
    for px in (12, 14, 16, 20):
        read = ocr.read_text(_sign(px), upscale=1.0) or ""
        assert read and max(len(w) for w in read.split()) <= longest, (px, read)


def test_lone_chinese_characters_in_english_text_are_dropped():
    """The recogniser reads Chinese too, and read a screenshot's icons as '白' and '六'."""
    from capdesk.describe.ocr import without_stray_script

    read = "Sep 9 16:28 白 50 % 六 Balanced Night Light"
    assert without_stray_script(read) == "Sep 9 16:28 50 % Balanced Night Light"
    assert without_stray_script("東京 タワー 333m") == "東京 タワー 333m"
    assert without_stray_script("Café crème 5 μm") == "Café crème 5 μm"


LINES_OF_MANY_WIDTHS = ("fresh bread every morning before noon tickets on sale today", "sale", "gate seven",
                        "lost cat answers to tom call after six please")


@needs_ocr
@pytest.mark.parametrize("px", [14, 24])
def test_a_short_line_is_read_at_its_own_width_beside_long_ones(px: int) -> None:
    # Recognised in batches, "gate seven" was padded to the longest line's width and came back as
    # "gateseven" (before any spacing is put back): each line is now read alone.
    img = Image.new("RGB", (900, 60 + 3 * px * len(LINES_OF_MANY_WIDTHS)), (250, 250, 245))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(LINES_OF_MANY_WIDTHS):
        d.text((12, 30 + 3 * px * i), line, fill=(20, 20, 20), font_size=px)
    read = ocr.read_text(img, upscale=1.0, space_words=False) or ""
    assert "gate seven" in read, read


def _reader_threads() -> set[int]:
    eng = ocr._get()
    parts = (eng.text_det.infer, eng.text_cls.infer, eng.text_rec.session)
    return {p.session.get_session_options().intra_op_num_threads for p in parts}


@needs_ocr
def test_a_folder_reads_text_on_one_thread_with_the_same_words(monkeypatch) -> None:
    # A folder reads one picture beside the other chunk's caption work: RapidOCR's own sessions take every
    # core with spinning threads (190 ms of CPU for a val photo with text, against 80 on one thread).
    from capdesk.folders.batch import local_stream

    own = ocr.read_text(_sign(14), upscale=1.0)
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setattr(ocr, "_threads", None)
    local_stream(None)  # type: ignore[arg-type]  # a folder's describing says it before any picture is read
    assert _reader_threads() == {1}
    assert ocr.read_text(_sign(14), upscale=1.0) == own
