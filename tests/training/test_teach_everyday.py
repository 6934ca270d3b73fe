"""Teaching safely on real photos (the shared data sets): a few everyday photos leave other everyday
photos described as they were; aerial photos, which the everyday model cannot describe, prove the
fine-tune better, and it is installed and used."""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
from conftest import SHARED_DATA, needs_shared_data, needs_torch

from capdesk.folders.reading import describe_paths

pytestmark = needs_torch


@needs_shared_data("everyday")
@pytest.mark.slow  # 42 s measured on two busy cores
def test_twenty_everyday_photos_leave_other_everyday_photos_as_they_were(tmp_path, monkeypatch):
    from training.studies.teach_everyday import run

    monkeypatch.setenv("CAPDESK_MODELS", "")  # run() sets it; restored after the test
    res = run(SHARED_DATA / "everyday", n=20, others=40, seed=0, work=tmp_path / "teach", epochs=30)
    assert res["unchanged_share"] >= 0.9, res
    # even had it proved itself, its narrowed gate leaves other everyday photos with the everyday model
    assert res["unchanged_had_it_proved"] >= 0.9 * res["others"], res
    last = res["report"][0]
    assert last.startswith("verdict: ")
    if res["proved"]:
        assert "better than everyday on your pictures" in last and "for automatic use" in last
    else:
        assert "not proved better" in last and "not installed for automatic use" in last
        assert "my-photos" not in res["described_by_after"]  # unproved: never routed to


@needs_shared_data("rsicd")
@pytest.mark.slow  # 248 s measured on two busy cores
def test_aerial_photos_prove_the_fine_tune_and_it_is_installed_and_used(tmp_path):
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.model.bundle import resolve
    from training.data import read_any
    from training.finetune import finetune, report_lines

    ds = read_any(SHARED_DATA / "rsicd")
    train = sorted(ds.split("train"), key=lambda r: str(r.image))
    photos = tmp_path / "aerial"
    photos.mkdir()
    for r in random.Random(0).sample(train, 60):
        os.symlink(r.image.resolve(), photos / r.image.name)
        (photos / r.image.name).with_suffix(".txt").write_text("\n".join(r.raw) + "\n", encoding="utf-8")
    m = finetune(photos, "aerial-60", work=tmp_path / "work", cache=tmp_path / "cache", progress=False)
    ft = m["finetune"]
    assert ft["proved"] is True and ft["automatic"] is True, ft["verdict"]
    assert ft["heldout"]["after"]["CIDEr"] >= ft["heldout"]["before"]["CIDEr"] + 0.1
    assert "installed as 'aerial-60' for automatic use" in report_lines(m)[0]
    test = [str(r.image) for r in sorted(ds.split("test"), key=lambda r: str(r.image))[:20]]
    d = Describer(None, provider="cpu", options=DescribeOptions(ocr="never"),
                  others=[resolve("everyday"), resolve("aerial-60")], fixed=False)
    said = Counter(x.model for x in describe_paths(d, test))
    assert said["aerial-60"] >= 10, said  # automatic routing hands it aerial photos
    # and everyday photos stay with the everyday model
    if (SHARED_DATA / "everyday").exists():
        every = sorted(read_any(SHARED_DATA / "everyday").split("test"), key=lambda r: str(r.image))[:20]
        said = Counter(x.model for x in describe_paths(d, [str(r.image) for r in every]))
        assert said["everyday"] >= 19, said

