"""capdesk alt-fill: alt text written into the image references of HTML and Markdown pages, on a
small site of real pages with the hard cases, described by the real model."""

from __future__ import annotations

import difflib
import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from capdesk.altfill.fill import FillStatus, resolve_src, run_alt_fill
from capdesk.altfill.html_images import find_html_images, parse_attributes
from capdesk.altfill.md_images import escape as md_escape
from capdesk.altfill.md_images import find_markdown_images, parser
from capdesk.altfill.pagetext import PageError, decode_page
from capdesk.folders.reading import describe_paths

# -- the site ---------------------------------------------------------------------------------------
INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test <img src="img/coffee.png"></title>
<script>document.write('<img src="img/coffee.png">');</script>
<style>/* <img src="img/coffee.png"> */</style></head>
<body>
<!-- <img src="img/coffee.png"> -->
<IMG SRC="img/astronaut%20photo.png">
<img
    class="hero"
    src=img/caf%C3%A9.png
    width=300>
<img src='img/coffee.png' width='10' />
<img src="img/coffee.png" alt="">
<img src="img/coffee.png" alt="A cup of coffee.">
<img src="https://example.com/cat.png">
<img src="http://example.com/cat.png">
<img src="//example.com/cat.png">
<img src="data:image/png;base64,iVBORw0KGgo=">
<img src="img/missing.png">
<img src="img/rocket.jpg">
<pre><img src="img/coffee.png"></pre>
<p><code><img src="img/coffee.png"></code> and <textarea><img src="img/coffee.png"></textarea></p>
<img src="FILE_URL">
<img src="img/astronaut%20photo.png?v=2#top">
</body></html>
"""
GUIDE = """# Guide

![](../img/astronaut%20photo.png)

Inline `![](../img/coffee.png)` code and ![](<../img/café.png>).

```
![](../img/coffee.png)
```

    ![](../img/coffee.png)

![A cup](../img/coffee.png) kept, \\![](../img/coffee.png) escaped
<img src="../img/coffee.png"> and `<img src="../img/coffee.png">`

| a | b |
|---|---|
| ![](../img/coffee.png) | ![][astro] |

<div>
<img src="../img/rocket.jpg">
</div>

[astro]: <../img/astronaut photo.png>
"""
CRLF = "<html>\r\n<body>\r\n  <img src=\"../img/coffee.png\">\r\n</body>\r\n</html>\r\n"
LATIN = b'<html><head><meta charset="iso-8859-1"></head><body>\n<p>Caf\xe9 cr\xe8me</p>\n' \
        b'<img src="../img/caf\xe9.png">\n</body></html>\n'
BROKEN_UTF8 = b"<p>\xff\xfe not UTF-8</p>\n<img src=img/coffee.png>\n"


@pytest.fixture
def site(tmp_path) -> Path:
    d = tmp_path / "site"
    (d / "img").mkdir(parents=True)
    (d / "docs").mkdir()
    shutil.copy(SAMPLES / "astronaut.png", d / "img" / "astronaut photo.png")
    shutil.copy(SAMPLES / "chelsea.png", d / "img" / "café.png")
    shutil.copy(SAMPLES / "rocket.jpg", d / "img" / "rocket.jpg")
    shutil.copy(SAMPLES / "coffee.png", d / "img" / "coffee.png")
    file_url = (d / "img" / "café.png").as_uri()
    (d / "index.html").write_bytes(INDEX.replace("FILE_URL", file_url).encode())
    (d / "odd.html").write_bytes(BROKEN_UTF8)
    (d / "docs" / "guide.md").write_bytes(GUIDE.encode())
    (d / "docs" / "crlf.html").write_bytes(CRLF.encode())
    (d / "docs" / "latin.html").write_bytes(LATIN)
    (d / "docs" / "notes.txt").write_text("not a page <img src=x.png>")
    return d


@pytest.fixture(scope="module")
def describer():
    from capdesk.describe.describer import DescribeOptions, Describer

    return Describer(provider="cpu", options=DescribeOptions(ocr="never"))


@pytest.fixture(scope="module")
def alts(describer) -> dict[str, str]:
    """Each sample's description, asked for on its own: what alt-fill must write."""
    names = ("astronaut.png", "chelsea.png", "rocket.jpg", "coffee.png")
    got = {n: d.description for n, d in zip(names, describe_paths(describer, [SAMPLES / n for n in names]))}
    assert got["rocket.jpg"] == "" and all(got[n] for n in names if n != "rocket.jpg"), got
    return got


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def insertions(old: bytes, new: bytes) -> list[bytes]:
    """What ``new`` adds to ``old``; fails unless ``old`` is ``new`` with those pieces taken out."""
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    assert all(op in ("equal", "insert") for op, *_ in ops), ops
    return [new[j1:j2] for op, _, _, j1, j2 in ops if op == "insert"]


def expected_pages(site: Path, alts: dict[str, str]) -> dict[str, bytes]:
    """Each page as it must be after the run (the site as the fixture made it, plus the alt text)."""
    a, cat, cup = (html.escape(alts[n], quote=True) for n in ("astronaut.png", "chelsea.png", "coffee.png"))
    index = INDEX.replace("FILE_URL", (site / "img" / "café.png").as_uri())
    url = (site / "img" / "café.png").as_uri()
    for old, new in [
        ('<IMG SRC="img/astronaut%20photo.png">', f'<IMG SRC="img/astronaut%20photo.png" ALT="{a}">'),
        ("    src=img/caf%C3%A9.png\n", f'    src=img/caf%C3%A9.png alt="{cat}"\n'),
        ("<img src='img/coffee.png' width='10' />", f"<img src='img/coffee.png' alt='{cup}' width='10' />"),
        (f'<img src="{url}">', f'<img src="{url}" alt="{cat}">'),
        ('<img src="img/astronaut%20photo.png?v=2#top">', f'<img src="img/astronaut%20photo.png?v=2#top" alt="{a}">'),
    ]:
        assert index.count(old) == 1
        index = index.replace(old, new)
    a_md, cat_md, cup_md = (alts[n] for n in ("astronaut.png", "chelsea.png", "coffee.png"))
    assert md_escape(a_md + cat_md + cup_md) == a_md + cat_md + cup_md  # plain words: written as they are
    guide = GUIDE
    for old, new in [
        ("\n![](../img/astronaut%20photo.png)\n", f"\n![{a_md}](../img/astronaut%20photo.png)\n"),
        ("and ![](<../img/café.png>).", f"and ![{cat_md}](<../img/café.png>)."),
        ('\n<img src="../img/coffee.png"> and', f'\n<img src="../img/coffee.png" alt="{cup}"> and'),
        ("| ![](../img/coffee.png) | ![][astro] |", f"| ![{cup_md}](../img/coffee.png) | ![{a_md}][astro] |"),
    ]:
        assert guide.count(old) == 1
        guide = guide.replace(old, new)
    return {
        "index.html": index.encode(),
        "odd.html": BROKEN_UTF8.replace(b"<img src=img/coffee.png>", f'<img src=img/coffee.png alt="{cup}">'.encode()),
        "docs/guide.md": guide.encode(),
        "docs/crlf.html": CRLF.replace('png">', f'png" alt="{cup}">').encode(),
        "docs/latin.html": LATIN.replace(b'\xe9.png">', f'\xe9.png" alt="{cat}">'.encode("latin-1")),
    }


# -- finding the images -------------------------------------------------------------------------------
def test_html_finder_sees_only_real_images_at_their_exact_place(site):
    text = INDEX.replace("FILE_URL", "file:///x.png")
    found = find_html_images(text)
    for f in found:
        assert text[f.start:f.start + len(f.source)] == f.source and f.source.lower().startswith("<img")
        assert text.count("\n", 0, f.start) + 1 == f.line
    assert [(f.line, f.src, f.alt) for f in found] == [
        (7, "img/astronaut%20photo.png", None), (8, "img/caf%C3%A9.png", None), (12, "img/coffee.png", None),
        (13, "img/coffee.png", ""), (14, "img/coffee.png", "A cup of coffee."),
        (15, "https://example.com/cat.png", None), (16, "http://example.com/cat.png", None),
        (17, "//example.com/cat.png", None), (18, "data:image/png;base64,iVBORw0KGgo=", None),
        (19, "img/missing.png", None), (20, "img/rocket.jpg", None), (23, "file:///x.png", None),
        (24, "img/astronaut%20photo.png?v=2#top", None)]  # none in title, script, style, comment, pre, code, textarea


def test_attributes_are_read_as_a_browser_reads_them():
    tag = "<img\tALT SRC=a&amp;b.png/ src=second.png data-x='1>2' alt=\"x\">"
    attrs = parse_attributes(tag)
    assert [a.name for a in attrs] == ["alt", "src", "src", "data-x", "alt"]
    (f,) = find_html_images(tag)
    assert f.src == "a&b.png/" and f.alt == "" and f.decorative == 'alt=""'  # the first of a name counts
    assert f.insertion("A & B") == '="A &amp; B"' and tag[f.at - 3:f.at] == "ALT"
    (g,) = find_html_images("<img alt= src=a.png>")  # alt's value is "src=a.png": there is no src
    assert g.alt == "src=a.png" and g.src is None
    (h,) = find_html_images("<img src=a.png alt=>")
    assert h.alt == "" and h.insertion("x") == '"x"'
    (r,) = find_html_images('<img src="a.png" role="presentation" aria-label="Logo">')
    assert r.decorative == 'role="presentation"' and r.labelled == "aria-label"


def test_html_alt_text_reads_back_exactly():
    from html.parser import HTMLParser

    alt = 'He said "hi" & <left> it\'s ok'

    class P(HTMLParser):
        def handle_starttag(self, name, attrs):
            self.seen.append(dict(attrs))

    for tag in ('<img src="a.png">', "<img src='a.png'>", "<img src=a.png>", '<img src="a.png" alt="">',
                "<img src=a.png alt>"):
        (f,) = find_html_images(tag)
        cut = f.at - f.start
        new = tag[:cut] + f.insertion(alt) + tag[cut:]
        p = P()
        p.seen = []
        p.feed(new)
        assert p.seen == [{"src": "a.png", "alt": alt}], new


def test_markdown_finder_skips_code_and_escapes_and_places_each_image(site):
    found = find_markdown_images(GUIDE)
    for f in found:
        assert GUIDE[f.start:f.start + len(f.source)] == f.source
    got = [(f.line, f.syntax, f.src, f.alt) for f in found]
    assert got == [
        (3, "markdown", "../img/astronaut%20photo.png", None),
        (5, "markdown", "../img/caf%C3%A9.png", None),
        (13, "markdown", "../img/coffee.png", "A cup"),
        (14, "html", "../img/coffee.png", None),
        (18, "markdown", "../img/coffee.png", None),
        (18, "markdown", "../img/astronaut%20photo.png", None),
        (21, "html", "../img/rocket.jpg", None)]
    assert [f.source for f in found if f.line == 18] == ["![](../img/coffee.png)", "![][astro]"]


def test_markdown_gallery_and_titles_over_two_lines_are_placed():
    gallery = "".join(f"![](p{i:04d}.jpg)\n" for i in range(1000))  # one paragraph of a thousand images
    found = find_markdown_images(gallery)
    assert [f.at for f in found] == [gallery.index(f"![](p{i:04d}") + 2 for i in range(1000)]
    (f, g) = find_markdown_images('Look ![](a.png "two\nlines") and ![](b.png)\n')
    assert f.source == '![](a.png "two\nlines")' and (f.at, g.at) == (7, 34)


def test_markdown_images_inside_html_comments_are_left_alone():
    page = "Text <!-- ![](old.png) --> and ![](new.png).\n\n<!--\n![](block.png)\n<img src=b.png>\n-->\n"
    assert [(f.src, f.at > 0) for f in find_markdown_images(page)] == [("new.png", True)]


def test_markdown_alt_text_reads_back_exactly():
    alt = r"A [b] *c* _d_ `e` <f> & g | h ~ i \ j"
    md = parser()
    page = f"| x |\n|---|\n| ![{md_escape(alt)}](a.png) |\n"
    rendered = md.render(page)
    assert f'alt="{html.escape(alt, quote=True)}"' in rendered and rendered.count("<img") == 1
    (f,) = find_markdown_images("See ![](<a b.png> \"title (1)\") here")
    assert f.source == '![](<a b.png> "title (1)")' and f.insertion(alt) == md_escape(alt)


def test_an_image_markdown_it_sees_that_cannot_be_placed_is_listed_not_guessed():
    # markdown-it sees one image; the link address that looks like an image makes the search see two.
    found = find_markdown_images("[x](![](b.png)) ![](a.png)\n")
    assert [(f.src, f.at, bool(f.problem)) for f in found] == [("a.png", -1, True)]
    assert [(f.src, f.at) for f in find_markdown_images('<span title="![](b.png)">x</span> ![](a.png)\n')] == \
        [("a.png", 36)]


def test_page_bytes_round_trip_in_every_encoding():
    for raw, enc in [(b"\xef\xbb\xbf<p>caf\xc3\xa9</p><img src=a>", "utf-8"),
                     ("\ufeff<p>café</p><img src=a>".encode("utf-16-le"), "utf-16-le"),
                     (b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>\xe9\x80',
                      "latin-1"),
                     (b"<p>\xff\xfe\xc3</p>", "utf-8")]:
        page = decode_page(raw, html=True)
        assert page.encoding == enc
        at = len(page.text)
        data = page.with_insertions([(at, " é’")])
        assert data.startswith(raw)
        if enc == "latin-1":  # what Latin-1 cannot hold becomes a character reference
            assert data[len(raw):] == b" \xe9&#8217;"
    with pytest.raises(PageError):
        decode_page(codecs_bom_utf16_odd(), html=True)


def codecs_bom_utf16_odd() -> bytes:
    return b"\xff\xfe<\x00p\x00>"  # an odd number of bytes after the mark


def test_addresses_resolve_to_local_files_or_say_why_not(tmp_path):
    page, root = tmp_path / "docs" / "p.html", tmp_path
    assert resolve_src("img/a%20b.png?x=1#y", page, root) == (tmp_path / "docs" / "img" / "a b.png", None)
    assert resolve_src("caf%C3%A9.png", page, root)[0].name == "café.png"
    assert resolve_src("caf%E9.png", page, root)[0].name == os.fsdecode(b"caf\xe9.png")
    assert resolve_src("/img/a.png", page, root)[0] == tmp_path / "img" / "a.png"
    assert resolve_src("file:///srv/a%20b.png", page, root)[0] == Path("/srv/a b.png")
    for src, why in [("https://x/a.png", "remote"), ("//x/a.png", "remote"), ("data:image/png;base64,AA", "data:"),
                     ("javascript:void(0)", "not a local file"), ("  ", "no image address"),
                     ("file://host/a.png", "another machine")]:
        assert why in resolve_src(src, page, root)[1]


# -- filling a site ----------------------------------------------------------------------------------
def test_fills_the_right_images_and_nothing_else(site, describer, alts, tmp_path):
    before = snapshot(site)
    backups = tmp_path / "backups"
    calls: list[list[str]] = []
    real = describer.describe_chunk

    def spy(chunk, *args, **kw):
        calls.append([Path(p).name for p, _, _ in chunk])
        return real(chunk, *args, **kw)

    describer.describe_chunk = spy
    try:
        result = run_alt_fill([site], describer, recursive=True, backup_dir=backups, write="all")
    finally:
        del describer.describe_chunk
    # Each picture once, though several pages show it; the missing one is never asked for.
    assert sorted(n for c in calls for n in c) == ["astronaut photo.png", "café.png", "coffee.png", "rocket.jpg"]
    expected = expected_pages(site, alts)
    after = snapshot(site)
    assert set(after) == set(before)  # no file added to the site, none removed
    for name, (data, _) in after.items():
        if name in expected:
            assert data == expected[name], name
            assert insertions(before[name][0], data)
        else:
            assert (data, after[name][1]) == before[name], name
    for name in expected:  # the originals are kept, byte for byte
        keep = backups / (site / name).resolve().relative_to("/")
        assert keep.read_bytes() == before[name][0]

    rows = {(Path(r.page).name, r.line): r for r in result.images}
    status = {k: str(r.status) for k, r in rows.items()}
    assert {k[1] for k, s in status.items() if k[0] == "index.html" and s == "filled"} == {7, 8, 12, 23, 24}
    assert status[("index.html", 13)] == status[("index.html", 14)] == "kept"
    assert [status[("index.html", n)] for n in (15, 16, 17, 18)] == ["skipped"] * 4
    assert "nothing is fetched" in rows[("index.html", 15)].note and "data:" in rows[("index.html", 18)].note
    assert status[("index.html", 19)] == "failed" and rows[("index.html", 19)].error == "no such picture file"
    rocket = rows[("index.html", 20)]
    assert rocket.status == FillStatus.UNDESCRIBED and rocket.needs_review and rocket.reason and not rocket.alt_text
    assert rows[("guide.md", 21)].status == FillStatus.UNDESCRIBED
    cat = rows[("index.html", 8)]
    assert cat.alt_text == alts["chelsea.png"] and cat.needs_review and cat.in_domain is False
    assert cat.before.endswith("width=300>") and cat.after == cat.before.replace(
        "caf%C3%A9.png", f'caf%C3%A9.png alt="{alts["chelsea.png"]}"')
    astro = rows[("index.html", 7)]
    assert astro.confidence is not None and astro.in_domain and astro.written
    assert result.failed and not result.interrupted
    assert {Path(p.page).name: p.status for p in result.pages} == {
        "index.html": "changed", "odd.html": "changed", "guide.md": "changed", "crlf.html": "changed",
        "latin.html": "changed"}

    # A second run changes nothing: every byte and every modification time stays.
    again = run_alt_fill([site], describer, recursive=True, backup_dir=tmp_path / "backups2")
    assert snapshot(site) == after and not (tmp_path / "backups2").exists()
    assert {p.status for p in again.pages} == {"unchanged"}
    assert not [r for r in again.images if r.status == FillStatus.FILLED]


def test_decorative_images_are_filled_only_when_asked(site, describer, alts):
    page = site / "index.html"
    result = run_alt_fill([page], describer, include_empty=True, backup_dir=None, write="all")
    line13 = next(r for r in result.images if r.line == 13)
    assert line13.status == FillStatus.FILLED
    assert f'<img src="img/coffee.png" alt="{alts["coffee.png"]}">' in page.read_text(encoding="utf-8")
    assert 'alt="A cup of coffee."' in page.read_text(encoding="utf-8")


def test_folder_without_recursion_reads_only_its_own_pages(site, describer):
    result = run_alt_fill([site], describer, dry_run=True)
    assert sorted(Path(p.page).name for p in result.pages) == ["index.html", "odd.html"]


def test_a_page_edited_during_the_run_is_not_overwritten(site, describer, tmp_path):
    page = site / "docs" / "crlf.html"
    theirs = b"<p>edited meanwhile</p>\n"

    def someone_saves(p: Path) -> None:
        assert p == page
        page.write_bytes(theirs)

    result = run_alt_fill([page], describer, backup_dir=tmp_path / "b", before_write=someone_saves,
                          allow_roots=[site], write="all")  # its picture is in ../img, outside the page's folder
    assert page.read_bytes() == theirs
    (row,) = result.pages
    assert row.status == "failed" and "changed while CapDesk was working" in row.error
    (img,) = result.images
    assert img.status == FillStatus.FAILED and not img.written and result.failed
    assert not [p for p in page.parent.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_cancel_writes_what_was_described(site, describer):
    pages = [site / "index.html"]
    stop = {"now": False}

    def progress(done, total, name):
        stop["now"] = True  # cancel after the first batch of one picture

    result = run_alt_fill(pages, describer, progress=progress, cancelled=lambda: stop["now"], batch_size=1, write="all")
    filled = [r for r in result.images if r.status == FillStatus.FILLED]
    assert result.interrupted and filled and all(r.written for r in filled)
    assert len({r.file for r in filled}) == 1
    assert any(r.note == "not described: the run was stopped first" for r in result.images)


# -- the command line --------------------------------------------------------------------------------
@pytest.mark.slow  # 1.3 s measured on two busy cores
def test_cli_dry_run_changes_nothing_and_prints_the_diff(site, tmp_path, alts):
    before = snapshot(site)
    state = Path(os.environ["XDG_STATE_HOME"])
    r = subprocess.run([sys.executable, "-m", "capdesk", "alt-fill", str(site), "-r", "--dry-run", "-q", "--ocr",
                        "never", "--report", str(tmp_path / "r.json"), "--write", "all"],
                       capture_output=True, timeout=300)
    assert r.returncode == 1, r.stderr  # the missing picture
    assert snapshot(site) == before
    assert not (state / "capdesk" / "alt-fill-backups").exists()
    index = str(site / "index.html").encode()
    assert b"--- " + index + b"\n+++ " + index + b"\n" in r.stdout
    assert b'-<IMG SRC="img/astronaut%20photo.png">\n+<IMG SRC="img/astronaut%20photo.png" ALT="' in r.stdout
    assert b"+| ![" in r.stdout and b"dry run: nothing written" in r.stderr
    # Each page's diff is in its own bytes: the CRLF page's lines end in CRLF, the Latin-1 page's é is one byte.
    assert b'+  <img src="../img/coffee.png" alt="' in r.stdout and b'">\r\n' in r.stdout
    assert b" <p>Caf\xe9 cr\xe8me</p>\n" in r.stdout and b" <p>\xff\xfe not UTF-8</p>\n" in r.stdout
    # The diff applies: patch turns a copy of the site into what a real run writes.
    if shutil.which("patch"):
        copy = tmp_path / "copy"
        shutil.copytree(site, copy)
        diff = r.stdout
        for mark in (b"--- ", b"+++ "):  # the headers only: the file: URL in index.html names the site
            diff = diff.replace(mark + str(site).encode(), mark + str(copy).encode())
        subprocess.run(["patch", "-p0", "-s", "-d", "/"], input=diff, check=True, capture_output=True)
        expected = expected_pages(site, alts)
        assert {n: (copy / n).read_bytes() for n in expected} == expected
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["dry_run"] is True and report["counts"]["filled"] == 13


@pytest.mark.slow  # 3 s measured on two busy cores
def test_cli_fills_reports_and_exits_as_batch_does(site, tmp_path, alts):
    report = tmp_path / "report.json"
    r = run_cli("alt-fill", str(site / "docs"), "-r", "-q", "--ocr", "never", "--report", str(report),
                "--allow-root", str(site), "--write", "all")  # the pictures of docs/ are in ../img
    assert r.returncode == 0, r.stderr  # everything in docs/ exists
    lines = r.stdout.splitlines()
    # addresses are shown as a person reads them (decoded), whichever way the page wrote them
    assert f"{site / 'docs' / 'guide.md'}:3\t../img/astronaut photo.png\t{alts['astronaut.png']}" in lines
    assert "needs review" in r.stderr and "originals of the 3 changed page(s)" in r.stderr
    data = json.loads(report.read_text())
    assert set(data) == {"dry_run", "counts", "interrupted", "seconds", "pages", "images"}
    row = next(i for i in data["images"] if i["page"].endswith("crlf.html"))
    assert {"page", "line", "column", "src", "status", "file", "alt_text", "confidence", "needs_review",
            "in_domain", "model", "reason", "note", "error", "syntax", "before", "after", "written"} <= set(row)
    assert (row["line"], row["column"], row["status"], row["written"]) == (3, 3, "filled", True)
    assert row["after"] == f'<img src="../img/coffee.png" alt="{alts["coffee.png"]}">' and row["needs_review"]
    assert {p["encoding"] for p in data["pages"]} == {"utf-8", "latin-1"}
    assert (site / "docs" / "crlf.html").read_bytes().count(b"\r\n") == CRLF.count("\r\n")
    html_report = tmp_path / "report.html"
    r2 = run_cli("alt-fill", str(site / "index.html"), "-q", "--ocr", "never", "--report", str(html_report))
    assert r2.returncode == 1  # img/missing.png
    page = html_report.read_text()
    assert "Needs review" in page and "no such picture file" in page and "index.html</a>, line 19" in page
    assert run_cli("alt-fill", str(site), "--report", "r.txt").returncode == 2
    r3 = run_cli("alt-fill", str(tmp_path / "nowhere.html"), "-q")
    assert r3.returncode == 1 and "no such file or folder" in r3.stderr
