"""alt-fill on PDFs built to harm: a structure tree that holds itself or is too large to walk, a signed or
certified PDF, an AES-encrypted one, element values a re-serialising writer would round, a trailer whose
/Size is below the object numbers used. Each is built here, byte by byte, as a hostile author would."""

from __future__ import annotations

import datetime
import io
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest
from conftest import SAMPLES
from PIL import Image

from capdesk.altfill import pdf_structure, pdf_update
from capdesk.altfill.fill import FillStatus, run_alt_fill
from capdesk.altfill.pdf import ENCRYPTED, place_alt, plan_figure, scan_pdf, write_pdf
from capdesk.altfill.pdf_signatures import CERTIFIED_NO_CHANGES, SIGNED, SIGNED_UPDATED
from capdesk.altfill.pdf_update import with_values
from capdesk.altfill.rows import AltFillResult

pikepdf = pytest.importorskip("pikepdf")


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


# --- the PDFs, written object by object ------------------------------------------------------------------

def build(objs: dict[int, bytes], xref_stream: bool = False, size: int | None = None) -> bytes:
    """A PDF of ``objs`` (number -> body), its cross-reference section a table or a stream; ``size`` the
    trailer's /Size when it is to say something else than the truth."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    top = max(objs) + 1
    at = len(out)
    if not xref_stream:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % top
        out += b"".join(b"%010d 00000 n \n" % offsets[n] if n in offsets else b"0000000000 00000 f \n"
                        for n in range(1, top))
        return bytes(out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size or top, at))
    rows = b"\x00\x00\x00\x00\xff\xff" + b"".join(
        b"\x01" + offsets[n].to_bytes(4, "big") + b"\x00" if n in offsets else b"\x00" * 6 for n in range(1, top))
    data = zlib.compress(rows + b"\x01" + at.to_bytes(4, "big") + b"\x00")
    out += (b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 1] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n"
            % (top, size or top + 1, len(data)) + data + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % at)
    return bytes(out)


def _image() -> bytes:
    im = Image.open(SAMPLES / "coffee.png").convert("RGB")
    im.thumbnail((160, 160))
    data = zlib.compress(im.tobytes())
    return (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 "
            b"/Filter /FlateDecode /Length %d >>\nstream\n" % (im.width, im.height, len(data)) + data + b"\nendstream")


CONTENT = b"/Figure << /MCID 0 >> BDC q 200 0 0 150 50 500 cm /Im0 Do Q EMC BT /F1 12 Tf 50 450 Td (Hello) Tj ET"
FIGURE = b"<< /Type /StructElem /S /Figure /P 5 0 R /Pg 3 0 R /K 0 >>"
# Values a writer that parses the element and writes it again would change: reals past its precision, a
# string in PDFDocEncoding, a hex string, escapes, a name with #-escapes, a comment.
WEIRD = (b"<< /Type /StructElem /S /Figure /P 5 0 R /Pg 3 0 R /K 0 /T (\\351t\\351 caf\\351) /ID <00FF10> "
         b"/A << /O /Layout /BBox [50.123456789012 500.00000001 250 650] /Placement /Block >> % a comment\n"
         b"/E (x\\)y\\\\z (nested)) /Nm /A#20b#23c >>")


def base(figure: bytes = FIGURE, tree_k: bytes = b"6 0 R", extra: dict[int, bytes] | None = None,
         catalog: bytes = b"", page: bytes = b"") -> dict[int, bytes]:
    """One page, one picture drawn in the marked content of one Figure."""
    content = zlib.compress(CONTENT)
    objs = {
        1: b"<< /Type /Catalog /Pages 2 0 R /MarkInfo << /Marked true >> /StructTreeRoot 5 0 R /Lang (en-GB)"
           + catalog + b" >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /StructParents 0 /Resources "
           b"<< /XObject << /Im0 7 0 R >> /Font << /F1 8 0 R >> >>" + page + b" >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        5: b"<< /Type /StructTreeRoot /K " + tree_k + b" /ParentTree 9 0 R >>",
        6: figure,
        7: _image(),
        8: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        9: b"<< /Nums [0 [6 0 R]] >>",
    }
    objs.update(extra or {})
    return objs


def holding_itself(kind: str) -> dict[int, bytes]:
    if kind == "array listing itself":  # the tree root's /K an array that holds itself
        return base(tree_k=b"10 0 R", extra={10: b"[6 0 R 10 0 R]"})
    if kind == "array listing itself twice":  # each visit would double what is left to walk
        return base(tree_k=b"10 0 R", extra={10: b"[6 0 R 10 0 R 10 0 R]"})
    # A paragraph listing itself 30 times beside its Figure: a walk 8 deep would meet 31^8 elements.
    return base(tree_k=b"10 0 R", figure=FIGURE.replace(b"/P 5 0 R", b"/P 10 0 R"),
                extra={10: b"<< /Type /StructElem /S /P /P 5 0 R /K [6 0 R" + b" 10 0 R" * 30 + b"] >>"})


def fill(path: Path, text: str, tmp_path: Path, allow_signed: bool = False):
    """A PDF's Figures given ``text`` and written, as a run writes them (no describing): its row."""
    doc = scan_pdf(path, allow_signed)
    for fig in doc.figures:
        row, describe = plan_figure(doc, fig)
        if describe:
            place_alt(doc, fig, row, text)
    write_pdf(doc, AltFillResult(), False, tmp_path / "backups", None)
    return doc


def differences(before: Path, after: Path) -> list:
    """Every value of every object of ``before`` as a second reader (qpdf's) reads it in ``after``, but a
    structure element's /Alt: what differs."""
    out = []
    with pikepdf.open(before) as a, pikepdf.open(after) as b:
        for o in a.objects:
            if not isinstance(o, pikepdf.Object) or o.objgen == (0, 0):
                continue
            n = b.get_object(o.objgen)
            if isinstance(o, pikepdf.Stream):
                if o.read_raw_bytes() != n.read_raw_bytes():
                    out.append((o.objgen, "stream"))
            elif isinstance(o, pikepdf.Dictionary):
                for k in set(o.keys()) | set(n.keys()):
                    if k != "/Alt" and (k not in o or k not in n or _text(o[k]) != _text(n[k])):
                        out.append((o.objgen, k))
            elif o.unparse() != n.unparse():
                out.append((o.objgen, "value"))
    return out


def _text(v) -> bytes | str:
    return v.unparse() if isinstance(v, pikepdf.Object) else repr(v)  # pikepdf hands small values as Python's


def figure_alt(path: Path, objnum: int = 6) -> str | None:
    with pikepdf.open(path) as pdf:
        el = pdf.get_object((objnum, 0))
        return str(el.Alt) if "/Alt" in el else None


# --- a structure tree that holds itself, or is too large to walk -----------------------------------------

@pytest.mark.parametrize("kind", ["array listing itself", "array listing itself twice", "element listing itself"])
def test_a_structure_tree_that_holds_itself_is_walked_once_and_filled(tmp_path, monkeypatch, kind):
    # A small ceiling: were a node walked again and again, the walk would stop there and the PDF be refused.
    monkeypatch.setattr(pdf_structure, "MAX_VISITS", 2_000)
    pdf = tmp_path / "loop.pdf"
    pdf.write_bytes(build(holding_itself(kind)))
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert doc.row.status == "changed", doc.row.error
    assert [(f.number, f.found_by) for f in doc.figures] == [(1, "marked content")]
    assert figure_alt(pdf) == "A cup of coffee."


def test_a_tree_past_the_walk_ceiling_is_named_and_the_rest_of_the_run_is_written(tmp_path, monkeypatch,
                                                                                   describer):
    monkeypatch.setattr(pdf_structure, "MAX_VISITS", 300)
    site = tmp_path / "site"
    site.mkdir()
    paragraphs = {20 + i: b"<< /Type /StructElem /S /P /P 5 0 R /K [] >>" for i in range(400)}
    (site / "big.pdf").write_bytes(build(base(tree_k=b"[6 0 R " + b" ".join(b"%d 0 R" % n for n in paragraphs)
                                               + b"]", extra=paragraphs)))
    (site / "small.pdf").write_bytes(build(base()))
    (site / "coffee.png").write_bytes((SAMPLES / "coffee.png").read_bytes())
    (site / "page.html").write_text('<p><img src="coffee.png"></p>\n', encoding="utf-8")
    big = (site / "big.pdf").read_bytes()
    result = run_alt_fill([site], describer, backup_dir=tmp_path / "backups", write="all")
    rows = {Path(p.page).name: p for p in result.pages}
    assert rows["big.pdf"].status == "failed"
    assert rows["big.pdf"].error == ("its structure tree takes more than 300 steps to walk (it may hold itself): "
                                     "not read")
    assert (site / "big.pdf").read_bytes() == big
    assert rows["small.pdf"].status == "changed" and figure_alt(site / "small.pdf")
    assert rows["page.html"].status == "changed" and 'alt="' in (site / "page.html").read_text(encoding="utf-8")


# --- signed, certified and encrypted PDFs ------------------------------------------------------------------

@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    """A self-signed certificate and its key, as pyHanko signs and checks with them."""
    pytest.importorskip("pyhanko", reason="pyHanko (the dev extra) signs and checks the signed PDFs")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    from pyhanko.keys import load_cert_from_pemder
    from pyhanko.sign import signers

    folder = tmp_path_factory.mktemp("signer")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test Signer")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return (signers.SimpleSigner.load(str(folder / "key.pem"), str(folder / "cert.pem")),
            load_cert_from_pemder(str(folder / "cert.pem")))


def signed(data: bytes, signer, how: str) -> bytes:
    """``data`` signed by pyHanko: "approve" (an approval signature), "certify" (no changes allowed, P=1) or
    "certify-forms" (form filling allowed, P=2)."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    perms = {"certify": fields.MDPPerm.NO_CHANGES, "certify-forms": fields.MDPPerm.FILL_FORMS}.get(how)
    meta = signers.PdfSignatureMetadata(field_name="Sig1", certify=perms is not None, docmdp_permissions=perms)
    out = io.BytesIO()
    signers.PdfSigner(meta, signer=signer[0]).sign_pdf(IncrementalPdfFileWriter(io.BytesIO(data), strict=False),
                                                       output=out)
    return out.getvalue()


def signature_status(path: Path, signer):
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    with path.open("rb") as f:
        sig = PdfFileReader(f, strict=False).embedded_signatures[0]
        return validate_pdf_signature(sig, ValidationContext(trust_roots=[signer[1]]))


@pytest.mark.parametrize(("how", "why"), [("approve", SIGNED), ("certify", CERTIFIED_NO_CHANGES),
                                          ("certify-forms", SIGNED)])
def test_a_signed_pdf_is_left_byte_for_byte_and_named(tmp_path, signer, how, why):
    pdf = tmp_path / "signed.pdf"
    pdf.write_bytes(signed(build(base()), signer, how))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert (doc.row.status, doc.row.error) == ("failed", why)
    assert pdf.read_bytes() == original
    assert signature_status(pdf, signer).bottom_line


@pytest.mark.parametrize("how", ["approve", "certify-forms"])
def test_allow_signed_updates_after_the_signature_which_stays_intact(tmp_path, signer, how):
    pdf = tmp_path / "signed.pdf"
    pdf.write_bytes(signed(build(base()), signer, how))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path, allow_signed=True)
    assert doc.row.status == "changed" and doc.row.note == SIGNED_UPDATED
    assert pdf.read_bytes().startswith(original) and figure_alt(pdf) == "A cup of coffee."
    status = signature_status(pdf, signer)
    # What the note says: the signature still covers the revision it signed and checks intact and valid; the
    # change after it is outside it, and the checker does not count a structure change as allowed.
    assert status.intact and status.valid
    assert status.coverage.name == "ENTIRE_REVISION"
    assert status.modification_level.name == "OTHER" and not status.docmdp_ok


def test_allow_signed_leaves_a_pdf_certified_against_any_change(tmp_path, signer):
    pdf = tmp_path / "certified.pdf"
    pdf.write_bytes(signed(build(base()), signer, "certify"))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path, allow_signed=True)
    assert (doc.row.status, doc.row.error) == ("failed", CERTIFIED_NO_CHANGES)
    assert pdf.read_bytes() == original and signature_status(pdf, signer).bottom_line


SIG = (b"<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached /ByteRange [0 0 0 0] /Contents <"
       + b"00" * 64 + b"> /Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams "
       b"<< /Type /TransformParams /P %d /V /1.2 >> >>] >>")


@pytest.mark.parametrize(("catalog", "extra", "why"), [
    (b" /Perms << /DocMDP 12 0 R >>", {12: SIG % 1}, CERTIFIED_NO_CHANGES),
    (b" /Perms << /DocMDP 12 0 R >>", {12: SIG % 3}, SIGNED),
    (b" /AcroForm << /Fields [] /SigFlags 3 >>", {}, SIGNED),
    (b" /AcroForm << /Fields [11 0 R] >>", {11: b"<< /FT /Sig /T (S) /Kids [13 0 R] >>",
                                             13: b"<< /Parent 11 0 R /V 12 0 R >>", 12: SIG % 2}, SIGNED),
], ids=["certified P=1", "certified P=3", "SigFlags", "a signature field's value"])
def test_each_mark_of_a_signature_is_heeded(tmp_path, catalog, extra, why):
    pdf = tmp_path / "marked.pdf"
    pdf.write_bytes(build(base(catalog=catalog, extra=extra)))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert (doc.row.status, doc.row.error) == ("failed", why)
    assert pdf.read_bytes() == original


def test_the_cli_takes_allow_signed_for_a_fill_and_for_a_review_round(tmp_path, signer):
    import csv

    from conftest import run_cli

    pdf = tmp_path / "signed.pdf"
    pdf.write_bytes(signed(build(base()), signer, "approve"))
    r = run_cli("alt-fill", str(pdf), "-q", "--ocr", "never", "--beam", "1", "--allow-signed")
    assert f"capdesk: {pdf}: {SIGNED_UPDATED}" in r.stderr.splitlines(), r.stderr
    assert signature_status(pdf, signer).intact
    # A review round: the signed PDF's pictures listed, one text accepted, written only when asked, as the
    # refusal's own advice says (it said --allow-signed, which the review round used to refuse).
    second = tmp_path / "second.pdf"
    second.write_bytes(signed(build(base()), signer, "approve"))
    review = tmp_path / "review.csv"
    r = run_cli("alt-fill", str(second), "-q", "--ocr", "never", "--beam", "1", "--allow-signed", "--dry-run",
                "--review-out", str(review))
    assert r.returncode in (0, 1), r.stderr
    with review.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows, "the signed PDF's pictures are listed for review"
    rows[0]["write"], rows[0]["text"] = "yes", "A cup of coffee on a saucer."
    with review.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    before = second.read_bytes()
    r = run_cli("alt-fill", "--review-in", str(review))
    # Named and left, and the run exits 1: a batch notices the PDF still lacks its texts.
    assert second.read_bytes() == before and "--allow-signed" in r.stderr and r.returncode == 1, r.stderr
    r = run_cli("alt-fill", "--review-in", str(review), "--allow-signed")
    assert r.returncode == 0, r.stderr
    assert second.read_bytes().startswith(before) and figure_alt(second) == "A cup of coffee on a saucer."
    assert signature_status(second, signer).intact


def _encrypted(tmp_path: Path, revision: int) -> Path:
    plain, pdf = tmp_path / "plain.pdf", tmp_path / f"aes-r{revision}.pdf"
    plain.write_bytes(build(base()))
    with pikepdf.open(plain) as p:
        p.save(pdf, encryption=pikepdf.Encryption(owner="owner", user="", R=revision, aes=True))
    return pdf


@pytest.mark.parametrize("revision", [4, 6])
def test_an_aes_encrypted_pdf_is_named_in_one_line_and_left(tmp_path, revision):
    pdf = _encrypted(tmp_path, revision)
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert (doc.row.status, doc.row.error) == ("failed", ENCRYPTED) and pdf.read_bytes() == original


def test_an_aes_encrypted_pdf_is_named_alike_where_no_aes_cipher_is_installed(tmp_path):
    """pypdf needs a crypto package for AES; without one it raises its own error, which is no reason to give."""
    pdf = _encrypted(tmp_path, 6)
    script = textwrap.dedent("""
        import sys
        class NoCrypto:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("cryptography", "Crypto", "Cryptodome"):
                    raise ImportError(name + " is not installed here")
        sys.meta_path.insert(0, NoCrypto())
        from pathlib import Path
        from capdesk.altfill.pdf import scan_pdf
        print(scan_pdf(Path(sys.argv[1])).row.error)
    """)
    done = subprocess.run([sys.executable, "-c", script, str(pdf)], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == ENCRYPTED, done.stdout + done.stderr


# --- the update writes /Alt and nothing else -------------------------------------------------------------

@pytest.mark.parametrize("object_streams", [False, True], ids=["plain objects", "object streams"])
def test_the_update_keeps_every_value_but_alt_as_it_was(tmp_path, object_streams):
    pdf = tmp_path / "values.pdf"
    pdf.write_bytes(build(base(figure=WEIRD)))
    if object_streams:
        with pikepdf.open(pdf, allow_overwriting_input=True) as p:
            p.save(pdf, object_stream_mode=pikepdf.ObjectStreamMode.generate)
    before = tmp_path / "before.pdf"
    before.write_bytes(pdf.read_bytes())
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert doc.row.status == "changed", doc.row.error
    assert differences(before, pdf) == []
    assert figure_alt(pdf) == "A cup of coffee."
    if not object_streams:  # the element is its own bytes again, /Alt added before its end
        assert pdf.read_bytes()[len(before.read_bytes()):].startswith(b"6 0 obj\n" + WEIRD[:-2] + b" /Alt (")


@pytest.mark.parametrize(("text", "values", "expected"), [
    (b"<< /A#6ct () /B [1 2.50] >>", {b"/Alt": b"(x)"}, b"<< /A#6ct (x) /B [1 2.50] >>"),
    (b"<</S/Figure/Alt 12 0 R/K[0 1]>>", {b"/Alt": b"(x)"}, b"<</S/Figure/Alt (x)/K[0 1]>>"),
    (b"<< /T (a\\) (b) c) /H <0A 0B> /D << /X [<<>>] >> % c /Alt\n>>", {b"/Alt": b"(x)", b"/Lang": b"(en)"},
     b"<< /T (a\\) (b) c) /H <0A 0B> /D << /X [<<>>] >> % c /Alt\n /Alt (x) /Lang (en)>>"),
])
def test_alt_goes_into_the_elements_own_bytes(text, values, expected):
    assert with_values(text, values) == expected


def test_a_trailer_size_below_the_numbers_used_gives_the_update_a_new_number(tmp_path):
    pdf = tmp_path / "small-size.pdf"
    # Objects 1 to 10 (the cross-reference stream is 10), /Size 5; the Figure names an object 40 not there.
    pdf.write_bytes(build(base(figure=FIGURE.replace(b">>", b"/Q 40 0 R >>")), xref_stream=True, size=5))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert doc.row.status == "changed", doc.row.error
    tail = pdf.read_bytes()[len(original):]
    assert tail.split(b"endobj\n")[1].startswith(b"41 0 obj\n<<\n/Type /XRef\n/Size 42\n")
    from pypdf import PdfReader

    # qpdf honours /Size and sees no structure tree in the file, before or after; pypdf (what alt-fill reads
    # with, as Acrobat does) sees every object as it was, the Figure with its /Alt.
    before, after = PdfReader(io.BytesIO(original)), PdfReader(pdf)
    for n in range(1, 10):
        a, b = before.get_object(n), after.get_object(n)
        assert (type(a), sorted(a.keys())) == (type(b), sorted(k for k in b if k != "/Alt" or n != 6)), n
    tree = after.trailer["/Root"]["/StructTreeRoot"].get_object()
    assert tree["/Type"] == "/StructTreeRoot" and tree["/K"].get_object()["/Alt"] == "A cup of coffee."


def test_a_write_that_would_change_the_tree_beyond_alt_is_not_kept(tmp_path, monkeypatch):
    """The read-back compares the whole structure tree: an update whose new object took the tree root's
    number (as one did that trusted /Size) is refused, the file left as it was."""
    monkeypatch.setattr(pdf_update, "next_object_number", lambda reader, raw: 5)
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(build(base(), xref_stream=True, size=5))
    original = pdf.read_bytes()
    doc = fill(pdf, "A cup of coffee.", tmp_path)
    assert doc.row.status == "failed"
    assert doc.row.error == ("the change would not read back (its structure tree would change beyond /Alt "
                             "(at object 5 0))")
    assert pdf.read_bytes() == original
    assert [r.status for _, r in doc.edits] == [FillStatus.FAILED]
