"""A folder is described several chunks at a time (``describe_paths``'s ``overlap``: as many as the cores, from
two to four), and every sidecar is the same, byte for byte, as when the pictures are described one at a time;
with the real models and files."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLES
from PIL import Image, ImageOps

from capdesk.describe.describer import Describer
from capdesk.folders.batch import OVERLAP, local_stream, run_batch
from capdesk.sidecars.ledger import Ledger
from capdesk.sidecars.writer import SidecarWriter


def _folder(root: Path) -> Path:
    """Four different pictures, photo-sized: three samples and a mirrored one."""
    root.mkdir()
    for name in ("astronaut.png", "chelsea.png", "coffee.png"):
        img = Image.open(SAMPLES / name).convert("RGB")
        img.thumbnail((224, 224))
        img.save(root / f"{Path(name).stem}.png")
    ImageOps.mirror(img).save(root / "coffee-mirrored.png")
    return root


def _sidecars(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".txt", ".xmp")}


@pytest.mark.slow  # three batches of four pictures with the real models: about 3 s on two cores
def test_overlapped_chunks_write_the_same_sidecars_as_one_picture_at_a_time(tmp_path):
    describer = Describer(None, provider="cpu", beam=1)
    alone, together = _folder(tmp_path / "alone"), _folder(tmp_path / "together")
    one = run_batch([alone], describer, SidecarWriter(ledger=Ledger(tmp_path / "one.db")),
                    describe=local_stream(describer, batch_size=1, overlap=1))
    assert 2 <= OVERLAP <= 4  # what capdesk batch uses; two and four chunks at once below
    two = run_batch([together], describer, SidecarWriter(ledger=Ledger(tmp_path / "two.db")),
                    describe=local_stream(describer, batch_size=2, overlap=2))
    four = _folder(tmp_path / "four")
    run_batch([four], describer, SidecarWriter(ledger=Ledger(tmp_path / "four.db")),
              describe=local_stream(describer, batch_size=1, overlap=4))
    assert [r.status for r in one.rows] == [r.status for r in two.rows] == ["captioned"] * 4
    assert [Path(r.path).name for r in one.rows] == [Path(r.path).name for r in two.rows]
    first, second = _sidecars(alone), _sidecars(together)
    assert len(first) == 8 and first == second == _sidecars(four)


def test_the_chunks_at_once_follow_the_cores():
    from capdesk.folders.batch import chunks_at_once

    assert [chunks_at_once(c) for c in (1, 2, 3, 4, 16, None)] == [2, 2, 3, 4, 4, 2]
