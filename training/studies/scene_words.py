"""How often each setting word of the concepts is right, on val photos, by threshold: the share of photos
it would be said for whose human captions name it or a word of its kind (``policy.SCENE_WORDS``).

    python training/studies/facts_eval.py --split val --dump VAL.jsonl
    python training/studies/scene_words.py VAL.jsonl
"""

from __future__ import annotations

import json
import re
import sys

KIN = {
    "water": ["water", "wet", "splash", "pool", "lake", "river", "ocean", "sea", "pond", "stream", "beach", "wave",
              "surf"],
    "grass": ["grass", "grassy", "lawn", "field", "meadow", "yard"],
    "snow": ["snow", "snowy", "ski"],
    "tree": ["tree", "trees", "forest", "wood", "woods", "wooded"],
    "forest": ["forest", "woods", "wood", "wooded", "trees"],
    "wood": ["wood", "woods", "wooden", "forest", "trees"],
    "mountain": ["mountain", "mountains", "hill", "hills", "cliff", "rock"],
    "sand": ["sand", "sandy", "beach", "desert", "dirt"],
    "sky": ["sky", "air", "cloud", "clouds", "kite", "sunset", "sun", "airplane", "plane", "flying"],
    "lake": ["lake", "pond", "river", "water"],
    "ocean": ["ocean", "sea", "beach", "wave", "waves", "surf", "surfer", "surfing", "water"],
    "field": ["field", "grass", "grassy", "meadow", "lawn", "park", "farm", "pasture"],
    "building": ["building", "buildings", "city", "house", "church", "tower", "skyscraper"],
    "street": ["street", "road", "sidewalk", "city", "crosswalk", "intersection"],
    "road": ["road", "street", "highway", "path", "trail"],
    "city": ["city", "street", "buildings", "building", "downtown", "town"],
    "river": ["river", "stream", "creek", "water"],
}


def main(dump: str) -> None:
    with open(dump, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    for word, kin in KIN.items():
        pattern = re.compile(r"\b(" + "|".join(kin) + r")\b")
        cells = []
        for t in (0.5, 0.6, 0.7):
            hit = [r for r in rows if r["record"]["concepts"].get(word, 0.0) >= t]
            ok = sum(any(pattern.search(ref.lower()) for ref in r["refs"]) for r in hit)
            cells.append(f"{t}: {ok}/{len(hit)}")
        print(f"{word:9s} " + "   ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
