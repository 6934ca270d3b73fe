"""`capdesk models list` shows the test figures the README gives (the README is their source of truth):
it showed everyday's CIDEr over Flickr8k and COCO mixed (0.578), a figure no document has."""

from __future__ import annotations

import argparse
import re

from conftest import ROOT

from capdesk.cli.models import cmd_list, figures_line

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_row(label: str) -> list[str]:
    row = next(line for line in README.splitlines() if line.startswith(f"| {label}"))
    return [c.strip() for c in row.strip("|").split("|")]


def test_models_list_shows_the_readme_figures(capsys, monkeypatch):
    monkeypatch.delenv("CAPDESK_MODELS", raising=False)
    assert cmd_list(argparse.Namespace(json=False)) == 0
    lines = {ln.split("\t")[0]: ln for ln in capsys.readouterr().out.splitlines()}
    everyday = lines["everyday"]
    assert everyday.split("\t")[1] == "shipped" and "  " in everyday  # name, source, path, then figures
    for data, label in (("Flickr8k", "`everyday`, Flickr8k test (999 photos)"),
                        ("COCO", "`everyday`, COCO test (240 photos)")):
        cells = _readme_row(label)
        assert f"{data} test BLEU-4 {cells[4]} CIDEr {cells[6]}" in everyday, (everyday, cells)
    # No CIDEr that the README does not give (to the README's own precision).
    for line in (ln for ln in lines.values() if ln.split("\t")[1:2] == ["shipped"]):
        for cider in re.findall(r"CIDEr (\d\.\d+)", line):
            assert cider in README or f"CIDEr {float(cider):.2f}" in README, (cider, line)
    assert "0.578" not in everyday


def test_a_model_without_figures_by_data_set_shows_its_whole_test_split():
    m = {"metrics": {"test": {"beam3": {"BLEU-4": 0.4051, "CIDEr": 2.4243}}}}
    assert figures_line(m) == "test BLEU-4 0.405 CIDEr 2.424"
    assert figures_line({}) == ""


def test_the_window_shows_the_same_figures_as_models_list(default_bundle):
    """The Models dialog reads session.services.metrics_line: it too showed the mixture's CIDEr 0.578."""
    import json

    from capdesk.session.services import metrics_line

    m = json.loads((default_bundle / "manifest.json").read_text(encoding="utf-8"))
    assert metrics_line(m) == figures_line(m)
    assert "Flickr8k test BLEU-4" in metrics_line(m) and "0.578" not in metrics_line(m)
