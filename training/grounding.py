"""Grounding and trust for a released bundle: the concept head, the beam's penalty on object words the
concepts do not support, and the trust score, each chosen on val and measured on test.

    capdesk train ground models/everyday DATA --cache runs/split-cache-everyday.npz --out runs/everyday-grounded

1. The concept head (``training.concepts``) learns from the train split's pooled features.
2. The beam's penalty: an object word whose category the concepts give probability p < tau costs
   ``alpha * log(p / tau)``. Each alpha is decoded on val; the one kept names the fewest absent objects
   (CHAIRs) while BLEU-4 and CIDEr stay within noise of no penalty.
3. The trust score (``capdesk.describe.trust``) is fitted on val captions (label: it names no absent
   object), and its figures on test are reported at the thresholds of ``capdesk.limits``, with the
   risk-coverage curve (hallucination of the captions said as fact against the share said as fact).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

from capdesk.describe import tags as tag_mod
from capdesk.describe.settings import DEFAULT as POLICY
from capdesk.describe.trust import Evidence, TrustModel, features, fit
from capdesk.model.engine import Engine
from training import concepts as cmod
from training.chair import chair, hallucinated
from training.data import read_any
from training.evaluate import source_group
from training.export import write_manifest
from training.metrics import score

FACT_ZONE_QUANTILE = POLICY.saying.fact_zone_quantile
TRUST_FACT_THRESHOLD = POLICY.saying.trust_fact
TRUST_PROBABLY_THRESHOLD = POLICY.saying.trust_probably

log = logging.getLogger("training")
TAU = 0.5
ALPHAS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
# How far a choice may fall under no penalty, in each collection of val, and still count as no loss:
# strict (a paired bootstrap on the 240 COCO test photos puts the 95% interval of such a change at
# about +-0.008 BLEU-4 and +-0.03 CIDEr: training/studies/grounding_noise.py).
BLEU_NOISE, CIDER_NOISE = 0.004, 0.01
TARGET_FACT_CHAIRS = 0.05  # the hallucination rate of captions said as fact that the fact threshold aims at


def concept_bias(engine: Engine, words: list[str], probs: np.ndarray, alpha: float, tau: float = TAU) -> np.ndarray:
    """[B, V] penalties: alpha * log(p / tau) for the decoder's object words whose concept is under tau."""
    from capdesk.describe.grounding import bias_matrix, token_concepts

    return bias_matrix(token_concepts(engine.vocab, words), probs, alpha, tau)


def decode(engine: Engine, inputs: np.ndarray, rows: np.ndarray, bias: np.ndarray | None, beam: int):
    pools = []
    for s in range(0, len(rows), 32):
        idx = rows[s:s + 32]
        feats = inputs[idx].astype(np.float32)
        pools += engine.finalists(feats, beam, None if bias is None else bias[s:s + 32])
    return engine.captions(pools, inputs[rows[:1]].astype(np.float32).repeat(len(pools), 0))


def figures(ids: list[str], caps, refs_raw: dict[str, list[str]], refs_tok: dict[str, list[str]]) -> dict:
    hyps = {i: " ".join(c.words) for i, c in zip(ids, caps)}
    m = score({i: refs_tok[i] for i in ids}, hyps, meteor=False)
    m.update(chair(hyps, {i: refs_raw[i] for i in ids}))
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()}


def evidence(caps, probs, words, logits, labels, ratios) -> list[Evidence]:
    out = []
    for n, c in enumerate(caps):
        conc = {w: float(p) for w, p in zip(words, probs[n])}
        tg = tag_mod.top_tags(logits[n].astype(np.float32), labels, 0.2, 3)
        out.append(Evidence(c.words, c.confidence, conc, c.finalists, tg, float(ratios[n])))
    return out


def risk_coverage(trust: np.ndarray, bad: np.ndarray) -> list[tuple[float, float, float]]:
    """(threshold, share said as fact, hallucination rate of those) as the threshold moves."""
    out = []
    for t in np.round(np.arange(0.0, 1.0, 0.02), 2):
        said = trust >= t
        out.append((float(t), float(said.mean()), float(bad[said].mean()) if said.any() else 0.0))
    return out


def run(bundle: Path, data: Path, cache: Path, out: Path | None, beam: int = 3) -> dict:
    t0 = time.perf_counter()
    z = np.load(cache)
    ids, split = [str(i) for i in z["ids"]], z["split"]
    ds = read_any(data)
    by_id = {str(r.image): r for r in ds.records}
    refs_raw = {i: by_id[i].raw or [" ".join(c) for c in by_id[i].captions] for i in ids}
    refs_tok = {i: [" ".join(c) for c in by_id[i].captions] for i in ids}
    tr, va, te = (np.flatnonzero(split == s) for s in ("train", "val", "test"))
    words = cmod.build_vocab([refs_raw[ids[i]] for i in tr])
    parts = (("train", tr), ("val", va), ("test", te))
    y = {s: cmod.labels([refs_raw[ids[i]] for i in idx], words) for s, idx in parts}
    pooled = z["pooled"].astype(np.float32)
    head, info = cmod.train_head(pooled[tr], y["train"], pooled[va], y["val"], log=log.info)
    with torch.no_grad():
        probs = {s: head.forward(torch.from_numpy(pooled[idx])[:, None, :]).numpy()
                 for s, idx in (("val", va), ("test", te))}
    info["test"] = cmod.quality(probs["test"], y["test"], words)
    info["val"] = cmod.quality(probs["val"], y["val"], words)
    log.info(f"concepts: {len(words)} words; test {info['test']}")

    engine = Engine(str(bundle), provider="cpu")
    inputs, input_row = z["inputs"], z["input_row"]
    rows = {s: input_row[idx] for s, idx in (("val", va), ("test", te))}
    sid = {s: [ids[i] for i in idx] for s, idx in (("val", va), ("test", te))}
    study: dict = {"alphas": {}}
    caps_by_alpha = {}
    val_source = [source_group(str(z["source"][i])) for i in va]
    collections = sorted(set(val_source))
    for a in ALPHAS:
        bias = concept_bias(engine, words, probs["val"], a) if a else None
        caps = decode(engine, inputs, rows["val"], bias, beam)
        caps_by_alpha[a] = caps
        study["alphas"][str(a)] = figures(sid["val"], caps, refs_raw, refs_tok)
        for g in collections:
            keep = [n for n, src in enumerate(val_source) if src == g]
            study["alphas"][str(a)][g] = figures([sid["val"][n] for n in keep], [caps[n] for n in keep],
                                                 refs_raw, refs_tok)
        log.info(f"val alpha {a}: {study['alphas'][str(a)]}")

    def no_loss(a: float) -> bool:
        """BLEU-4 and CIDEr within noise of no penalty, in every collection of val."""
        now, base = study["alphas"][str(a)], study["alphas"]["0.0"]
        return all(now[g]["BLEU-4"] >= base[g]["BLEU-4"] - BLEU_NOISE
                   and now[g]["CIDEr"] >= base[g]["CIDEr"] - CIDER_NOISE for g in collections)

    alpha = min([a for a in ALPHAS if no_loss(a)], key=lambda a: (study["alphas"][str(a)]["CHAIRs"], -a))
    study["alpha"] = alpha
    labels = engine.labels
    ratios = {s: engine.domain.ratio(pooled[idx]) if engine.domain is not None else np.ones(len(idx))
              for s, idx in (("val", va), ("test", te))}
    logits = {s: z["logits"][idx] for s, idx in (("val", va), ("test", te))}

    ev_val = evidence(caps_by_alpha[alpha], probs["val"], words, logits["val"], labels, ratios["val"])
    x_val = np.stack([features(e) for e in ev_val])
    bad_val = np.array([bool(hallucinated(" ".join(c.words), refs_raw[i]))
                        for i, c in zip(sid["val"], caps_by_alpha[alpha])])
    section = fit(x_val, (~bad_val).astype(float))
    model = TrustModel.from_manifest(section)
    trust_val = np.array([model.score_features(x) for x in x_val])
    # The fact threshold: the lowest at which the captions said as fact name an absent object at most
    # TARGET_FACT_CHAIRS of the time in every collection of the val split (COCO's photos are harder
    # than Flickr8k's: a threshold set on the pooled split would let COCO's facts go wrong far more often).
    val_groups = np.array([source_group(str(z["source"][i])) for i in va])
    study["val_risk_coverage"] = {}
    lowest = []
    for g in sorted(set(val_groups)):
        m = val_groups == g
        curve = risk_coverage(trust_val[m], bad_val[m])
        study["val_risk_coverage"][g] = curve
        lowest.append(min((t for t, _, rate in curve if rate <= TARGET_FACT_CHAIRS), default=1.0))
    study["val_fact_threshold"] = max(lowest)
    section["fact_domain_ratio"] = round(float(np.quantile(ratios["val"], FACT_ZONE_QUANTILE)), 4)

    test_caps = {}
    for a in sorted({0.0, alpha}):
        bias = concept_bias(engine, words, probs["test"], a) if a else None
        test_caps[a] = decode(engine, inputs, rows["test"], bias, beam)
        study.setdefault("test", {})[str(a)] = figures(sid["test"], test_caps[a], refs_raw, refs_tok)
    caps = test_caps[alpha]
    ev_test = evidence(caps, probs["test"], words, logits["test"], labels, ratios["test"])
    trust_test = np.array([model.score(e) for e in ev_test])
    bad_test = np.array([bool(hallucinated(" ".join(c.words), refs_raw[i])) for i, c in zip(sid["test"], caps)])
    groups = np.array([source_group(str(z["source"][i])) for i in te])
    conf_test = np.array([c.confidence for c in caps])
    study["trust"] = {"val_auc": auc(trust_val, ~bad_val), "test_auc": auc(trust_test, ~bad_test),
                      "confidence_test_auc": auc(conf_test, ~bad_test)}
    study["said_as"] = {}
    for g in sorted(set(groups)):
        m = groups == g
        typical = ratios["test"] <= section["fact_domain_ratio"]
        fact = m & (trust_test >= TRUST_FACT_THRESHOLD) & typical
        prob = m & ~fact & (trust_test >= TRUST_PROBABLY_THRESHOLD)
        rest = m & (trust_test < TRUST_PROBABLY_THRESHOLD)
        study["said_as"][g] = {
            "images": int(m.sum()), "fact_share": round(float(fact.sum() / m.sum()), 4),
            "fact_CHAIRs": round(float(bad_test[fact].mean()) if fact.any() else 0.0, 4),
            "probably_share": round(float(prob.sum() / m.sum()), 4),
            "probably_CHAIRs": round(float(bad_test[prob].mean()) if prob.any() else 0.0, 4),
            "low_share": round(float(rest.sum() / m.sum()), 4),
            "all_CHAIRs": round(float(bad_test[m].mean()), 4)}
        study["said_as"][g]["risk_coverage"] = risk_coverage(trust_test[m], bad_test[m])
    brief = {g: {k: v for k, v in d.items() if k != "risk_coverage"} for g, d in study["said_as"].items()}
    log.info(f"trust: {study['trust']}; said as: {json.dumps(brief)}")
    if out is not None:
        write_bundle(bundle, out, head, words, info, alpha, section, study, int(np.prod(engine.grid)))
    study["seconds"] = round(time.perf_counter() - t0, 1)
    return study


def auc(score_: np.ndarray, good: np.ndarray) -> float:
    """Area under the ROC curve: how often a good caption outscores a bad one."""
    pos, neg = score_[good], score_[~good]
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = np.argsort(np.argsort(np.concatenate([pos, neg]))) + 1
    return round(float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))), 4)


def write_bundle(bundle: Path, out: Path, head, words, info, alpha, section, study, grid) -> None:
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(bundle, tmp)
    manifest = json.loads((tmp / "manifest.json").read_text(encoding="utf-8"))
    manifest["concepts"] = cmod.export(head, words, grid, tmp, {
        "threshold": 0.5, "trained_on": "train split captions: a word is positive when any human caption uses it",
        "calibration": f"one temperature ({info['temperature']}) fitted on the val split",
        "test": info["test"], "val": info["val"]})
    manifest["grounding"] = {"alpha": alpha, "tau": TAU, "rule": "object words whose concept probability p < tau "
                             "cost alpha * log(p / tau) in the beam's ranking", "val": study["alphas"]}
    manifest["trust"] = {**section, "label": "the caption names no COCO object absent from every human caption "
                         "(CHAIR, caption-reference form)", "fitted_on": "val split",
                         "auc": study["trust"], "test": {g: {k: v for k, v in d.items() if k != "risk_coverage"}
                                                         for g, d in study["said_as"].items()}}
    write_manifest(tmp, manifest)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="capdesk train ground", description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("--cache", type=Path, required=True, help="made by python -m training.split_cache")
    ap.add_argument("--out", type=Path, help="write the grounded bundle here")
    ap.add_argument("--report", type=Path, help="write the study's figures (JSON) here")
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--plot", type=Path, help="draw the test split's risk-coverage curves (PNG) here")
    ns = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    study = run(ns.bundle, ns.data, ns.cache, ns.out, ns.beam)
    if ns.report:
        ns.report.write_text(json.dumps(study, indent=1), encoding="utf-8")
    if ns.plot:
        from training.plots import risk_coverage_png

        curves = {f"{g} test ({d['images']} photos)": d["risk_coverage"] for g, d in study["said_as"].items()}
        risk_coverage_png(curves, ns.plot, {"trust threshold": TRUST_FACT_THRESHOLD},
                          f"{ns.bundle.name}: captions said as fact as the trust threshold moves",
                          TARGET_FACT_CHAIRS)
    print(json.dumps({k: v for k, v in study.items() if k != "said_as"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
