"""Fit and measure the picture-kind model (capdesk/describe/picture_kind.py).

    python training/studies/picture_kind.py features LABELS.csv FEATS.npz   # encoder + pixel statistics
    python training/studies/picture_kind.py fit models/everyday/kind.npz FEATS.npz [MORE.npz ...] [--mix]

The labelled pictures are listed in training/studies/picture_kind_labels.csv (picture, kind, source,
split). None of them is in the repository. ``deb:PACKAGE:/PATH`` is a file of a Debian 12 package, fetched
with ``apt-get download`` and unpacked with ``dpkg-deb -x``: openclipart-png 1:0.18+dfsg-19 (drawings by
folder; maps from its geography folders; flowcharts), gimp-help-en 2.10.34-2 and gnome-user-docs 43.0-2
and marble-data 22.12.3-1 (screenshots), asymptote-doc 2.85 (diagrams), gnome-backgrounds 43.1,
mate-backgrounds 1.26.0, plasma-workspace-wallpapers 5.27.5 and desktop-base 12.0.6 (wallpapers: labelled
by eye from contact sheets as photo, painting, drawing, screenshot or abstract image, before any model saw
them, and kept out of fitting except as the --mix halves say). ``render:`` pictures were made here from
those packages: pages_fit and pages_test are ``pdftoppm -r 60`` pages 20-80 of asymptote.pdf and
gnuplot.pdf; charts are gnuplot-doc's demo scripts run with ``set terminal pngcairo size 640,480``; music
is lilypond 2.24 (``lilypond --png -dresolution=110``) on snippets of lilypond-doc-html. ``shared:`` are
everyday and RSICD val (fit) and test (held out) photos. Exact duplicates were removed by a difference
hash before splitting. ``deb:gcompris-qt-data:/...rcc:/gcompris/...`` are photos inside the Qt resource
files of gcompris-qt-data 3.1-2 (read with PySide6's ``QResource.registerResource``): tools and kitchen
things photographed on white, fishes, power plants and monuments, added as photos to the fit pictures
because product photos on white were called drawings; the photos of the same package kept for judging
the describer (the tuning pictures of docs/training.md) are not among them.

A features file is made from a CSV with the columns path, kind, source, split (``fit``: pictures the
model and its threshold are chosen on; ``test``: held out, from other packages than the fit pictures of
the same kind wherever there were two). ``fit`` chooses the threshold by five-fold cross-validation on
the fit pictures alone, then prints the held-out figures: how often a photo is called something else,
and how often each other kind is named, and named right.
"""

from __future__ import annotations

import csv
import hashlib
import sys
import warnings
from collections import Counter

import numpy as np

from capdesk.describe.picture_kind import PHOTO, KindModel, pixel_stats
from capdesk.imageio import load_image

PRECISION_GOAL = 0.97  # of the pictures called something other than a photo, this share must be right
L2 = 1e-2


def features(labels: str, out: str) -> None:
    from capdesk.model.engine import Engine
    eng = Engine("everyday")
    with open(labels, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    pooled, stats, keep = [], [], []
    for i, r in enumerate(rows):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                img = load_image(r["path"])
        except Exception as exc:  # noqa: BLE001 - a picture that does not open is left out, and said
            print(f"skipped {r['path']}: {exc}", file=sys.stderr)
            continue
        feats = eng.encode_named(eng.preprocess.to_array(img)[None])["features"]
        pooled.append(feats.mean(1)[0])
        stats.append(pixel_stats(img))
        keep.append(r)
        if i % 100 == 0:
            print(i, len(rows), file=sys.stderr)
    np.savez(out, pooled=np.array(pooled), stats=np.array(stats), kind=np.array([r["kind"] for r in keep]),
             source=np.array([r["source"] for r in keep]), split=np.array([r["split"] for r in keep]),
             path=np.array([r["path"] for r in keep]),
             features_sha256=np.array(eng.bundle.manifest["encoder"].get("features_sha256", "")))


def _fit(x: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression, L2, classes weighted to be equal (torch, training only)."""
    import torch
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    w = torch.zeros(x.shape[1], k, requires_grad=True)
    b = torch.zeros(k, requires_grad=True)
    counts = torch.bincount(yt, minlength=k).float().clamp(min=1)
    cw = (len(y) / (k * counts))
    opt = torch.optim.LBFGS([w, b], max_iter=300, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w + b, yt, weight=cw) + L2 * (w ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    return w.detach().numpy(), b.detach().numpy()


def _model(x: np.ndarray, y: np.ndarray, kinds: list[str], threshold: float = 0.5) -> KindModel:
    mean, scale = x.mean(0), x.std(0) + 1e-6
    w, b = _fit((x - mean) / scale, y, len(kinds))
    return KindModel(kinds, mean, scale, w, b, threshold)


def _said(m: KindModel, probs: np.ndarray) -> list[str]:
    return [m.kind(p)[0] for p in probs]


def _report(name: str, truth: list[str], said: list[str], sources: list[str]) -> None:
    photos = [s for t, s in zip(truth, said) if t == PHOTO]
    others = [(t, s) for t, s in zip(truth, said) if t != PHOTO]
    named = [(t, s) for t, s in others if s != PHOTO]
    wrong_named = sum(s != PHOTO for s in photos) + sum(t != s for t, s in named)
    print(f"## {name}: {len(truth)} pictures")
    print(f"photos called something else: {sum(s != PHOTO for s in photos)} of {len(photos)}")
    print(f"other kinds named as some kind: {len(named)} of {len(others)}; named right: "
          f"{sum(t == s for t, s in named)}; pictures named a wrong kind (photos included): {wrong_named}")
    by = Counter(t for t in truth)
    for k in sorted(by):
        right = sum(1 for t, s in zip(truth, said) if t == k and s == k)
        wrong = Counter(s for t, s in zip(truth, said) if t == k and s != k)
        print(f"  {k:11s} {right:4d}/{by[k]:<4d} said as: {dict(wrong)}")
    bysrc = Counter(sources)
    for src in sorted(bysrc):
        ok = sum(1 for t, s, o in zip(truth, said, sources) if o == src and t == s)
        print(f"    {src:32s} {ok}/{bysrc[src]}")


def _load(paths: list[str], mix: bool) -> dict[str, np.ndarray]:
    """The feature files joined; with ``mix``, every other held-out picture of each source (by the hash of
    its path) moves to the fit pictures, so that the model sees every source and is tested on the rest."""
    parts = [np.load(p) for p in paths]
    z = {k: np.concatenate([p[k] for p in parts]) for k in ("pooled", "stats", "kind", "source", "split", "path")}
    z["features_sha256"] = parts[0]["features_sha256"]
    if mix:
        moved = np.array([int(hashlib.md5(p.encode()).hexdigest(), 16) % 2 == 0 for p in z["path"]])
        z["split"] = np.where((z["split"] == "test") & moved, "fit", z["split"])
    return z


def fit(out: str, *feats: str) -> None:
    mix = "--mix" in feats
    z = _load([f for f in feats if f != "--mix"], mix)
    x = np.concatenate([z["pooled"], z["stats"]], axis=1)
    kinds = sorted(set(z["kind"][z["split"] == "fit"]))
    fit_i = np.where(z["split"] == "fit")[0]
    test_i = np.where((z["split"] == "test") & np.isin(z["kind"], kinds))[0]
    y = np.array([kinds.index(k) for k in z["kind"][fit_i]])
    # Out-of-fold probabilities on the fit pictures, to choose the threshold without the test ones.
    rng = np.random.default_rng(0)
    fold = rng.integers(0, 5, len(fit_i))
    oof = np.zeros((len(fit_i), len(kinds)))
    for f in range(5):
        m = _model(x[fit_i][fold != f], y[fold != f], kinds)
        oof[fold == f] = m.probabilities(x[fit_i][fold == f][:, :-9], x[fit_i][fold == f][:, -9:])
    truth = list(z["kind"][fit_i])
    threshold = 0.99
    for t in np.arange(0.5, 0.995, 0.01):
        m.threshold = float(t)
        said = _said(m, oof)
        named = [(a, s) for a, s in zip(truth, said) if s != PHOTO]
        if named and sum(a == s for a, s in named) / len(named) >= PRECISION_GOAL:
            threshold = float(t)
            break
    print(f"threshold (out-of-fold precision >= {PRECISION_GOAL}): {threshold:.2f}")
    m.threshold = threshold
    _report("fit pictures, out of fold", truth, _said(m, oof), list(z["source"][fit_i]))
    final = _model(x[fit_i], y, kinds, threshold)
    final.features_sha256 = str(z["features_sha256"])
    probs = final.probabilities(x[test_i][:, :-9], x[test_i][:, -9:])
    _report("held-out pictures", list(z["kind"][test_i]), _said(final, probs), list(z["source"][test_i]))
    final.save(out)
    print(f"wrote {out}; kinds {kinds}; threshold {threshold:.2f}")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"features": features, "fit": fit}[cmd](*args)
