"""alt-fill as a new user reads it: addresses as written (not percent-encoded), an <img> with no
src said plainly, and no empty progress bar."""

from __future__ import annotations

import re
import shutil

from conftest import SAMPLES, run_cli


def test_alt_fill_reports_read_as_the_page_is_written(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(SAMPLES / "chelsea.png", site / "my cat é.png")
    (site / "page.md").write_text("# Cat\n\n![](<my cat é.png>)\n", encoding="utf-8")
    (site / "page.html").write_text('<html><body>\n<p>x</p>\n<img alt="">\n<img>\n</body></html>\n',
                                    encoding="utf-8")
    r = run_cli("alt-fill", str(site), "--dry-run", "--beam", "1")
    assert r.returncode == 0, r.stderr
    assert f"capdesk: {site / 'page.md'}:3: my cat é.png: needs review" in r.stderr
    assert "%20" not in r.stderr and "%C3" not in r.stderr
    assert f"capdesk: {site / 'page.html'}:4: no image address (src)" in r.stderr and ": : " not in r.stderr
    # an empty bar reads "alt text: 0img [00:00, ?img/s]"; a fast real one may say "1100.00img/s"
    assert not re.search(r"(?<![\d.])0img", r.stderr), r.stderr


def test_alt_fill_with_nothing_to_describe_shows_no_bar(tmp_path):
    (tmp_path / "page.html").write_text("<p>No pictures here.</p>\n", encoding="utf-8")
    r = run_cli("alt-fill", str(tmp_path), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "alt text:" not in r.stderr and "img/s" not in r.stderr, r.stderr
