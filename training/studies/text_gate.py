"""Fit the text gate (``capdesk.describe.text_gate``): which photos the text finder need not look at.

    python training/studies/text_gate.py data OUT.npz --split train --pictures 4000   # features and labels
    python training/studies/text_gate.py data OUT.npz --split val --pictures 1200
    python training/studies/text_gate.py data OUT.npz --split test --pictures 1200
    python training/studies/text_gate.py fit TRAIN.npz VAL.npz TEST.npz [--ship]

``data`` describes the first ``--pictures`` photos of a split of ``../shared/data/everyday`` (by file name) as
``--ocr auto`` did before the gate: the encoder's grid (float16), the finder's count of sure text pixels, and
for the photos it finds text on, the text the reader says. ``fit`` fits, on the train photos (label: the
reader said text), a linear score of each grid cell whose highest cell decides (L2-regularised, both
classes weighted alike; Adam, 300 full-batch steps), picks the L2 weight and the threshold on val (the
highest threshold that still lets through ``--recall`` of the val photos whose text is said, or, where lower,
99% of the train photos' by their out-of-fold scores; the L2 weight that then skips the most), and reports
on test: the photos whose text would be lost, and the share the finder no longer looks at. ``--ship`` writes
text_gate.npz into models/everyday and its hash, threshold and figures into the manifest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "everyday"


def data(out: Path, split: str, pictures: int) -> None:
    from capdesk.describe import ocr
    from capdesk.describe import text_presence as tp
    from capdesk.describe.describer import DescribeOptions, Describer, text_worth_saying

    ocr.use_threads(1)
    d = json.loads((DATA / "dataset_everyday.json").read_text())
    names = sorted(i["filename"] for i in d["images"] if i["split"] == split)[:pictures]
    desc = Describer(options=DescribeOptions(ocr="never"), threads=1)
    eng = desc.primary
    grid, pixels, said, kinds = [], [], [], []
    for k in range(0, len(names), 8):
        ims = [desc.load_picture(DATA / "images" / n) for n in names[k:k + 8]]
        named = eng.encode_named(np.stack([eng.preprocess.to_array(im) for im in ims]))
        grid.append(named["features"].astype(np.float16))
        kinds += [kk[0] if kk else "photo" for kk in desc.picture_kinds(ims, named["features"])]
        for im in ims:
            n = tp.text_pixels(im) or 0
            text = None
            if n >= tp.MIN_PIXELS:
                text = text_worth_saying(ocr.read_text(im, upscale=tp.READ_SIDE / max(1, min(im.size))))
            pixels.append(n)
            said.append(text or "")
    np.savez(out, names=np.array(names), grid=np.concatenate(grid), pixels=np.array(pixels),
             said=np.array(said), kinds=np.array(kinds),
             features_sha256=np.array(eng.bundle.manifest["encoder"].get("features_sha256", "")))
    print(f"{out}: {len(names)} {split} photos, finder fires on {sum(p >= tp.MIN_PIXELS for p in pixels)}, "
          f"text said on {sum(bool(s) for s in said)}")


def fit_cells(grid: np.ndarray, y: np.ndarray, mean: np.ndarray, scale: np.ndarray, l2: float
              ) -> tuple[np.ndarray, float]:
    """Weights and bias of the cell score whose highest cell gives each picture's logit."""
    import torch

    torch.manual_seed(0)
    x = torch.tensor((grid.astype(np.float32) - mean) / scale)
    yt = torch.tensor(y, dtype=torch.float32)
    pos = float(y.mean())
    weight = torch.where(yt > 0, 0.5 / max(pos, 1e-6), 0.5 / max(1 - pos, 1e-6))  # both classes count alike
    w = torch.zeros(x.shape[2], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=0.01)
    for _ in range(300):
        opt.zero_grad()
        z = (x @ w).max(dim=1).values + b
        loss = (weight * torch.nn.functional.binary_cross_entropy_with_logits(z, yt, reduction="none")).mean()
        (loss + l2 * (w * w).sum()).backward()
        opt.step()
    return w.detach().numpy().astype(np.float32), float(b.detach())


def labels(z) -> np.ndarray:
    return np.array([bool(s) for s in z["said"]], dtype=np.float64)


def fit(train: Path, val: Path, test: Path, recall: float, ship: bool) -> None:
    from capdesk.describe.text_gate import TextGate

    tr, va, te = (np.load(p) for p in (train, val, test))
    cells = tr["grid"].astype(np.float32).reshape(-1, tr["grid"].shape[2])
    mean, scale = cells.mean(0), cells.std(0) + 1e-6
    yv, yt = labels(va) > 0, labels(tr)
    folds = np.arange(len(yt)) % 4
    best = None
    for l2 in (0.03, 0.1, 0.3):
        w, b = fit_cells(tr["grid"], yt, mean, scale, l2)
        p = TextGate(mean, scale, w, b, 0.0).probabilities(va["grid"].astype(np.float32))
        val_thr = float(np.sort(p[yv])[int(np.floor((1 - recall) * yv.sum()))])
        # Val holds some fifty photos whose text is said, too few to set a threshold alone: the train photos'
        # out-of-fold scores (four folds) give a second one, at 99% of theirs; the lower of the two is kept.
        oof = np.zeros(len(yt))
        for k in range(4):
            wk, bk = fit_cells(tr["grid"][folds != k], yt[folds != k], mean, scale, l2)
            oof[folds == k] = TextGate(mean, scale, wk, bk, 0.0).probabilities(
                tr["grid"][folds == k].astype(np.float32))
        oof_thr = float(np.sort(oof[yt > 0])[int(np.floor(0.01 * (yt > 0).sum()))])
        thr = min(val_thr, oof_thr)
        skipped = float((p < thr).mean())
        print(f"l2 {l2}: val threshold {val_thr:.4f}, train out-of-fold {oof_thr:.4f}; "
              f"val photos the finder skips {skipped:.1%}")
        if best is None or skipped > best[0]:
            best = (skipped, l2, TextGate(mean, scale, w, b, thr, str(tr["features_sha256"])))
    _, l2, gate = best
    figures: dict = {"l2": l2, "recall_asked_on_val": recall, "train_photos": int(len(tr["said"])),
                     "train_text_said": int(labels(tr).sum())}
    for name, z in (("val", va), ("test", te)):
        let = np.array(gate.may_hold_text(z["grid"].astype(np.float32)))
        y = labels(z) > 0
        fires = z["pixels"] >= 10
        figures[name] = {"photos": int(len(y)), "text_said": int(y.sum()), "text_said_lost": int((y & ~let).sum()),
                         "finder_fired": int(fires.sum()), "finder_fired_skipped": int((fires & ~let).sum()),
                         "finder_skipped_share": round(float((~let).mean()), 4)}
        lost = [f"{n}: {s!r}" for n, s, keep in zip(z["names"], z["said"], let) if s and not keep]
        print(name, json.dumps(figures[name]), "lost:", "; ".join(lost[:12]))
    if ship:
        _ship(gate, figures)


def _ship(gate, figures: dict) -> None:
    bundle = ROOT / "models" / "everyday"
    gate.save(str(bundle / "text_gate.npz"))
    data = (bundle / "text_gate.npz").read_bytes()
    manifest_path = bundle / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"]["text_gate.npz"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    manifest["text_gate"] = {"file": "text_gate.npz", "threshold": round(gate.threshold, 6),
                             "features_sha256": gate.features_sha256, "fitted": figures,
                             "fitted_by": "training/studies/text_gate.py"}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"shipped {bundle / 'text_gate.npz'} ({len(data)} bytes) and updated {manifest_path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("out", type=Path)
    d.add_argument("--split", default="train")
    d.add_argument("--pictures", type=int, default=4000)
    f = sub.add_parser("fit")
    f.add_argument("train", type=Path)
    f.add_argument("val", type=Path)
    f.add_argument("test", type=Path)
    f.add_argument("--recall", type=float, default=1.0)
    f.add_argument("--ship", action="store_true")
    a = ap.parse_args()
    if a.cmd == "data":
        data(a.out, a.split, a.pictures)
    else:
        fit(a.train, a.val, a.test, a.recall, a.ship)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
