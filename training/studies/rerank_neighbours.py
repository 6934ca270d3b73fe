"""The beam's finished captions reranked by how well they agree with the captions of the most similar
training photos (nearest-neighbour consensus, as in Devlin et al. 2015), on the val split only.

Each val photo's beam finalists (``Engine.finalists``: as many as the beam is wide) get
the model's own length-normalised score plus λ times their mean CIDEr-style agreement (tf-idf
weighted 1- to 4-grams, cosine, document frequencies from the training captions) with the captions
of the k training photos nearest in the encoder's mean-pooled features. The settings are tuned on a
random half of val (the release's rule, BLEU-4 + CIDEr) and measured on the other half, and the
other way round, so the gain reported is not the one tuned for. The test split is not read.

    python training/studies/rerank_neighbours.py [BUNDLE] [--data ../shared/data/everyday] [--beam 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capdesk.model.engine import Engine  # noqa: E402
from training.data import read_any  # noqa: E402
from training.evaluate import readable_batches  # noqa: E402
from training.metrics import score  # noqa: E402

KS = (5, 10, 20, 40, 80)
LAMBDAS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 1000.0)  # 1000: the consensus alone decides


def encode(engine: Engine, records):
    """(decoder inputs, unit mean-pooled features, kept records) for the readable records."""
    dec, pooled, kept = [], [], []
    for images, recs, bad in readable_batches(engine, records):
        for problem in bad:
            print(f"skipped: {problem}", file=sys.stderr)
        if recs:
            named = engine.encode_named(images)
            dec.append(engine.decoder_input(named))
            f = named["features"].mean(axis=1)
            pooled.append(f / np.linalg.norm(f, axis=1, keepdims=True))
            kept += recs
    return np.concatenate(dec), np.concatenate(pooled), kept


def finalists(engine: Engine, feats: np.ndarray, beam: int) -> list[list[tuple[str, float]]]:
    """Every caption the beam finishes for each picture, with its length-normalised score, best first."""
    return [[(" ".join(engine.vocab[w] for w in hy.ids), hy.score) for hy in pool]
            for s in range(0, len(feats), 32) for pool in engine.finalists(feats[s:s + 32], beam)]


def _ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


class Agreement:
    """CIDEr-style agreement between two captions: tf-idf weighted n-gram cosine, mean over n = 1-4."""

    def __init__(self, train_records) -> None:
        self.df = [Counter() for _ in range(4)]
        for r in train_records:
            for n in range(4):
                self.df[n].update(set().union(*(_ngrams(c, n + 1) for c in r.captions)))
        self.log_n = math.log(len(train_records))

    def vector(self, words: list[str]) -> list[tuple[dict, float]]:
        out = []
        for n in range(4):
            v = {g: tf * (self.log_n - math.log(max(1.0, self.df[n][g]))) for g, tf in _ngrams(words, n + 1).items()}
            out.append((v, math.sqrt(sum(x * x for x in v.values()))))
        return out

    @staticmethod
    def similarity(a, b) -> float:
        total = 0.0
        for (va, na), (vb, nb) in zip(a, b):
            if na and nb:
                total += sum(x * vb.get(g, 0.0) for g, x in va.items()) / (na * nb)
        return total / 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", nargs="?", type=Path, default=ROOT / "models" / "everyday")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "everyday")
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()

    engine = Engine(str(ns.bundle), provider="cpu")
    ds = read_any(ns.data)
    _, train_emb, train = encode(engine, ds.split("train"))
    val_feats, val_emb, val = encode(engine, ds.split("val"))
    cands = finalists(engine, val_feats, ns.beam)
    nearest = np.argsort(-(val_emb @ train_emb.T), axis=1)[:, :max(KS)]

    agree = Agreement(train)
    train_vecs: dict[int, list] = {}
    consensus = {k: [] for k in KS}  # [k][photo] -> agreement of each finalist
    for i, pool in enumerate(cands):
        vecs = [agree.vector(text.split()) for text, _ in pool]
        per_neighbour = np.array([[np.mean([agree.similarity(v, t) for t in train_vecs.setdefault(
            int(j), [agree.vector(c) for c in train[int(j)].captions])]) for j in nearest[i]] for v in vecs])
        for k in KS:
            consensus[k].append(per_neighbour[:, :k].mean(axis=1))

    keys = [str(r.image) for r in val]
    refs = {str(r.image): [" ".join(c) for c in r.captions] for r in val}

    def pick(k: int, lam: float, which) -> dict[str, str]:
        return {keys[i]: cands[i][int(np.argmax([s + lam * consensus[k][i][j]
                                                 for j, (_, s) in enumerate(cands[i])]))][0] for i in which}

    order = np.random.default_rng(0).permutation(len(val))
    halves = (order[:len(order) // 2], order[len(order) // 2:])
    grid = {(k, lam): [score(refs, pick(k, lam, h)) for h in halves] for k in KS for lam in LAMBDAS}
    report: dict = {"bundle": str(ns.bundle), "beam": ns.beam, "images": len(val),
                    "finalists_per_photo": round(float(np.mean([len(p) for p in cands])), 2)}
    for tuned in (0, 1):
        k, lam = max(grid, key=lambda kl: grid[kl][tuned]["BLEU-4"] + grid[kl][tuned]["CIDEr"])
        held_out, base = grid[(k, lam)][1 - tuned], grid[(KS[0], 0.0)][1 - tuned]
        report[f"tuned_on_half_{tuned}"] = {"k": k, "lambda": lam, "held_out": held_out,
                                            "gain_on_held_out": {m: round(held_out[m] - base[m], 4) for m in base}}
    report["whole_val"] = {f"k={k} lambda={lam}": score(refs, pick(k, lam, range(len(val)))) for k, lam in grid}
    text = json.dumps(report, indent=1)
    if ns.json:
        ns.json.write_text(text, encoding="utf-8")
    for name, sc in report["whole_val"].items():
        print(f"{name:22s}", " ".join(f"{m} {sc[m]:.4f}" for m in ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "CIDEr")))
    print(json.dumps({k: v for k, v in report.items() if k != "whole_val"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
