"""A tagged PDF's figure captions go with their pictures as a document's do: a ``Caption`` element beside
a Figure, inside it, or the caption paragraph LibreOffice draws a captioned picture in gives its text
(its /ActualText, else the text of its marked content, read by MCID), and a picture with a caption and
no trusted description gets the caption's words, said as ``caption``, never a guess."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from PIL import Image

from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.pdf import scan_pdf, text_by_mcid

pikepdf = pytest.importorskip("pikepdf")


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


def _image(pdf, colour: tuple[int, int, int]):
    im = Image.new("RGB", (64, 48), colour)
    return pikepdf.Stream(pdf, zlib.compress(im.tobytes()), Type=pikepdf.Name.XObject,
                          Subtype=pikepdf.Name.Image, Width=64, Height=48, ColorSpace=pikepdf.Name.DeviceRGB,
                          BitsPerComponent=8, Filter=pikepdf.Name.FlateDecode)


def _text(tag: str, mcid: int, y: int, words: str) -> bytes:
    return f"/{tag} <</MCID {mcid}>> BDC BT /F1 10 Tf 40 {y} Td ({words}) Tj ET EMC\n".encode()


def _picture(tag: str, mcid: int, y: int, name: str) -> bytes:
    return f"/{tag} <</MCID {mcid}>> BDC q 64 0 0 48 40 {y} cm /{name} Do Q EMC\n".encode()


def make_pdf(path: Path, roles: dict[str, str] | None = None, body: list | None = None, content: bytes = b"") -> Path:
    """One page, three pictures; ``body`` (made from the page and its MCIDs) is the Document's kids."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
                                                BaseFont=pikepdf.Name.Helvetica,
                                                Encoding=pikepdf.Name.WinAnsiEncoding))
    xobjects = {f"/Im{i}": _image(pdf, c) for i, c in enumerate(((200, 20, 20), (20, 20, 200), (20, 160, 20)))}
    page = pdf.add_blank_page(page_size=(300, 400))
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font), XObject=pikepdf.Dictionary(xobjects))
    page.Contents = pdf.make_stream(content or (
        _picture("Figure", 0, 330, "Im0") + _text("Caption", 1, 315, "Figure 1: Waxing crescent moon")
        + _picture("Figure", 2, 250, "Im1") + _text("P", 3, 230, "Between the pictures, some words.")
        + _picture("Figure", 4, 160, "Im2")))
    pg = page.obj

    def el(kind: str, k, **more):
        return pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructElem, S=pikepdf.Name("/" + kind),
                                                    Pg=pg, K=k, **more))

    kids = body(el) if body else [
        el("Figure", 0), el("Caption", 1),  # a Caption after its Figure, its text in its marked content
        # a Caption inside its Figure, with a text replacement of its own
        el("Figure", pikepdf.Array([2, el("Caption", pikepdf.Array(), ActualText=pikepdf.String(
            "Plate 2: A blue colour swatch"))])),
        el("P", 3), el("Figure", 4)]  # no caption: the words before it are not one
    document = el("Document", pikepdf.Array(kids))
    for k in kids:
        k.P = document
    tree = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructTreeRoot, K=document))
    if roles:
        tree.RoleMap = pikepdf.Dictionary({k: pikepdf.Name(v) for k, v in roles.items()})
    document.P = tree
    pdf.Root.StructTreeRoot = tree
    pdf.Root.MarkInfo = pikepdf.Dictionary(Marked=True)
    pdf.save(path)
    return path


def alts(path: Path) -> list[str | None]:
    with pikepdf.open(path) as pdf:
        kids = pdf.Root.StructTreeRoot.K.K
        return [str(k.Alt) if "/Alt" in k else None for k in kids if k.S == "/Figure"]


def test_a_pdf_figure_caption_gives_the_alt_text_as_a_document_caption_does(tmp_path, describer):
    pdf = make_pdf(tmp_path / "moons.pdf")
    original = pdf.read_bytes()
    assert [f.caption for f in scan_pdf(pdf).figures] == ["Figure 1: Waxing crescent moon",
                                                          "Plate 2: A blue colour swatch", ""]
    result = run_alt_fill([pdf], describer, backup_dir=tmp_path / "backups")
    moon, swatch, plain = result.images
    # A plain colour has nothing certain to say ("A blank ... image."): the caption's words are written.
    assert (moon.status, moon.alt_text, moon.said_as) == (FillStatus.FILLED, "Waxing crescent moon.", "caption")
    assert moon.caption == "Figure 1: Waxing crescent moon" and "alt text taken from its caption" in moon.reason
    assert (swatch.status, swatch.alt_text, swatch.said_as) == (FillStatus.FILLED, "A blue colour swatch.", "caption")
    assert not plain.caption and plain.said_as != "caption"
    assert pdf.read_bytes().startswith(original)
    assert alts(pdf)[:2] == ["Waxing crescent moon.", "A blue colour swatch."]
    from capdesk.altfill.report import write_report

    write_report(result, tmp_path / "report.html")
    shown = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Its caption: Figure 1: Waxing crescent moon" in shown


def test_libreoffice_caption_paragraphs_are_captions(tmp_path):
    """As LibreOffice exports captions: a Word caption paragraph (``caption``, role-mapped to /P) after the
    paragraph the Figure is alone in, and an ``Illustration`` paragraph the picture is drawn in."""
    content = (_picture("Figure", 0, 330, "Im0") + _text("caption", 1, 315, "Figure 1: Waxing crescent moon")
               + _picture("Figure", 2, 250, "Im1") + _text("Illustration", 3, 235, "Illustration ")
               + _text("Illustration", 4, 235, "2") + _text("Illustration", 5, 235, ": Full moon")
               + _picture("Figure", 6, 160, "Im2") + _text("caption", 7, 145, "Figure 3: Its own caption"))

    def body(el):
        p1 = el("Standard", pikepdf.Array([el("Figure", 0)]))
        frame = el("Illustration", pikepdf.Array([el("Figure", 2), 3, 4, 5]))
        p3 = el("Standard", pikepdf.Array([el("Figure", 6)]))
        kids = [p1, el("caption", 1), el("Div", pikepdf.Array([frame])), p3, el("caption", 7)]
        for parent in (p1, frame, p3):
            parent.K[0].P = parent
        kids[2].K[0].P = kids[2]
        return kids

    pdf = make_pdf(tmp_path / "lo.pdf", {"/Standard": "/P", "/caption": "/P", "/Illustration": "/P"}, body, content)
    assert [f.caption for f in scan_pdf(pdf).figures] == ["Figure 1: Waxing crescent moon",
                                                          "Illustration 2: Full moon", "Figure 3: Its own caption"]


def test_a_caption_above_belongs_to_the_figure_below_unless_it_is_the_one_before_s(tmp_path):
    def body(el):
        return [el("Caption", 1), el("Figure", 0), el("Figure", 2), el("Caption", 3), el("Figure", 4)]

    content = (_text("Caption", 1, 350, "Above the first") + _picture("Figure", 0, 300, "Im0")
               + _picture("Figure", 2, 240, "Im1") + _text("Caption", 3, 225, "Below the second")
               + _picture("Figure", 4, 160, "Im2"))
    pdf = make_pdf(tmp_path / "order.pdf", None, body, content)
    assert [f.caption for f in scan_pdf(pdf).figures] == ["Above the first", "Below the second", ""]


def test_text_of_two_marked_pieces_drawn_as_one_run_is_given_to_neither(tmp_path):
    """Two MCIDs drawn in one text object with no move between them reach the text reader as one run:
    whose words are whose cannot be told, so neither gets any (never the wrong caption)."""
    content = (b"BT /F1 10 Tf 40 300 Td /Caption <</MCID 0>> BDC (Moon) Tj EMC /P <</MCID 1>> BDC (Sun) Tj EMC ET\n"
               + _text("P", 2, 280, "Alone"))
    pdf = make_pdf(tmp_path / "runs.pdf", None, lambda el: [el("Caption", 0), el("P", 1), el("P", 2)], content)
    from pypdf import PdfReader

    assert text_by_mcid(PdfReader(pdf).pages[0]) == {2: "Alone"}
