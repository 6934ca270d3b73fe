"""Finding the pictures of a book and of a long page, with the text around each: medians of 3.

A 333-picture EPUB (37 chapters of 9 pictures in paragraphs of text, figures with captions) and a
5,000-picture web page (a paragraph of text around each picture), scanned as alt-fill scans them,
then the whole dry run (the pictures are one photo, described once, so the run is the reading).
Run it in two checkouts to compare them:

    python bench/altfill_context.py [--tree CHECKOUT]
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

TREE = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv else Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TREE))

from capdesk.altfill.documents import scan_document  # noqa: E402
from capdesk.altfill.fill import run_alt_fill, scan_page  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples"
TEXT = ("The morning light fell across the table where the cups stood, and the talk turned to the long road "
        "ahead &amp; the weather. ")


def book(path: Path, chapters: int = 37, per: int = 9) -> Path:
    xhtml = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head>'
             "<title>Chapter</title></head><body><h1>Chapter</h1>{}</body></html>")
    body = "".join(f"<p>{TEXT * 3}<em>{TEXT}</em></p>"
                   + (f'<figure><img src="../images/coffee.png"/><figcaption>Figure {i}: a cup</figcaption></figure>'
                      if i % 3 else f'<p>{TEXT}<img src="../images/coffee.png"/> {TEXT}</p>') for i in range(per))
    items = "".join(f'<item id="c{i}" href="text/c{i}.xhtml" media-type="application/xhtml+xml"/>'
                    for i in range(chapters))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(chapters))
    opf = ('<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">b'
           '</dc:identifier><dc:title>Book</dc:title><dc:language>en</dc:language></metadata><manifest>'
           f'{items}<item id="p" href="images/coffee.png" media-type="image/png"/></manifest><spine>{spine}</spine>'
           "</package>")
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                 'container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/'
                 'oebps-package+xml"/></rootfiles></container>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("OEBPS/content.opf", opf)
        for i in range(chapters):
            z.writestr(f"OEBPS/text/c{i}.xhtml", xhtml.format(body))
        z.writestr("OEBPS/images/coffee.png", (SAMPLES / "coffee.png").read_bytes())
    return path


def page(path: Path, n: int = 5000) -> Path:
    path.write_text('<!DOCTYPE html><html lang="en"><head><title>Page</title></head><body>'
                    + "".join(f'<p>{TEXT}<img src="coffee.png"> {TEXT}</p>' for _ in range(n)) + "</body></html>")
    return path


def median(run, times: int = 3) -> str:
    """Wall and CPU seconds, medians of ``times`` runs (CPU time moves less on a busy machine)."""
    wall, cpu = [], []
    for _ in range(times):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return f"{statistics.median(wall):6.3f} s ({statistics.median(cpu):6.3f} s CPU)"


def main() -> None:
    from capdesk.describe.describer import DescribeOptions, Describer

    work = Path(tempfile.mkdtemp(prefix="capdesk-bench-"))
    try:
        shutil.copy(SAMPLES / "coffee.png", work)
        epub, html = book(work / "book.epub"), page(work / "page.html")
        assert scan_document(epub).row.images == 333 and len(scan_page(html).found) == 5000
        describer = Describer(provider="cpu", options=DescribeOptions(ocr="never"))
        print(f"checkout {TREE}")
        print(f"scan, 333-picture book:    {median(lambda: scan_document(epub))}")
        print(f"scan, 5,000-picture page:  {median(lambda: scan_page(html))}")
        dry = {"dry_run": True, "write": "all"}  # as before the library wrote facts by default
        print(f"dry run, book:             {median(lambda: run_alt_fill([epub], describer, **dry))}")
        print(f"dry run, page:             {median(lambda: run_alt_fill([html], describer, **dry))}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
