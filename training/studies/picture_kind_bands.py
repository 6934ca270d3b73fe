"""How often each kind the picture-kind network names is right, by how sure it is, on whole sources it never
saw: the network is fitted on the fit pictures alone (as ``picture_kind.py fit`` measures it) and judged on the
held-out sources, in bands of its probability. Which kinds are said as fact from which probability is chosen
from this (``capdesk.describe.policy.GUESSED_UNDER_FACT``).

    python training/studies/picture_kind_bands.py /work/kinddata/feats12.npz [--ensemble 5]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from training.studies import picture_kind as T  # noqa: E402

BANDS = ((0.5, 0.7), (0.7, 0.9), (0.9, 1.01))


def bands(feats: Path, ensemble: int) -> None:
    z = np.load(feats)
    keep = ~np.isin(z["kind"], sorted(T.LEFT_OUT))
    x, kind, source, split = (z[k][keep] for k in ("x", "kind", "source", "split"))
    kinds = sorted(str(k) for k in set(kind[split == "fit"]))
    fit_i = np.where(split == "fit")[0]
    test_i = np.where((split == "test") & np.isin(kind, kinds))[0]
    fitted = T._fit(x[fit_i], kind[fit_i], source[fit_i], kinds, ensemble=ensemble)
    table: dict[tuple[str, tuple[float, float]], Counter] = defaultdict(Counter)
    for p, truth in zip(fitted.probabilities(x[test_i]), kind[test_i]):
        j = int(p.argmax())
        if kinds[j] == T.PHOTO or p[j] < BANDS[0][0]:
            continue
        band = next(b for b in BANDS if b[0] <= p[j] < b[1])
        table[(kinds[j], band)]["right" if kinds[j] == str(truth) else "wrong"] += 1
    for (said, band), c in sorted(table.items()):
        print(f"{said:10s} {band[0]:.1f}-{min(band[1], 1.0):.1f}: right {c['right']}, wrong {c['wrong']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("feats", type=Path)
    ap.add_argument("--ensemble", type=int, default=5)
    a = ap.parse_args()
    bands(a.feats, a.ensemble)


if __name__ == "__main__":
    main()
