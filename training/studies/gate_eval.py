"""How well CapDesk knows what it does not know: the domain gate and routing, measured.

On each shipped model's test split: how many images pass their own model's gate and are
routed to it (automatic choice); with the other model named, how many are caught (caption
withheld); and synthetic pictures no model knows (blank, noise, text, screenshots) caught by every gate.
Also the cost of the gate and the tags in milliseconds per image.

    python training/studies/gate_eval.py [--data ../shared/data] [--limit 0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.describe import tags  # noqa: E402
from capdesk.describe.describer import DescribeOptions, Describer  # noqa: E402
from capdesk.folders.reading import describe_paths  # noqa: E402


def test_files(data: Path, name: str, limit: int) -> list[Path]:
    return list(test_sources(data, name, limit))


def test_sources(data: Path, name: str, limit: int) -> dict[Path, str]:
    """Test images and the collection each came from (Flickr8k or COCO for everyday)."""
    ds = json.loads((data / name / f"dataset_{name}.json").read_text())
    files = {data / name / "images" / im["filename"]: ("coco" if im.get("source", "").startswith("coco")
                                                      else im.get("source", name))
             for im in ds["images"] if im["split"] == "test"}
    return dict(list(files.items())[:limit]) if limit else files


def how_said(described, threshold: float) -> str:
    """'fact', 'probably' (unsure caption) or 'withheld' (outside the model's domain)."""
    if described.in_domain is False or described.caption is None:
        return "withheld"
    return "probably" if described.caption.confidence < threshold else "fact"


def references(data: Path) -> dict[str, list[str]]:
    from training.data import read_any

    return {str(r.image): [" ".join(c) for c in r.captions] for r in read_any(data).split("test")}


def said_quality(described: list, said: list[str], refs: dict[str, list[str]]) -> dict:
    """Corpus BLEU-4 and CIDEr of the captions said as fact and of those said as "Probably": whether
    the confidence threshold separates better captions from worse ones."""
    from training.metrics import score

    out = {}
    for kind in ("fact", "probably"):
        hyps = {str(d.path): " ".join(d.caption.words) for d, k in zip(described, said) if k == kind}
        if hyps:
            m = score({h: refs[h] for h in hyps}, hyps)
            out[kind] = {"BLEU-4": round(m["BLEU-4"], 3), "CIDEr": round(m["CIDEr"], 3)}
    return out


def synthetic(out: Path, n: int = 20) -> dict[str, list[Path]]:
    rng = np.random.default_rng(1)
    kinds: dict[str, list[Path]] = {"blank": [], "noise": [], "text": [], "screenshot": []}
    for i in range(n):
        p = out / f"blank{i}.png"
        Image.new("RGB", (320, 240), tuple(int(v) for v in rng.integers(0, 256, 3))).save(p)
        kinds["blank"].append(p)
        p = out / f"noise{i}.png"
        arr = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8) if i % 2 else \
            (rng.normal(128, 40, (240, 320, 1)).clip(0, 255).astype(np.uint8).repeat(3, 2))
        Image.fromarray(arr).save(p)
        kinds["noise"].append(p)
        p = out / f"text{i}.png"
        img = Image.new("RGB", (900, 600), "white" if i % 3 else (30, 30, 30))
        d = ImageDraw.Draw(img)
        for line in range(16):
            d.text((24, 20 + 34 * line), f"Line {line}: the quarterly figures show {rng.integers(100)}% growth",
                   fill="black" if i % 3 else "white", font_size=20 + i % 5)
        img.save(p)
        kinds["text"].append(p)
        p = out / f"screenshot{i}.png"
        screenshot(rng, i).save(p)
        kinds["screenshot"].append(p)
    return kinds


def screenshot(rng: np.random.Generator, i: int) -> Image.Image:
    """A desktop window as a screenshot shows it: title bar, toolbar, sidebar, lines of text, buttons."""
    dark = i % 4 == 0
    bg, fg, chrome = ((40, 42, 46), (220, 220, 220), (60, 63, 68)) if dark else \
        ((250, 250, 250), (30, 30, 30), (225, 228, 232))
    w, h = (1280, 800) if i % 2 else (1024, 768)
    img = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, w, 32), fill=chrome)
    d.text((12, 6), f"Document {i} - Editor", fill=fg, font_size=16)
    for k, colour in enumerate(((237, 106, 94), (245, 191, 79), (98, 197, 84))):
        d.ellipse((w - 90 + 26 * k, 9, w - 76 + 26 * k, 23), fill=colour)
    d.rectangle((0, 32, w, 72), fill=chrome)
    for k in range(8):
        d.rounded_rectangle((12 + 44 * k, 40, 44 + 44 * k, 66), 4, outline=fg)
    side = 200 + int(rng.integers(0, 80))
    d.rectangle((0, 72, side, h), fill=chrome)
    for k in range(14):
        d.text((16, 88 + 30 * k), f"Folder {k + 1}", fill=fg, font_size=15)
    for line in range(20):
        d.text((side + 24, 92 + 30 * line), f"Paragraph {line}: settings, options and {rng.integers(1000)} items",
               fill=fg, font_size=16)
    accent = tuple(int(v) for v in rng.integers(30, 220, 3))
    d.rounded_rectangle((w - 220, h - 56, w - 124, h - 20), 6, fill=accent)
    d.rounded_rectangle((w - 112, h - 56, w - 16, h - 20), 6, outline=fg)
    return img


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--limit", type=int, default=0, help="test images per data set (0: all)")
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args()
    data = Path(ns.data)
    opts = DescribeOptions(ocr="never")
    auto = Describer(None, provider="cpu", beam=1, options=opts)
    fixed = {n: Describer(n, provider="cpu", beam=1, options=opts) for n in ("everyday", "aerial")}
    res: dict = {}
    for name, model, other in (("everyday", "everyday", "aerial"), ("rsicd", "aerial", "everyday")):
        files = test_files(data, name, ns.limit)
        routed = [d for d in describe_paths(auto, files)]
        own = [d for d in describe_paths(fixed[model], files)]
        caught = [d for d in describe_paths(fixed[other], files)]
        res[name] = {
            "images": len(files),
            "routed_to_own_model": round(sum(d.model == model for d in routed) / len(files), 4),
            "in_domain_when_routed": round(sum(bool(d.in_domain) for d in routed) / len(files), 4),
            "passes_own_gate_when_named": round(sum(bool(d.in_domain) for d in own) / len(files), 4),
            f"caught_when_{other}_named": round(sum(d.in_domain is False for d in caught) / len(files), 4),
        }
        if name == "everyday":
            sources = test_sources(data, name, ns.limit)
            refs = references(data / name)
            for group in sorted(set(sources.values())):
                ds_g = [d for d, f in zip(routed, files) if sources[f] == group]
                said = [how_said(d, opts.low_confidence) for d in ds_g]
                res[name][f"said_{group}"] = {"images": len(ds_g), **{k: round(said.count(k) / len(ds_g), 4)
                                                                      for k in ("fact", "probably", "withheld")},
                                              "quality": said_quality(ds_g, said, refs)}
        print(name, res[name], flush=True)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for kind, files in synthetic(Path(tmp)).items():
            ds = list(describe_paths(auto, files))
            res[kind] = {"images": len(files), "out_of_every_domain": round(sum(d.in_domain is False for d in ds)
                                                                          / len(files), 4)}
            print(kind, res[kind], flush=True)
    # cost: the gate (pooling + PPCA score against every model) and the tags (softmax + top-k)
    eng = auto.primary
    batch = np.stack([eng.preprocess.load(p)[1] for p in sorted((ROOT / "resources" / "samples").glob("*.png"))])
    feats, logits = eng.encode(batch)

    def timed(fn, runs=50):
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) / len(batch) * 1000

    gate_ms = timed(lambda: auto.route(feats))
    tags_ms = timed(lambda: [tags.top_tags(lg, eng.labels) for lg in logits])
    enc_ms = timed(lambda: eng.encode(batch), runs=7)
    res["cost_ms_per_image"] = {"gate": round(gate_ms, 3), "tags": round(tags_ms, 3),
                                "encoder_for_comparison": round(enc_ms, 2)}
    print("cost", res["cost_ms_per_image"])
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
