"""`capdesk train ... --help` helps: whole sentences, every option explained."""

from __future__ import annotations

import pytest
from conftest import needs_torch, run_cli
from test_first_day_cli import _option_help


@needs_torch
def test_finetune_help_is_whole():
    r = run_cli("train", "finetune", "--help")
    assert r.returncode == 0, r.stderr
    description = " ".join(r.stdout.split("\n\n")[1].split())
    assert description.endswith(".") and "new words" in description
    assert _option_help(r.stdout, "--lr LR").startswith("learning rate")
    assert _option_help(r.stdout, "--image-root IMAGE_ROOT")


@needs_torch
@pytest.mark.parametrize("command", ["release", "shrink"])
def test_image_root_has_help(command):
    r = run_cli("train", command, "--help")
    assert r.returncode == 0, r.stderr
    assert _option_help(r.stdout, "--image-root IMAGE_ROOT")
