"""A long batch decodes only a little ahead of the model: memory does not grow with the batch."""

from __future__ import annotations

import threading

from PIL import Image

from capdesk.folders.reading import load_in_batches
from capdesk.imageio import load_image


def test_read_ahead_is_bounded_and_order_kept(tmp_path):
    paths = []
    for i in range(60):
        p = tmp_path / f"{i:03d}.png"
        Image.new("RGB", (32, 24), (i * 4, 0, 0)).save(p)
        paths.append(p)
    (tmp_path / "bad.png").write_bytes(b"not a picture")
    paths.insert(7, tmp_path / "bad.png")
    started = []
    lock = threading.Lock()

    def load(p):
        with lock:
            started.append(p)
        return load_image(p)

    batch, seen = 4, []
    for chunk in load_in_batches(paths, load, batch):
        seen.extend(chunk)
        with lock:
            # Decoded or being decoded beyond what the caller has: at most two chunks.
            assert len(started) - len(seen) <= 2 * batch
    assert [p for p, _, _ in seen] == [str(p) for p in paths]
    bad = [err for p, _, err in seen if p.endswith("bad.png")]
    assert bad and bad[0]
    assert all(item is not None for p, item, _ in seen if not p.endswith("bad.png"))
