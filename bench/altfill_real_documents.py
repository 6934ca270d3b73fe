"""Alt-fill tried as a publisher would, on real documents: every guarantee checked, one table per format.

Give it a folder of documents (PDF, DOCX, PPTX, ODT, ODP, EPUB, XLSX, ODS, and web pages with the pictures
they show, in any sub-folders). Each format's files are copied to a work folder of their own (the
documents given are never touched) and run through ``capdesk alt-fill`` four ways, each on a fresh copy:

* defaults, then the same command again;
* ``--write all``, then the same command again;
* a review round: ``--dry-run --review-out``, the rows shuffled (csv module), every row that may be
  written given a text of its own (the texts of rows the run marked ``write=yes`` kept, one of them
  edited), ``--review-in``, then the same ``--review-in`` again.

Checked after every run: the exit code; no traceback or internal error in stderr; each changed file's
original identical to its copy in the backup folder (the report's ``backup``; backups go to a state
folder inside the work folder, never the user's); only alt text changed (a PDF's original bytes a
prefix of the new file; a zip's members the same, in the same order, and a changed XML member equal to
the original once alt attributes and title/description elements are taken out of both; a web page the
same once ``alt`` attributes are taken out); ``qpdf --check`` clean on every PDF written; the second
run changing no byte; signed PDFs left as they are by default and named; untagged PDFs left and named,
their pictures listed; the PDF/UA figure rule (every ``/Figure`` with ``/Alt`` or ``/ActualText``) on
tagged PDFs before and after. After the review round every written text is read back from the file by
the picture's identity (``picture_id``), independently of CapDesk (lxml, pikepdf), and compared with
the text its row gave.

    python bench/altfill_real_documents.py DOCS [--work DIR] [--capdesk PATH] [--json FILE]

``--capdesk`` defaults to the ``capdesk`` beside this Python. Needs ``qpdf`` on PATH, and pikepdf and
lxml (CapDesk's own dependencies).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import logging
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

import pikepdf
from lxml import etree
from lxml import html as lxml_html

DOC_EXT = {".pdf", ".docx", ".pptx", ".odt", ".odp", ".epub", ".xlsx", ".ods"}
PAGE_EXT = {".html", ".htm", ".xhtml"}
ERROR_WORDS = re.compile(r"traceback|internal error", re.IGNORECASE)
ALT_ATTR = re.compile(rb'\s(?:alt|descr|title|svg:title|svg:desc|lang|xml:lang)="[^"]*"')
ALT_ELEM = re.compile(rb"<svg:(title|desc)\b[^>]*>.*?</svg:\1>|<svg:(?:title|desc)\b[^>]*/>", re.DOTALL)
SEED = 61
# CapDesk counts no <img> inside these as a picture (capdesk/altfill/html_images.py, TEXT_ONLY), so a
# picture's index leaves them out here too.
TEXT_ONLY = {"pre", "code", "samp", "kbd", "textarea", "title", "xmp", "listing", "plaintext", "noembed",
             "noframes", "iframe", "script", "style"}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pdf_kind(path: Path) -> str:
    try:
        with pikepdf.open(path) as pdf:
            form = pdf.Root.get("/AcroForm")
            fields = list(form.get("/Fields", [])) if form is not None else []
            if any(f.get("/FT") == "/Sig" and "/V" in f for f in fields) or "/Perms" in pdf.Root:
                return "pdf-signed"
            return "pdf-tagged" if "/StructTreeRoot" in pdf.Root else "pdf-untagged"
    except Exception as exc:  # a PDF pikepdf cannot open is still tried; its kind is said
        return f"pdf-unreadable ({type(exc).__name__})"


def gather(docs: Path) -> dict[str, list[Path]]:
    """Each format's files, relative to DOCS; 'html' holds the pages and every non-document file beside
    them (their pictures, style sheets), so that a page is copied with what it shows."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(p for p in docs.rglob("*") if p.is_file()):
        rel, ext = path.relative_to(docs), path.suffix.lower()
        if ext == ".pdf":
            groups[pdf_kind(path)].append(rel)
        elif ext in DOC_EXT:
            groups[ext[1:]].append(rel)
        else:
            groups["html"].append(rel)
    if not any(p.suffix.lower() in PAGE_EXT for p in groups.get("html", [])):
        groups.pop("html", None)
    return dict(groups)


def documents(fmt: str, files: list[Path]) -> list[Path]:
    return [f for f in files if f.suffix.lower() in (PAGE_EXT if fmt == "html" else DOC_EXT)]


def copy_set(docs: Path, files: list[Path], dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(docs / rel, dest / rel)
    return dest


def digests(root: Path, rels: list[Path]) -> dict[Path, str]:
    return {rel: sha(root / rel) for rel in rels}


class Runner:
    def __init__(self, capdesk: str, state: Path) -> None:
        self.capdesk = capdesk
        self.env = dict(os.environ, XDG_STATE_HOME=str(state))

    def __call__(self, args: list[str]) -> tuple[int, str, str]:
        cmd = [self.capdesk, "alt-fill", "-q", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=3600)
        return done.returncode, done.stdout, done.stderr


def strip_alt(data: bytes) -> bytes:
    return ALT_ELEM.sub(b"", ALT_ATTR.sub(b"", data))


def only_alt_changed(before: Path, after: Path) -> str | None:
    """None when the change is alt text alone; else what else changed."""
    a, b = before.read_bytes(), after.read_bytes()
    ext = before.suffix.lower()
    if ext == ".pdf":
        if not b.startswith(a):
            return "original bytes are not a prefix of the new file"
        return pdf_objects_changed(before, after)
    if ext in PAGE_EXT:
        return None if strip_alt(a) == strip_alt(b) else "page differs outside alt attributes"
    with zipfile.ZipFile(before) as za, zipfile.ZipFile(after) as zb:
        na, nb = za.namelist(), zb.namelist()
        if na != nb:
            return f"zip members differ: {sorted(set(na) ^ set(nb)) or 'order'}"
        for name in na:
            x, y = za.read(name), zb.read(name)
            if x == y:
                if raw_member(a, za.getinfo(name)) != raw_member(b, zb.getinfo(name)):
                    return f"{name}: same content, but its stored bytes (header, compression) changed"
                continue
            if not name.endswith((".xml", ".xhtml", ".html", ".htm", ".opf", ".rels")):
                return f"{name} (not XML) changed"
            if strip_alt(x) != strip_alt(y):
                return f"{name} differs outside alt text"
    return None


def raw_member(data: bytes, info: zipfile.ZipInfo) -> bytes:
    """A member as stored: its local header (from the signature on) and its compressed bytes."""
    start = info.header_offset
    name_len, extra_len = int.from_bytes(data[start + 26:start + 28], "little"), int.from_bytes(
        data[start + 28:start + 30], "little")
    return data[start:start + 30 + name_len + extra_len + info.compress_size]


def _unparse(value: object) -> bytes:
    return value.unparse() if isinstance(value, pikepdf.Object) else repr(value).encode()


def pdf_objects_changed(before: Path, after: Path) -> str | None:
    """None when every object of the original reads the same in the new file but for /Alt (and /Lang,
    which CapDesk gives an English text in a document of another language)."""
    with pikepdf.open(before) as old, pikepdf.open(after) as new:
        for obj in old.objects:
            if not isinstance(obj, pikepdf.Object) or not obj.is_indirect:
                continue
            other = new.get_object(obj.objgen)
            if isinstance(obj, pikepdf.Stream):
                if obj.read_raw_bytes() != other.read_raw_bytes():
                    return f"object {obj.objgen} stream changed"
                continue
            if isinstance(obj, pikepdf.Dictionary) and isinstance(other, pikepdf.Dictionary):
                a = {k: _unparse(obj[k]) for k in obj}
                b = {k: _unparse(other[k]) for k in other}
                extra = set(b) - set(a) - {"/Alt", "/Lang"}
                if extra or any(a[k] != b.get(k) for k in a if k not in ("/Alt",)):
                    return f"object {obj.objgen} changed outside /Alt: {sorted(extra) or 'a value'}"
            elif _unparse(obj) != _unparse(other):
                return f"object {obj.objgen} changed"
    return None


def figure_rule(path: Path) -> tuple[int, int]:
    """(Figures, Figures with neither /Alt nor /ActualText) in a tagged PDF's structure tree."""
    total = missing = 0
    seen: set[tuple[int, int]] = set()
    with pikepdf.open(path) as pdf:
        root = pdf.Root.get("/StructTreeRoot")
        stack = [root.get("/K")] if root is not None else []
        while stack:
            node = stack.pop()
            if node is None:
                continue
            if isinstance(node, pikepdf.Array):
                stack.extend(node)
                continue
            if not isinstance(node, pikepdf.Dictionary):
                continue
            if node.is_indirect:
                if node.objgen in seen:
                    continue
                seen.add(node.objgen)
            if node.get("/S") == "/Figure":
                total += 1
                missing += "/Alt" not in node and "/ActualText" not in node
            if "/K" in node:
                stack.append(node.get("/K"))
    return total, missing


def signatures_intact(path: Path) -> int:
    """How many of the PDF's signatures pyHanko finds intact (their signed bytes unchanged); 0 without
    pyHanko."""
    try:
        from pyhanko.pdf_utils.reader import PdfFileReader
        from pyhanko.sign.validation import validate_pdf_signature
        from pyhanko_certvalidator import ValidationContext
    except ImportError:
        return 0
    logging.getLogger("pyhanko").setLevel(logging.CRITICAL)  # its diff analysis logs the alt-text update
    with path.open("rb") as f:
        reader = PdfFileReader(f)
        # the signer's own certificate trusted: what is asked is whether the signed bytes are intact
        return sum(bool(validate_pdf_signature(sig, ValidationContext(trust_roots=[sig.signer_cert])).intact)
                   for sig in reader.embedded_signatures)


def qpdf_ok(path: Path) -> tuple[bool, str]:
    done = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True)
    return done.returncode == 0, (done.stdout + done.stderr).strip()


# Reading a picture's alt text back by its identity, without CapDesk.

def _xml_alt_by_id(data: bytes, tag: str, value: str) -> str | None:
    tree = etree.fromstring(data)
    for el in tree.iter(f"{{*}}{tag}"):
        if el.get("id") == value:
            return el.get("descr") or ""
    return None


def _frame_alt(data: bytes, index: int) -> str | None:
    tree = etree.fromstring(data)
    frames = list(tree.iter("{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}frame"))
    if not 0 < index <= len(frames):
        return None
    svg = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
    texts = [(frames[index - 1].findtext(f"{{{svg}}}{t}") or "") for t in ("title", "desc")]
    return " | ".join(t for t in texts if t)


def _page_alt(data: bytes, index: int, xml: bool) -> str | None:
    tree = etree.fromstring(data, etree.XMLParser(recover=True)) if xml else lxml_html.fromstring(data)
    pics = [el for el in tree.iter() if isinstance(el.tag, str) and etree.QName(el).localname in ("img", "image")
            and not any(isinstance(a.tag, str) and etree.QName(a).localname in TEXT_ONLY for a in el.iterancestors())]
    if not 0 < index <= len(pics):
        return None
    el = pics[index - 1]
    if etree.QName(el).localname == "img":
        return el.get("alt")
    title = [c for c in el if isinstance(c.tag, str) and etree.QName(c).localname == "title"]
    return el.get("aria-label") or (title[0].text if title else None)


def read_alt(document: Path, picture_id: str) -> str | None:
    """The alt text the file holds for ``picture_id`` (None: that identity is not found)."""
    ext = document.suffix.lower()
    if ext == ".pdf":
        m = re.fullmatch(r"structure element (\d+) (\d+) R", picture_id)
        if not m:
            return None
        with pikepdf.open(document) as pdf:
            alt = pdf.get_object(int(m[1]), int(m[2])).get("/Alt")
            return str(alt) if alt is not None else ""
    if ext in PAGE_EXT:
        m = re.fullmatch(r"picture (\d+)", picture_id)
        return _page_alt(document.read_bytes(), int(m[1]), ext == ".xhtml") if m else None
    part, _, rest = picture_id.partition(": ")
    with zipfile.ZipFile(document) as z:
        if part not in z.namelist():
            return None
        data = z.read(part)
    if m := re.fullmatch(r"(docPr|cNvPr) id (\S+)", rest):
        return _xml_alt_by_id(data, m[1], m[2])
    if m := re.fullmatch(r"frame (\d+)(?: \(.*\))?", rest):
        return _frame_alt(data, int(m[1]))
    if m := re.fullmatch(r"picture (\d+)", rest):
        return _page_alt(data, int(m[1]), True)
    return None


class Check:
    """One format's figures, and every failure said in full."""

    def __init__(self, fmt: str, docs: int) -> None:
        self.fmt = fmt
        self.n = Counter(documents=docs)
        self.failures: list[str] = []

    def fail(self, what: str) -> None:
        self.failures.append(what)


def run_and_check(check: Check, run: Runner, label: str, root: Path, rels: list[Path], originals: dict[Path, str],
                  args: list[str], work: Path) -> dict:
    """One run and its repeat, with every per-run guarantee checked."""
    report = work / f"{check.fmt}-{label}.json"
    before = digests(root, rels)
    rc, _, err = run([*args, "--report", str(report), "-r", str(root)])
    after = digests(root, rels)
    cmd = f"capdesk alt-fill -q {' '.join(args)} --report {report.name} -r {root}"
    check.n[f"{label}: exit != 0"] += rc != 0
    if rc != 0:
        check.fail(f"{label}: exit {rc}: {cmd}: {err.strip().splitlines()[-1:] }")
    check.n[f"{label}: internal errors"] += bool(ERROR_WORDS.search(err))
    for name in ("backup missing", "backup differs", "changed outside alt", "second run changed"):
        check.n[f"{label}: {name}"] += 0
    if ERROR_WORDS.search(err):
        check.fail(f"{label}: traceback/internal error: {cmd}:\n{err[-2000:]}")
    data = json.loads(report.read_text()) if report.exists() else {"pages": [], "images": []}
    changed = [rel for rel in rels if before[rel] != after[rel]]
    check.n[f"{label}: files changed"] += len(changed)
    check.n[f"{label}: pictures written"] += sum(1 for i in data.get("images", []) if i.get("written"))
    backups = {Path(p["page"]).resolve(): p.get("backup") for p in data.get("pages", [])}
    for rel in changed:
        backup = backups.get((root / rel).resolve())
        if not backup or not Path(backup).is_file():
            check.n[f"{label}: backup missing"] += 1
            check.fail(f"{label}: {rel}: changed, no backup in the report ({backup!r})")
        elif sha(Path(backup)) != originals[rel]:
            check.n[f"{label}: backup differs"] += 1
            check.fail(f"{label}: {rel}: backup {backup} is not the original")
        else:
            check.n[f"{label}: backups identical"] += 1
            why = only_alt_changed(Path(backup), root / rel)
            if why:
                check.n[f"{label}: changed outside alt"] += 1
                check.fail(f"{label}: {rel}: {why}")
        if rel.suffix.lower() == ".pdf":
            ok, out = qpdf_ok(root / rel)
            check.n[f"{label}: qpdf --check failed"] += not ok
            check.n[f"{label}: qpdf --check run"] += 1
            if not ok:
                check.fail(f"{label}: qpdf --check {rel}: {out[-600:]}")
    # the same command again changes nothing
    rc2, _, err2 = run([*args, "--report", str(work / f"{check.fmt}-{label}-again.json"), "-r", str(root)])
    again = digests(root, rels)
    moved = [str(rel) for rel in rels if again[rel] != after[rel]]
    check.n[f"{label}: second run changed"] += len(moved)
    if moved or rc2 != 0 or ERROR_WORDS.search(err2):
        check.fail(f"{label}: second run: exit {rc2}, changed {moved}: {err2.strip()[-600:]}")
    return {"report": data, "stderr": err, "changed": changed}


def pdf_checks(check: Check, root: Path, rels: list[Path], result: dict) -> None:
    data, err = result["report"], result["stderr"]
    pages = {Path(p["page"]).resolve(): p for p in data.get("pages", [])}
    for rel in rels:
        page = pages.get((root / rel).resolve(), {})
        named = str(rel.name) in err or bool(page.get("note"))
        if check.fmt == "pdf-signed":
            left = rel not in result["changed"]
            check.n["signed: left as they were"] += left
            check.n["signed: named"] += named and "sign" in (err + str(page.get("note"))).lower()
            if not left:
                check.fail(f"signed {rel} changed by a default run")
        if check.fmt == "pdf-untagged":
            listed = [i for i in data.get("images", []) if Path(i["page"]).resolve() == (root / rel).resolve()]
            check.n["untagged: left as they were"] += rel not in result["changed"]
            check.n["untagged: named 'not tagged'"] += "not tagged" in err and rel.name in err
            check.n["untagged: pictures listed"] += len(listed)
            check.n["untagged: documents with pictures listed"] += bool(listed)


def review_round(check: Check, run: Runner, root: Path, rels: list[Path], originals: dict[Path, str],
                 work: Path, extra: tuple[str, ...] = (), label: str = "review") -> None:
    def key(name: str) -> str:
        return name.replace("review", label, 1)

    review = work / f"{check.fmt}-{label}.csv"
    rc, _, err = run([*extra, "--dry-run", "--review-out", str(review), "-r", str(root)])
    check.n[key("review-out: exit != 0")] += rc != 0
    if rc != 0 or ERROR_WORDS.search(err) or not review.exists():
        check.fail(f"review-out: exit {rc}: {err.strip()[-800:]}")
        if not review.exists():
            return
    with review.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames or [], list(reader)
    check.n[key("review rows")] += len(rows)
    rng = random.Random(SEED)
    rng.shuffle(rows)
    expected: dict[tuple[str, str], str] = {}
    edited = False
    for i, row in enumerate(rows):
        if "untagged" in (row.get("reason") or "") or row.get("said_as") == "already in the document":
            row["write"] = "no"
            continue
        if row["text"] and not edited:  # an accepted (or proposed) text, edited by the reviewer
            row["text"] = f"{row['text']} (edited by the reviewer)".strip()
            edited = True
        elif row["write"] != "yes":
            row["text"] = f"Reviewed picture {i}: {row['picture_name'] or row['picture']}."
        row["write"] = "yes"
        expected[(row["document"], row["picture_id"])] = row["text"]
    check.n[key("review rows written yes")] += len(expected)
    check.n[key("review: an accepted text edited")] += edited
    shuffled = work / f"{check.fmt}-{label}-shuffled.csv"
    with shuffled.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    before = digests(root, rels)
    report = work / f"{check.fmt}-{label}-in.json"
    rc, _, err = run([*extra, "--review-in", str(shuffled), "--report", str(report)])
    after = digests(root, rels)
    check.n[key("review-in: exit != 0")] += rc != 0
    check.n[key("review-in: internal errors")] += bool(ERROR_WORDS.search(err))
    for name in ("review-in: backup missing or differs", "review-in: changed outside alt",
                 "review: text not on its picture", "review: picture not found by its id"):
        check.n[key(name)] += 0
    if rc != 0 or ERROR_WORDS.search(err):
        check.fail(f"review-in: exit {rc}: capdesk alt-fill --review-in {shuffled}: {err.strip()[-1500:]}")
    data = json.loads(report.read_text()) if report.exists() else {"pages": []}
    backups = {Path(p["page"]).resolve(): p.get("backup") for p in data.get("pages", [])}
    for rel in rels:
        if before[rel] == after[rel]:
            continue
        check.n[key("review-in: files changed")] += 1
        backup = backups.get((root / rel).resolve())
        if not backup or not Path(backup).is_file() or sha(Path(backup)) != originals[rel]:
            check.n[key("review-in: backup missing or differs")] += 1
            check.fail(f"review-in: {rel}: backup {backup!r} missing or not the original")
        else:
            check.n[key("review-in: backups identical")] += 1
            why = only_alt_changed(Path(backup), root / rel)
            check.n[key("review-in: changed outside alt")] += bool(why)
            if why:
                check.fail(f"review-in: {rel}: {why}")
        if rel.suffix.lower() == ".pdf":
            ok, out = qpdf_ok(root / rel)
            check.n[key("review-in: qpdf --check failed")] += not ok
            if not ok:
                check.fail(f"review-in: qpdf --check {rel}: {out[-600:]}")
    if rc == 2:  # the command itself refused (a usage error): no row was tried
        check.n[key("review rows not tried: --review-in refused")] += len(expected)
        expected = {}
    if check.fmt == "pdf-signed" and not extra:  # a signed PDF is left by --review-in too
        check.n[key("review-in: signed left as they were")] += sum(before[rel] == after[rel] for rel in rels)
        expected = {}
    for (document, picture_id), text in sorted(expected.items()):
        got = read_alt(Path(document), picture_id)
        if got is None:
            check.n[key("review: picture not found by its id")] += 1
            check.fail(f"review: {document}: {picture_id}: no such picture when read back")
        elif got == text or text in got.split(" | "):
            check.n[key("review: text on its own picture")] += 1
        else:
            check.n[key("review: text not on its picture")] += 1
            check.fail(f"review: {document}: {picture_id}: expected {text!r}, file holds {got!r}")
    if check.fmt == "pdf-signed" and extra:
        for rel in rels:
            check.n[f"{label}: signatures intact after"] += signatures_intact(root / rel)
    rc2, _, err2 = run([*extra, "--review-in", str(shuffled)])
    again = digests(root, rels)
    moved = [str(rel) for rel in rels if again[rel] != after[rel]]
    check.n[key("review-in again: files changed")] += len(moved)
    if moved or rc2 != 0:
        check.fail(f"review-in again: exit {rc2}, changed {moved}: {err2.strip()[-600:]}")
    if check.fmt == "pdf-tagged":
        for rel in rels:
            total, missing = figure_rule(root / rel)
            check.n["PDF/UA: Figures after review"] += total
            check.n["PDF/UA: Figures without Alt after review"] += missing


def check_format(fmt: str, files: list[Path], docs: Path, work: Path, run: Runner) -> Check:
    rels = documents(fmt, files)
    check = Check(fmt, len(rels))
    originals = digests(docs, rels)
    if fmt == "pdf-tagged":
        for rel in rels:
            total, missing = figure_rule(docs / rel)
            check.n["PDF/UA: Figures before"] += total
            check.n["PDF/UA: Figures without Alt before"] += missing
    runs = [("default", []), ("write-all", ["--write", "all"])]
    if fmt == "pdf-signed":
        runs.append(("allow-signed", ["--allow-signed"]))
    for label, args in runs:
        root = copy_set(docs, files, work / fmt / label)
        result = run_and_check(check, run, label, root, rels, originals, args, work)
        if label == "default" and fmt.startswith("pdf"):
            pdf_checks(check, root, rels, result)
        if label == "allow-signed":
            for rel in rels:
                check.n["allow-signed: signatures intact after"] += signatures_intact(root / rel)
        if label == "write-all" and fmt == "pdf-tagged":
            for rel in rels:
                total, missing = figure_rule(root / rel)
                check.n["PDF/UA: Figures without Alt after write-all"] += missing
    root = copy_set(docs, files, work / fmt / "review")
    review_round(check, run, root, rels, originals, work)
    if fmt == "pdf-signed":
        root = copy_set(docs, files, work / fmt / "review-allow-signed")
        review_round(check, run, root, rels, originals, work, ("--allow-signed",), "review-allow-signed")
    if any(digests(docs, rels)[rel] != originals[rel] for rel in rels):
        check.fail("a document given was changed")
    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", type=Path)
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one, kept)")
    parser.add_argument("--capdesk", default=str(Path(sys.executable).with_name("capdesk")))
    parser.add_argument("--json", type=Path, help="also write the figures and failures here")
    parser.add_argument("--only", nargs="*", help="only these formats (pdf-tagged, docx, html, ...)")
    args = parser.parse_args()
    docs = args.docs.resolve()
    work = (args.work or Path(tempfile.mkdtemp(prefix="altfill-real-"))).resolve()
    if work == docs or docs in work.parents or work in docs.parents:
        parser.error("the work folder must be outside the documents folder")
    work.mkdir(parents=True, exist_ok=True)
    run = Runner(args.capdesk, work / "state")
    groups = gather(docs)
    checks = []
    for fmt in sorted(groups):
        if args.only and fmt not in args.only:
            continue
        print(f"{fmt}: {len(documents(fmt, groups[fmt]))} documents ...", file=sys.stderr, flush=True)
        checks.append(check_format(fmt, groups[fmt], docs, work, run))
    keys = sorted({k for c in checks for k in c.n}, key=lambda k: (k != "documents", k))
    width = max(len(k) for k in keys)
    print(f"{'':{width}}  " + "  ".join(f"{c.fmt:>12}" for c in checks))
    for key in keys:
        print(f"{key:{width}}  " + "  ".join(f"{c.n.get(key, 0):>12}" for c in checks))
    for c in checks:
        for failure in c.failures[:30]:
            print(f"FAIL {c.fmt}: {failure}")
        if len(c.failures) > 30:
            print(f"FAIL {c.fmt}: ... and {len(c.failures) - 30} more (--json has them all)")
    print(f"work folder: {work}")
    if args.json:
        args.json.write_text(json.dumps({c.fmt: {"figures": dict(c.n), "failures": c.failures} for c in checks},
                                        indent=1))
    return 1 if any(c.failures for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
