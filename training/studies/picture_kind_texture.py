"""Does the picture-kind model gain from texture statistics of the encoder's early blocks? (tried; not shipped)

    python training/studies/picture_kind_texture.py encoder OUT.onnx
    python training/studies/picture_kind_texture.py features OUT.onnx FEATS.npz TEX.npz   # same rows as FEATS
    python training/studies/picture_kind_texture.py compare base|tex FEATS.npz TEX.npz ORD_FEATS.npz ORD_TEX.npz

The shipped kind model reads the grid's mean and spread after the encoder's last layer, which learnt
photos, and 48 pixel statistics. Brush strokes, screen tones and rendered shading show in the early
layers: ``encoder`` adds three of the shipped encoder's inner tensors as outputs (blocks 2, 4 and 7:
24 x 56 x 56, 40 x 28 x 28 and 80 x 14 x 14; the shipped outputs stay the same to the bit), and
``features`` keeps, per picture, each tensor's channel means and spreads and the signed square roots of
the first two tensors' Gram matrices (style statistics; 1,408 numbers). ``compare`` fits two networks
(seeds 0 and 1, averaged) on the kind data's fit split as ``picture_kind.fit`` does, with the shipped
inputs (``base``) or with the texture statistics added (``tex``), and reports the held-out sources at
0.5, 0.7 and 0.9, and the ordinary pictures kept outside the kind data (grouped by their ``source``),
through a network that also learnt the held-out sources. Figures: docs/training.md, "Texture of the
early layers, tried".
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter

import numpy as np

from training.studies import picture_kind as pk

INNER = ("/_blocks.2/Add_output_0", "/_blocks.4/Add_output_0", "/_blocks.7/Add_output_0")


def encoder(out: str) -> None:
    import onnx
    from onnx import TensorProto, helper

    m = onnx.load(str(pk.ROOT / "models" / "everyday" / "encoder.onnx"))
    for name in INNER:
        m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    onnx.save(m, out)


def texture(inner: list[np.ndarray]) -> np.ndarray:
    """Channel means and spreads of each inner tensor, and the Gram matrices of the first two."""
    parts = []
    for k, t in enumerate(inner):
        f = t.reshape(t.shape[0], t.shape[1], -1).astype(np.float64)
        parts += [f.mean(2), f.std(2)]
        if k < 2:
            g = np.einsum("bci,bdi->bcd", f, f) / f.shape[2]
            iu = np.triu_indices(t.shape[1])
            g = g[:, iu[0], iu[1]]
            parts.append(np.sign(g) * np.sqrt(np.abs(g)))
    return np.concatenate(parts, 1).astype(np.float32)


def features(graph: str, feats: str, out: str) -> None:
    import onnxruntime as ort

    from capdesk.imageio import load_image
    from capdesk.model.engine import Engine
    prep = Engine("everyday").preprocess
    sess = ort.InferenceSession(graph, providers=["CPUExecutionProvider"])
    paths = [str(p) for p in np.load(feats)["path"]]
    rows: list[np.ndarray | None] = []
    for i, p in enumerate(paths):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                img = load_image(p)
                img.load()
            rows.append(texture(sess.run(list(INNER), {"image": prep.to_array(img)[None].astype(np.float32)}))[0])
        except Exception as exc:  # noqa: BLE001 - a picture that does not open is left out, and said
            print(f"skipped {p}: {exc}", file=sys.stderr)
            rows.append(None)
        if i % 500 == 0:
            print(i, len(paths), file=sys.stderr, flush=True)
    dim = next(r for r in rows if r is not None).shape[0]
    np.savez(out, tex=np.stack([r if r is not None else np.full(dim, np.nan, np.float32) for r in rows]),
             ok=np.array([r is not None for r in rows]), path=np.array(paths))


def _load(feats: str, tex: str) -> dict[str, np.ndarray]:
    z, t = np.load(feats), np.load(tex)
    if list(z["path"]) != list(t["path"]):
        raise SystemExit(f"{tex} is not of {feats}'s pictures")
    d = {k: z[k] for k in ("x", "kind", "source", "split", "path")}
    d["tex"], d["ok"] = t["tex"], t["ok"] & np.isfinite(t["tex"]).all(1)
    return {k: v[d["ok"]] for k, v in d.items()}


def _said(m: pk.KindModel, probs: np.ndarray, t: float) -> list[str]:
    out = []
    for p in probs:
        i = int(p.argmax())
        k = m.kinds[i]
        out.append(k if k != pk.PHOTO and p[i] >= t else pk.PHOTO if p[m.kinds.index(pk.PHOTO)] >= 0.05 else pk.OTHER)
    return out


def _line(name: str, truth: list[str], said: list[str]) -> str:
    others = [(a, b) for a, b in zip(truth, said) if a != pk.PHOTO]
    photos = Counter(b for a, b in zip(truth, said) if a == pk.PHOTO and b != pk.PHOTO)
    wrong = sum(1 for a, b in others if a != b and b not in (pk.PHOTO, pk.OTHER))
    return (f"{name}: other kinds named right {sum(a == b for a, b in others)}/{len(others)} (taken for photos "
            f"{sum(b == pk.PHOTO for _, b in others)}, another kind {wrong}); photos called another kind "
            f"{sum(photos.values())}/{len(truth) - len(others)} {dict(photos)}")


def compare(variant: str, feats: str, tex: str, ord_feats: str, ord_tex: str) -> None:
    def inputs(d: dict[str, np.ndarray]) -> np.ndarray:
        return d["x"] if variant == "base" else np.concatenate([d["x"], d["tex"]], 1)
    d = _load(feats, tex)
    keep = ~np.isin(d["kind"], sorted(pk.LEFT_OUT))
    d = {k: v[keep] for k, v in d.items()}
    x, kind, source, split = inputs(d), d["kind"], d["source"], d["split"]
    kinds = sorted(str(k) for k in set(kind[split == "fit"]))
    fit_i, test_i = np.where(split == "fit")[0], np.where(split == "test")[0]
    survey = pk._survey_photos(source[test_i])
    fitted = pk._fit(x[fit_i], kind[fit_i], source[fit_i], kinds, ensemble=2)
    probs = fitted.probabilities(x[test_i])
    print(f"## {variant}: {x.shape[1]} inputs")
    for t in (0.5, 0.7, 0.9):
        said = _said(fitted, probs, t)
        print(_line(f"held-out sources at {t}", list(kind[test_i][~survey]),
                    [s for s, m in zip(said, survey) if not m]))
    said = _said(fitted, probs, 0.5)
    print("everyday and RSICD test photos called another kind at 0.5:",
          sum(1 for s, m in zip(said, survey) if m and s != pk.PHOTO), "of", int(survey.sum()))
    all_i = np.concatenate([fit_i, test_i[~survey]])  # never the everyday and RSICD test photos
    final = pk._fit(x[all_i], kind[all_i], source[all_i], kinds, ensemble=2)
    o = _load(ord_feats, ord_tex)
    po = final.probabilities(inputs(o))
    for t in (0.5, 0.7, 0.9):
        said = _said(final, po, t)
        for grp in sorted(set(o["source"])):
            m = o["source"] == grp
            print(_line(f"{grp} at {t}", [str(k) for k in o["kind"][m]], [s for s, mm in zip(said, m) if mm]))


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"encoder": encoder, "features": features, "compare": compare}[cmd](*args)
