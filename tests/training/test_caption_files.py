"""Teaching data from a folder: a caption file too large to be one picture's captions (a 2 GB file planted in a
shared folder) is refused with a line naming it, never read whole; the other pictures are taught."""

from __future__ import annotations

import resource
import shutil

import pytest
from conftest import SAMPLES


def test_a_huge_caption_file_is_refused_and_the_rest_read(tmp_path):
    from training.data import read_sidecar_folder

    for name in ("chelsea.png", "coffee.png"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    (tmp_path / "coffee.txt").write_text("a cup of coffee on a saucer\n", encoding="utf-8")
    with open(tmp_path / "chelsea.txt", "wb") as fh:  # 2 GB on paper, nothing on disk (sparse)
        fh.truncate(2 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ds = read_sidecar_folder(tmp_path)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert [r.image.name for r in ds.records] == ["coffee.png"]
    assert any("chelsea.txt" in p and "too large" in p for p in ds.problems), ds.problems
    assert grown_mib < 100


def test_every_training_command_parses_to_its_handler_whatever_its_arguments_are_called():
    """`capdesk train export RUN ...` names its run folder `run`: the command's handler lives elsewhere."""
    from training.cli import COMMANDS, build_parser

    ns = build_parser().parse_args(["export", "runs/mine", "bundles/mine", "--name", "mine"])
    assert ns.run == "runs/mine" and callable(ns.handler)
    for c in COMMANDS:
        if not c.module:
            assert any(c.name in a for a in build_parser().format_help().split())


def test_words_seen_too_rarely_are_named_with_the_count_needed():
    from conftest import torch_available

    if not torch_available():
        pytest.skip("needs torch (pip install -e '.[train]')")
    from training.finetune import report_lines
    from training.vocab import Vocab

    vocab = Vocab(["<pad>", "<start>", "<end>", "<unk>", "a", "in"])
    caps = [["a", "quokka", "in", "grass"], ["a", "pagoda", "in", "grass"], ["a", "dahlia"]]
    assert vocab.too_rare(caps, 2) == {"dahlia": 1, "pagoda": 1, "quokka": 1}
    m = {"name": "mine", "metrics": {"heldout": {"before": {}, "after": {}}},
         "training": {"too_rare": {"quokka": 1, "pagoda": 1}, "min_word_count": 2},
         "finetune": {"heldout": {"images": 0, "before": {}, "after": {}}, "others": {}, "base_model": "everyday",
                      "gate": {"heldout_inside": 0, "heldout": 0}, "install": "named", "automatic": False,
                      "proved": False, "verdict": "not proved"}}
    said = "\n".join(report_lines(m))
    assert "words not learnt, seen in too few of your captions (each needs 2): quokka (1), pagoda (1)" in said
