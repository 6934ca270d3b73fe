"""A model card (``README.md`` of a bundle) from its manifest and a few hand-written notes.

    python -m training.card BUNDLE NOTES.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

METRICS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "CIDEr")


def last_blocks(n: int) -> str:
    """The tuned encoder top's extent in words, as the card and the manifest both say it."""
    return "last block" if n <= 1 else f"last {n} blocks"


def _table(test: dict) -> str:
    beams = sorted((k for k in test if k.startswith("beam")), key=lambda k: int(k[4:]))
    cols = [m for m in METRICS if any(m in test[b] for b in beams)]
    head = "| decoding | " + " | ".join(cols) + " | mean words | decode ms/image |"
    sep = "| --- " * (len(cols) + 3) + "|"
    rows = []
    for b in beams:
        r = test[b]
        rows.append(f"| beam {b[4:]} | " + " | ".join(f"{r[c]:.3f}" if c in r else "—" for c in cols)
                    + f" | {r.get('mean_length', '—')} | {r.get('decode_ms_per_image', '—')} |")
    return "\n".join([head, sep, *rows])


# Xu et al. (2015), Table 1, Flickr8k (VGG encoder): the published figures the Flickr8k rows compare with.
PAPER_FLICKR8K = {
    "Show, Attend and Tell, soft (paper)": {"BLEU-1": 0.67, "BLEU-2": 0.448, "BLEU-3": 0.299, "BLEU-4": 0.195,
                                            "METEOR": 0.1893},
    "Show, Attend and Tell, hard (paper)": {"BLEU-1": 0.67, "BLEU-2": 0.457, "BLEU-3": 0.314, "BLEU-4": 0.213,
                                            "METEOR": 0.2030},
}
SOURCE_NAMES = {"flickr8k": "Flickr8k test photos (official split)", "coco": "COCO test photos"}


def _source_tables(test: dict) -> str:
    """One table per collection of the test split; Flickr8k next to the paper's Table 1."""
    parts = []
    for g, res in sorted(test.get("by_source", {}).items()):
        beams = sorted((k for k in res if k.startswith("beam")), key=lambda k: int(k[4:]))
        cols = [m for m in METRICS if any(m in res[b] for b in beams)]
        rows = [f"**{SOURCE_NAMES.get(g, g)}** ({res.get('images', '?')} images)", "",
                "| decoding | " + " | ".join(cols) + " |", "| --- " * (len(cols) + 1) + "|"]
        for b in beams:
            rows.append(f"| beam {b[4:]} | " + " | ".join(f"{res[b][c]:.3f}" if c in res[b] else "—" for c in cols)
                        + " |")
        if g == "flickr8k":
            for label, ref in PAPER_FLICKR8K.items():
                rows.append(f"| {label} | " + " | ".join(f"{ref[c]:.3f}" if c in ref else "—" for c in cols) + " |")
        parts.append("\n".join(rows))
    return "\n\n".join(parts)


def _weights(w: dict) -> str:
    """What shrinking the stored weights cost: sizes and the test figures before and after."""
    if not w:
        return ""
    before, after = sum(w.get("bytes_before", {}).values()), sum(w.get("bytes_after", {}).values())
    q = w.get("quality_test", {})
    qb, qa = q.get("before", {}), q.get("after", {})
    line = (f"Stored weights: {w.get('kind', '')} (`capdesk train shrink`): model files "
            f"{before / 1e6:.1f} MB → {after / 1e6:.1f} MB.")
    if qb and qa:
        line += (f" On the test split at beam {q.get('beam')}: BLEU-4 {qb['BLEU-4']:.3f} → {qa['BLEU-4']:.3f}, "
                 f"CIDEr {qb['CIDEr']:.3f} → {qa['CIDEr']:.3f}.")
    return line


def _decoder_line(m: dict, dec: dict) -> str:
    one = dec["members"][0] if "members" in dec else dec
    line = (f"- Decoder: {one.get('attention', 'soft')} attention (Xu et al., 2015) with the β gate, LSTM of "
            f"{one['hidden_dim']}, embedding {one['embed_dim']}, attention {one['attention_dim']}, deep output "
            f"layer, dropout {one.get('dropout')}; vocabulary {m['vocab']['size']} words "
            f"(seen at least {m['vocab'].get('min_count', '?')} times in training captions).")
    if one.get("refine_layers"):
        line += (f"\n- Before the LSTM, the grid passes through a learnt projection to {one.get('refine_dim')} "
                 f"features and {one['refine_layers']} self-attention layer(s), so each location carries "
                 "context from the others.")
    if one.get("encoder_top"):
        cfg = m.get("training", {}).get("config", {})
        n = int(one.get("encoder_top_blocks", 1))
        whose = "that block's" if n <= 1 else "those blocks'"
        line += (f"\n- The decoder carries its own copy of the encoder's {last_blocks(n)} and head (batch norm folded "
                 f"in), trained with it at lr {cfg.get('encoder_lr')} from the encoder's trunk ({whose} "
                 "input), which the shared encoder gives as an extra output; routing and the domain gate read "
                 "the shared encoder's features.")
        if cfg.get("init_from"):
            line += " The decoder started from a trained one of the same settings without the tuned top."
    if "members" not in dec:
        return line
    runs = m.get("training", {}).get("ensemble", [])
    how = ", ".join(f"seed {r.get('seed')}, best epoch {r.get('best_epoch')}" for r in runs)
    return (line + f"\n- An ensemble of {len(dec['members'])} such decoders trained apart ({how}): at each word "
            "the mean of their word probabilities, and the mean of their attention. The exported graphs "
            "carry the decoders side by side, so the app decodes it like any model, in about twice the time "
            "of one decoder. The figures of a single decoder are in docs/training.md.")


def _self_critical(sc: dict | None) -> str:
    if not sc:
        return ""
    return ("\n- Then self-critical training (Rennie et al., 2017): "
            f"{sc.get('samples')} captions sampled per photo under the app's decoding rules, rewarded by "
            f"CIDEr-D ({sc.get('reward', '')}) against the {sc.get('baseline', 'baseline')}; Adam lr {sc.get('lr')}, "
            f"{sc.get('batch_images')} photos a step, the doubly stochastic penalty kept; best checkpoint by val "
            f"BLEU-4 ({sc.get('best_at', 'see the manifest')}).")


def render(manifest: dict, notes: dict) -> str:
    m = manifest
    t = m.get("metrics", {}).get("test", {})
    enc, dec, tr = m["encoder"], m["decoder"], m.get("training", {})
    cfg = tr.get("config", {})
    gate = m.get("domain_gate", {})
    lines = [
        f"# Model card: `{m['name']}`",
        "",
        notes.get("summary", m.get("description", "")),
        "",
        "## What it is for, and what it is not for",
        "",
        notes.get("use", ""),
        "",
        "## Data",
        "",
        notes.get("data", ""),
        "",
        f"Test figures below are on the **{t.get('split', 'test')} split** of `{t.get('data', '?')}` "
        f"({t.get('images', '?')} images, never used for any choice); every choice was made on the val split.",
        "",
        "## Network and training",
        "",
        f"- Encoder: {enc['architecture']} ({enc.get('weights', '')}), input {enc['input_size']} px, "
        f"grid of {enc['grid']} locations × {enc['feature_dim']} features; also its ImageNet head (object tags).",
        _decoder_line(m, dec),
        f"- Training: cross-entropy + doubly stochastic attention penalty (λ = {cfg.get('ds_lambda')}), "
        f"Adam lr {cfg.get('lr')} (×{cfg.get('lr_decay')} after a worse epoch), batch {cfg.get('batch_size')} "
        f"bucketed by length, gradient clipping {cfg.get('clip')}, horizontal-flip feature augmentation "
        f"{'on' if cfg.get('flip') else 'off'}, early stopping on val BLEU-4 (patience {cfg.get('patience')}); "
        f"best epoch {tr.get('best_epoch')} of {notes.get('epochs_run', len(tr.get('history', [])))} run, "
        f"seed {cfg.get('seed')}."
        + _self_critical(tr.get("self_critical")),
        f"- Decoding (chosen on val): beam {m['decoding']['beam']}, length normalisation α = "
        f"{m['decoding']['length_alpha']}, n-gram blocking {m['decoding']['block_ngram'] or 'off'}.",
        "",
        "## Test-split figures",
        "",
        "Corpus-level BLEU-1..4 and CIDEr-D computed by the COCO caption evaluation code (pycocoevalcap) on "
        "lower-cased, punctuation-free tokens; METEOR 1.5 where Java was present. Through ONNX Runtime on "
        "the CPU, exactly as the app runs"
        + (f", with the weights as stored ({t['weights']})." if t.get("weights") else "."),
        "",
        _table(t) if t else "(not measured)",
        "",
        _source_tables(t),
        "",
        notes.get("figures", ""),
        "",
        _weights(m.get("weights", {})),
        "",
        "## Knowing its limits",
        "",
        f"The bundle carries a summary of its training pictures' features (`domain.npz`, {gate.get('method', '')}); "
        f"a picture scoring over {gate.get('threshold', 0):.3f} ({gate.get('threshold_rule', '')}), or "
        "resembling another installed model's pictures more, is outside this model's domain: CapDesk then "
        "withholds the caption and says what the tags and the text in the picture show.",
        "",
        notes.get("limits", ""),
        "",
        "## Known failure modes",
        "",
        notes.get("failures", ""),
        "",
        "## Speed",
        "",
        notes.get("speed", ""),
        "",
        "## Licences",
        "",
        f"- Weights: {m.get('licence', {}).get('weights', '')}",
        f"- Data: {m.get('licence', {}).get('data', '')}",
        "",
        "![per-word attention on test images](attention-sheet.png)",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bundle, notes = Path(argv[0]), json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    (bundle / "README.md").write_text(render(manifest, notes), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
