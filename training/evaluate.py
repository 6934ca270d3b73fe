"""Test-split metrics of a model bundle, run through the app's own engine (ONNX Runtime),
so the figures are those of what users get; plus a qualitative sheet of attention maps."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from capdesk.imageio import ImageError, load_image
from capdesk.model.attention import strip
from capdesk.model.engine import Caption, Engine
from training.chair import chair
from training.data import read_any
from training.metrics import score


def readable_batches(engine: Engine, records, batch: int = 32
                     ) -> Iterator[tuple[np.ndarray | None, list, list[str]]]:
    """(images [B,3,H,W] or None, the records they are, problems) a batch of ``records`` at a time,
    loaded as ``engine`` takes them; an unreadable record is a problem, not an image."""
    for s in range(0, len(records), batch):
        arrs, kept, problems = [], [], []
        for r in records[s:s + batch]:
            try:
                arrs.append(engine.preprocess.load(r.image)[1])
                kept.append(r)
            except ImageError as exc:
                problems.append(str(exc))
        yield (np.stack(arrs) if arrs else None), kept, problems


def encode_records(engine: Engine, records, batch: int = 32, concepts: list | None = None):
    """What the decoder takes (``Engine.decoder_input``) for each readable record; unreadable ones
    are reported and skipped. ``concepts``: a list that receives the concept head's probabilities
    for each kept record (when the bundle has a head), for grounded decoding."""
    feats, kept, problems = [], [], []
    for images, recs, bad in readable_batches(engine, records, batch):
        problems += bad
        if recs:
            named = engine.encode_named(images)
            feats.append(engine.decoder_input(named))
            if concepts is not None and engine.concepts is not None:
                concepts.extend(engine.concepts.probabilities(named["features"]))
            kept += recs
    return (np.concatenate(feats) if feats else np.zeros((0, 1, 1), np.float32)), kept, problems


def grounding_bias(engine: Engine, probs) -> np.ndarray | None:
    """The beam's penalties for these concept probabilities, as the app applies them (None: no grounding)."""
    if not probs or engine.concepts is None or engine.concepts.grounding is None:
        return None
    from capdesk.describe.grounding import bias_matrix, token_concepts

    g = engine.concepts.grounding
    return bias_matrix(token_concepts(engine.vocab, engine.concepts.words), np.stack(probs), g.alpha, g.tau)


def decode_all(engine: Engine, feats: np.ndarray, beam: int, batch: int = 32, bias: np.ndarray | None = None,
               **kw) -> list[Caption]:
    saved = (engine.length_alpha, engine.block_ngram)
    engine.length_alpha = kw.get("length_alpha", engine.length_alpha)
    engine.block_ngram = kw.get("block_ngram", engine.block_ngram)
    try:
        out: list[Caption] = []
        for s in range(0, len(feats), batch):
            out.extend(engine.decode(feats[s:s + batch], beam, bias=None if bias is None else bias[s:s + batch]))
        return out
    finally:
        engine.length_alpha, engine.block_ngram = saved


def source_group(source: str) -> str:
    """Flickr8k photos apart from COCO ones (COCO val and train), so Flickr8k figures compare with
    published Flickr8k results."""
    return "coco" if source.startswith("coco") else source


def scores_by_source(refs: dict[str, list[str]], hyps: dict[str, str], records,
                     meteor: bool = False) -> dict[str, dict]:
    """Figures for each collection of the records (Flickr8k, COCO), with its image count; nothing
    when the records come from one collection only."""
    group = {str(r.image): source_group(r.source) for r in records if r.source}
    groups = sorted(set(group.values()))
    if len(groups) < 2:
        return {}
    out = {}
    for g in groups:
        sub = {k: v for k, v in hyps.items() if group.get(k) == g}
        out[g] = {"images": len(sub), **score({k: refs[k] for k in sub}, sub, meteor=meteor),
                  **chair(sub, {k: refs[k] for k in sub})}
    return out


def evaluate_bundle(bundle: Path, data: Path, split: str = "test", beams: list[int] = (1, 3, 5),
                    cache: str = "", sheet: Path | None = None, meteor: bool = False,
                    limit: int = 0, decoding: dict | None = None, image_root: Path | None = None,
                    said_as: bool = False) -> dict:
    engine = Engine(str(bundle), provider="cpu")
    ds = read_any(Path(data), image_root)
    records = ds.split(split)
    if limit:
        records = records[:limit]
    if not records:
        raise ValueError(f"{data}: no images in split {split!r}")
    probs: list = []
    feats, records, problems = encode_records(engine, records, concepts=probs)
    bias = grounding_bias(engine, probs)  # the app's grounded decoding, when the bundle has it
    refs = {str(r.image): [" ".join(c) for c in r.captions] for r in records}
    out: dict = {"data": ds.name, "split": split, "images": len(records), "skipped": problems,
                 "provider": engine.provider, "grounded": bias is not None}
    for b in beams:
        t0 = time.perf_counter()
        kw = {k: v for k, v in (decoding or {}).items() if k in ("length_alpha", "block_ngram")}
        caps = decode_all(engine, feats, b, bias=bias, **kw)
        dt = time.perf_counter() - t0
        hyps = {str(r.image): " ".join(c.words) for r, c in zip(records, caps)}
        m = score(refs, hyps, meteor=meteor)
        m.update(chair(hyps, refs))  # hallucinated objects (CHAIRs, CHAIRi), beside the n-gram metrics
        m["decode_ms_per_image"] = round(1000 * dt / len(records), 2)
        m["mean_length"] = round(float(np.mean([len(c.words) for c in caps])), 2)
        m["vocabulary_used"] = len({w for c in caps for w in c.words})
        out[f"beam{b}"] = m
        for g, gm in scores_by_source(refs, hyps, records, meteor).items():
            grp = out.setdefault("by_source", {}).setdefault(g, {"images": gm.pop("images")})
            grp[f"beam{b}"] = gm
    if said_as:
        out["said_as"] = said_as_figures(bundle, records, refs)
    if sheet is not None:
        caps = decode_all(engine, feats[:6], max(beams))
        write_sheet(sheet, [r.image for r in records[:6]], caps, engine.grid)
        out["sheet"] = str(sheet)
    return out


def said_as_figures(bundle: Path, records, refs: dict[str, list[str]]) -> dict:
    """The photos described as the app describes them with this model (its decoding, grounding and trust
    rule): per collection and per way the caption was said, the share of photos and CHAIRs."""
    from capdesk.describe.describer import Describer
    from capdesk.folders.reading import describe_paths

    describer = Describer(str(bundle), provider="cpu", others=[])
    groups: dict[str, dict[str, list[str]]] = {}
    for r, d in zip(records, describe_paths(describer, [r.image for r in records], batch_size=16)):
        if not d.ok or d.said_as is None:
            continue
        for g in {"all", source_group(r.source)} if r.source else {"all"}:
            groups.setdefault(g, {}).setdefault(str(d.said_as), []).append(
                (str(r.image), " ".join(d.caption.words) if d.caption else ""))
    out: dict = {}
    for g, by in groups.items():
        n = sum(len(v) for v in by.values())
        out[g] = {k: {"share": round(len(v) / n, 4), **chair(dict(v), {i: refs[i] for i, _ in v})}
                  for k, v in sorted(by.items())}
    return out


def write_sheet(path: Path, images: list[Path], caps: list[Caption], grid: tuple[int, int],
                tile: int = 112) -> None:
    """Rows of image + per-word attention maps, with the caption above each row."""
    font = ImageFont.load_default(size=14)
    rows = []
    for img_path, cap in zip(images, caps):
        img = load_image(img_path)
        s = strip(img, cap.words, cap.attention, grid, tile=tile, per_row=10)
        row = Image.new("RGB", (s.width, s.height + 22), "white")
        ImageDraw.Draw(row).text((4, 3), f"{cap.text}  (confidence {cap.confidence:.2f})", fill="black", font=font)
        row.paste(s, (0, 22))
        rows.append(row)
    W = max(r.width for r in rows)
    sheet = Image.new("RGB", (W, sum(r.height + 8 for r in rows)), "white")
    y = 0
    for r in rows:
        sheet.paste(r, (0, y))
        y += r.height + 8
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)


# Length normalisation divides a caption's log-probability by its length to the power alpha. The
# everyday model's val scores were still rising at 1.0, so the grid goes past it.
LENGTH_ALPHAS = (0.0, 0.5, 1.0, 1.5, 2.0)
BLOCK_NGRAMS = (0, 2, 3)


def decoding_grid(engine: Engine, feats: np.ndarray, records, beam: int = 3,
                  alphas: tuple[float, ...] = LENGTH_ALPHAS, blocks: tuple[int, ...] = BLOCK_NGRAMS) -> list[dict]:
    """Each decoding setting's figures on ``records``, with its captions (``hyps``) and decode ms per image."""
    refs = {str(r.image): [" ".join(c) for c in r.captions] for r in records}
    results = []
    for alpha in alphas:
        for block in blocks:
            t0 = time.perf_counter()
            caps = decode_all(engine, feats, beam, length_alpha=alpha, block_ngram=block)
            ms = 1000 * (time.perf_counter() - t0) / max(len(records), 1)
            hyps = {str(r.image): " ".join(c.words) for r, c in zip(records, caps)}
            results.append({"length_alpha": alpha, "block_ngram": block, **score(refs, hyps),
                            "decode_ms": round(ms, 2), "hyps": hyps})
    return results


def best_setting(results: list[dict]) -> dict:
    # CIDEr (the consensus measure) and BLEU-4 with equal weight: BLEU-4 alone prefers captions that
    # repeat a phrase ("a man riding a horse on a horse"), which CIDEr penalises.
    return max(results, key=lambda r: r["BLEU-4"] + r["CIDEr"])


def tune_decoding(bundle: Path, data: Path, beam: int = 3, image_root: Path | None = None,
                  limit: int = 0) -> dict:
    """Pick length normalisation and n-gram blocking on the val split (its first ``limit`` images if set)."""
    engine = Engine(str(bundle), provider="cpu")
    records = read_any(Path(data), image_root).split("val")
    if limit:
        records = records[:limit]
    feats, records, _ = encode_records(engine, records)
    results = decoding_grid(engine, feats, records, beam)
    best = best_setting(results)
    grid = [{k: v for k, v in r.items() if k not in ("hyps", "decode_ms")} for r in results]
    return {"chosen": {"length_alpha": best["length_alpha"], "block_ngram": best["block_ngram"]},
            "images": len(records), "beam": beam, "grid": grid}


if __name__ == "__main__":
    import sys

    print(json.dumps(tune_decoding(Path(sys.argv[1]), Path(sys.argv[2])), indent=2))
