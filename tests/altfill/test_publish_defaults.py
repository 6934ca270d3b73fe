"""What alt-fill publishes when nobody asks for more: facts only on the command line as in the window (a
guess, a tag list or a picture's kind said alone goes to review), a figure caption only once it is cleaned
of its label, citations, links, credits and a heading run into it, and only when it describes the picture;
alt text that is only a name (a camera's, an office suite's, a path, a URL) counts as none. A dry run says
what would be written, never that it is; a skipped PDF Figure says why, never "None"."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES
from evidence_helpers import evidence
from PIL import Image
from test_altfill_docs_build import make_epub
from test_pdf_captions import make_pdf

from capdesk.altfill.figure_captions import CLEAN_MAX, caption_alt, caption_text
from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.rows import ImageRow, take_description
from capdesk.altfill.spots import is_file_name
from capdesk.describe import composer, policy
from capdesk.describe.describer import Described
from capdesk.describe.policy import Decision
from capdesk.status import SaidAs


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def cli(capsys, *args: str) -> tuple[int, str]:
    """The command run in this process (the model loads in a second, a new process takes five)."""
    from capdesk.cli.main import main

    code = main(["alt-fill", *args])
    return code, capsys.readouterr().err


# -- facts by default ------------------------------------------------------------------------------------
def test_the_command_line_writes_facts_only_by_default(tmp_path, capsys):
    for name in ("chelsea.png", "astronaut.png"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    page = tmp_path / "index.html"
    page.write_text('<p><img src="chelsea.png"></p>\n<p><img src="astronaut.png"></p>\n', encoding="utf-8")
    code, err = cli(capsys, str(page), "-q", "--ocr", "never", "--provider", "cpu")
    assert code == 0, err
    written = page.read_text(encoding="utf-8")
    # The cat (the detector and the tags agree) is said plainly and written; the astronaut's "Probably ..."
    # is listed, never written. (The coffee's table is seen by the detector alone: a guess too.)
    assert written.count("alt=") == 1 and '<img src="chelsea.png" alt="' in written and "Probably" not in written
    assert "astronaut.png: left for review: it is worded as a guess" in err and "(--write facts)" in err
    # Asked for, the guess is written as it always was.
    code, err = cli(capsys, str(page), "-q", "--ocr", "never", "--provider", "cpu", "--write", "all")
    assert code == 0, err
    assert '<img src="astronaut.png" alt="Probably' in page.read_text(encoding="utf-8")


def _said(description: str, decision: Decision) -> Described:
    return Described("x.png", description=description, said_as=decision.said_as, review=True,
                     reason="the picture is not a photo", decision=decision)


@pytest.mark.parametrize("text, decision, facts, probably, everything", [
    # A kind said alone names nothing the picture shows: kept back by facts, written by the others as before.
    ("An abstract image.", Decision(SaidAs.WITHHELD, kind="an abstract image"), False, True, True),
    ("A drawing.", Decision(SaidAs.WITHHELD, kind="a drawing"), False, True, True),
    # Tags alone: only --write all.
    ("May contain: a jellyfish.", Decision(SaidAs.WITHHELD, maybe=["a jellyfish"]), False, False, True),
    # A kind with what was seen or read in it says something as fact.
    ("A drawing of a cat.", Decision(SaidAs.WITHHELD, kind="a drawing", objects=["a cat"]), True, True, True),
    ('A screenshot. Text: "Settings".', Decision(SaidAs.WITHHELD, kind="a screenshot", text="Settings"),
     True, True, True),
])
def test_a_kind_or_tags_alone_are_never_written_as_facts(text, decision, facts, probably, everything):
    for write, written in (("facts", facts), ("probably", probably), ("all", everything)):
        row = ImageRow("p.html", 1, 1, "x.png", FillStatus.KEPT)
        got = take_description(row, _said(text, decision), write)
        assert (got == text) is written, (write, row.status, row.note)
        if not written:
            assert row.status == FillStatus.REVIEW and row.proposed == text and f"(--write {write})" in row.note
    row = ImageRow("p.html", 1, 1, "x.png", FillStatus.KEPT)
    take_description(row, _said("A drawing.", Decision(SaidAs.WITHHELD, kind="a drawing")), "facts")
    assert "only says what kind of picture it is" in row.note


def test_facts_only_publish_the_confirmed_subject_alone():
    dec = policy.decide(evidence("A dog runs on the grass.", trust=0.99, detections=[("dog", 0.95, (0, 0, 100, 100))],
                                 text="BEWARE"))
    full = composer.alt_text(dec).text
    assert full == 'A dog, probably on the grass. Text: "BEWARE"'
    said = Described("x.png", description=full, said_as=dec.said_as, decision=dec)
    row = ImageRow("p.html", 1, 1, "x.png", FillStatus.KEPT)
    assert take_description(row, said, "facts") == 'A dog. Text: "BEWARE"' == row.proposed
    for write in ("probably", "all"):  # asked for, the guess is written beside the fact
        assert take_description(ImageRow("p.html", 1, 1, "x.png", FillStatus.KEPT), said, write) == full


# -- captions ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("caption, cleaned, used", [
    ("Figure 1 chair.", "Chair.", False),  # a label without its colon; one word is no description
    ("Figure 1 A wooden chair by the window.", "A wooden chair by the window.", True),
    ("A bar chart of sales by year [12].", "A bar chart of sales by year.", True),
    ("Sales by region (Smith et al., 2019).", "Sales by region.", True),
    ("Map of the harbour. Source: https://example.org/map.png", "Map of the harbour.", True),
    ("Figure 3: Network topology. Available at: https://doi.org/10.1000/xyz123", "Network topology.", True),
    ("doi:10.1000/182 A diagram of the pipeline", "A diagram of the pipeline.", True),
    ("Results Figure 2. Distribution of the measured values", "Distribution of the measured values.", True),
    ("Introduction Figure 1: Setup of the experiment (Doe 2018; Roe 2020)", "Setup of the experiment.", True),
    ("Fig. S1. Supplementary images of the mouse brain.", "Supplementary images of the mouse brain.", True),
    ("1. Overview of the system", "Overview of the system.", True),
    ("The Eiffel tower at night (Source: Wikimedia Commons)", "The Eiffel tower at night.", True),
    ("A cat on a mat. Photo: J. Doe", "A cat on a mat.", True),
    ("Photo: a cat asleep on a sofa", "A cat asleep on a sofa.", True),  # words, not a name: a description
    ("Photo: J. Doe", "", False), ("Image courtesy of NASA", "", False), ("© 2020 Jane Doe", "", False),
    ("Photograph by Ansel Adams", "", False), ("Figure 5: [3]", "", False), ("Figure 7 — 2019", "2019.", False),
    ("Sources of light in a room", "Sources of light in a room.", True),
    ("Abbildung 4: Der Vollmond über Berlin", "Der Vollmond über Berlin.", True),
    ("満月の写真", "満月の写真.", True),  # ideographs: no spaces between words
    ("A drawing of a map: the old harbour", "A drawing of a map: the old harbour.", True),
])
def test_captions_are_cleaned_and_used_only_when_they_describe(caption, cleaned, used):
    assert caption_text(caption) == cleaned
    assert caption_alt(caption) == (cleaned if used else "")


def test_a_caption_of_megabytes_is_cleaned_from_its_start_only():
    big = "A harbour at dawn, the boats leaving. " + "Photo: boats leave (Doe, 2019) https://x.org/a [3]. " * 25000
    assert len(big) > 1_000_000
    said = caption_alt(big)  # the first CLEAN_MAX characters, cut at a word's end: the rest is past what is kept
    assert said == caption_alt(big[:CLEAN_MAX + 1]) and said.startswith("A harbour at dawn, the boats leaving.")
    assert "https" not in said and "[3]" not in said and "2019" not in said


CAPTIONED = """<!doctype html><html lang="en"><body>
<figure><img src="red.png"><figcaption>Results Figure 2. A red swatch on a white card [12] (Smith et al., 2019).
Source: https://example.org/swatch</figcaption></figure>
<figure><img src="blue.png"><figcaption>Figure 1 chair.</figcaption></figure>
<figure><img src="green.png"><figcaption>Photo: J. Doe</figcaption></figure>
</body></html>
"""


def test_a_page_gets_its_captions_cleaned_and_no_caption_that_describes_nothing(tmp_path, describer):
    for name, colour in (("red", (200, 20, 20)), ("blue", (20, 20, 200)), ("green", (20, 160, 20))):
        Image.new("RGB", (160, 120), colour).save(tmp_path / f"{name}.png")
    page = tmp_path / "index.html"
    page.write_text(CAPTIONED, encoding="utf-8")
    result = run_alt_fill([page], describer, backup_dir=tmp_path / "backups", write="facts")
    red, blue, green = result.images
    assert (red.status, red.alt_text, red.said_as) == (FillStatus.FILLED, "A red swatch on a white card.", "caption")
    for row in (blue, green):  # the caption is shown in the report, but the alt text is not taken from it
        assert row.said_as != "caption" and "chair" not in row.alt_text.lower() and "Doe" not in row.alt_text
    text = page.read_text(encoding="utf-8")
    assert 'alt="A red swatch on a white card."' in text and "example.org" not in text.split("<figcaption>")[0]


# -- names that are no alt text ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, picture, name", [
    ("./bezier2", None, True), ("bezier2", "./bezier2.png", True), ("images/bezier2", None, True),
    ("img_0042.png", None, True), ("DSC01234", None, True), ("IMG_0042", None, True), ("P1000123", None, True),
    ("PXL_20230512_143022123", None, True), ("20230512_143022", None, True), ("image1", None, True),
    ("Picture 3", None, True), ("Grafik 2", None, True), ("/usr/share/doc/x/fig", None, True),
    ("https://example.com/a", None, True), ("www.example.com/pic", None, True), ("hero_banner", None, True),
    ("Screenshot 2023-01-01 at 10.22.33", None, True),
    ("A cup of coffee.", None, False), ("AC/DC", None, False), ("X-ray of a hand", None, False),
    ("A380", None, False), ("Logo", None, False), ("Image of a cat", None, False),
    ("SAM 2 segmentation model", None, False), ("COVID-19 cases by week", None, False),
    ("my holiday photos/cat.jpg", None, False), ("Figure 1: a cup of coffee", None, False),
])
def test_names_that_say_nothing_count_as_no_alt_text(text, picture, name):
    assert is_file_name(text, picture) is name


def test_a_page_whose_alt_texts_are_names_gets_them_replaced(tmp_path, describer):
    shutil.copy(SAMPLES / "coffee.png", tmp_path / "bezier2.png")
    names = ("./bezier2", "DSC01234", "Picture 3", "image1", "https://example.com/bezier2")
    page = tmp_path / "index.html"
    page.write_text("".join(f'<p><img src="bezier2.png" alt="{n}"></p>\n' for n in names)
                    + '<p><img src="bezier2.png" alt="A cup of coffee on a saucer."></p>\n', encoding="utf-8")
    result = run_alt_fill([page], describer, dry_run=True, write="all")
    *named, person = result.images
    assert [r.status for r in named] == [FillStatus.FILLED] * len(names), [(r.status, r.note) for r in named]
    assert all(n not in r.after and r.alt_text for n, r in zip(names, named))
    assert person.status == FillStatus.KEPT and person.alt_text == "A cup of coffee on a saucer."


# -- what a dry run says; a skipped PDF Figure ------------------------------------------------------------
def test_a_dry_run_says_what_would_be_written_never_that_it_is(tmp_path, capsys, describer):
    from capdesk.session.messages import altfill_summary

    book = make_epub(tmp_path / "book.epub")
    code, err = cli(capsys, str(book), "--dry-run", "-q", "--write", "all", "--ocr", "never", "--provider", "cpu")
    assert code == 0, err
    assert "every picture has a text alternative" not in err
    assert f"{book}: once written, every picture would have a text alternative" in err
    assert "capdesk: dry run: 2 pictures would get alt text; nothing was written" in err.splitlines()
    # The window's spoken outcome of a dry pass says no more.
    dry = run_alt_fill([book], describer, dry_run=True, write="all")
    spoken = altfill_summary(dry)
    assert "every picture now has alt text" not in spoken and "2 alt texts to write" in spoken
    done = run_alt_fill([book], describer, write="all", backup_dir=tmp_path / "backups")
    assert done.pages[0].note.startswith("every picture has a text alternative")
    assert "every picture now has alt text in book.epub" in altfill_summary(done)


def test_a_skipped_pdf_figure_says_why_never_none(tmp_path, capsys):
    pdf = make_pdf(tmp_path / "one.pdf", body=lambda el: [el("Figure", 0), el("Figure", 7)])  # MCID 7: nothing
    code, err = cli(capsys, str(pdf), "--dry-run", "-q", "--ocr", "never", "--provider", "cpu")
    assert "None" not in err, err
    said = f"capdesk: {pdf}: page 1, figure 2: page 1: needs review: no picture drawn for it was found on its page"
    assert any(line.startswith(said) for line in err.splitlines()), err
