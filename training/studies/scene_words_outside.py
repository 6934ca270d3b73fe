"""How often each setting or subject word of the concepts is right on pictures from outside Flickr and COCO
(the ordinary tuning and held-out pictures, labelled before any run), by threshold: of the photos it would
be said for, the share whose label names it or a word of its kind.

    python training/studies/scene_words_outside.py probs OUT.npz LABELS.csv:FOLDER [LABELS.csv:FOLDER ...]
    python training/studies/scene_words_outside.py report OUT.npz [--show WORD]

The val photos' human captions (``scene_words.py``) say what Flickr and COCO photographers shot; these
labels say what ordinary pictures hold, so a word is said only where both agree it is right. Only pictures
labelled photos are counted (the words are said for photos only). Figures: docs/training.md, "Held-out
set 4, read once before any change".
"""

from __future__ import annotations

import csv
import re
import sys
import warnings
from pathlib import Path

import numpy as np

# What a label must name for the word to be right ("flower": any flower named).
KIN = {
    "flower": ["flower", "flowers", "blossom", "blossoms", "tulip", "tulips", "rose", "roses", "daisy", "daisies",
               "lily", "lilies", "anemone", "dahlia", "orchid", "bluebells", "hollyhocks", "petals", "bloom",
               "poppy", "poppies", "sunflower", "sunflowers", "susan", "susans", "crocus", "iris"],
    "sky": ["sky", "clouds", "cloud", "sunset", "sunrise"],
    "night": ["night", "stars", "milky way", "moon", "galaxy", "nebula", "comet", "dark sky"],
    "sunset": ["sunset", "sunrise", "dusk", "dawn"],
    "sea": ["sea", "ocean", "wave", "waves", "coast", "shore", "beach", "surf", "lagoon"],
    "ocean": ["sea", "ocean", "wave", "waves", "coast", "shore", "beach", "surf", "lagoon"],
    "shore": ["shore", "coast", "beach", "sea", "lake", "lagoon"],
    "beach": ["beach", "sand", "shore", "coast"],
    "pool": ["pool", "swimming pool"],
    "garden": ["garden", "flower bed", "flowers", "flower"],
    "forest": ["forest", "woods", "wood", "trees", "woodland"],
    "tree": ["tree", "trees", "forest", "woods"],
    "room": ["room", "hall", "interior", "kitchen", "office", "library", "indoors", "inside"],
    "kitchen": ["kitchen"],
    "restaurant": ["restaurant", "cafe", "dining"],
    "food": ["food", "meal", "dish", "burger", "burgers", "soup", "pizza", "bread", "cake", "fruit", "vegetable",
             "vegetables", "salad", "pasta", "meat", "cheese", "toast", "tomato", "tomatoes", "pastry", "calzone"],
    "fruit": ["fruit", "fruits", "apple", "apples", "orange", "oranges", "banana", "lemon", "lemons", "berries",
              "grapes", "tomato", "tomatoes", "citrus", "pear"],
    "statue": ["statue", "sculpture", "monument"],
    "bridge": ["bridge"],
    "fountain": ["fountain"],
    "desert": ["desert", "dunes", "sand"],
    "cloud": ["cloud", "clouds", "cloudy"],
    "landscape": ["landscape", "mountains", "valley", "hills", "field", "fields", "countryside", "canyon"],
    "stage": ["stage", "concert", "theatre", "theater"],
    "market": ["market", "stall", "stalls"],
    "stadium": ["stadium", "arena"],
    "lake": ["lake", "pond", "lagoon", "reservoir"],
    "river": ["river", "stream", "creek"],
    "mountain": ["mountain", "mountains", "peak", "hills", "alps"],
    "snow": ["snow", "snowy", "ice", "glacier", "snow-covered"],
    "water": ["water", "sea", "ocean", "lake", "river", "pool", "pond", "wave", "waves", "lagoon", "stream"],
    "building": ["building", "buildings", "house", "houses", "church", "palace", "castle", "tower", "temple",
                 "skyline", "skyscraper", "skyscrapers", "cathedral", "monument"],
    "city": ["city", "skyline", "street", "town", "buildings", "skyscrapers"],
}


def probs(out: str, *sets: str) -> None:
    from capdesk.imageio import load_image
    from capdesk.model.engine import Engine
    eng = Engine("everyday")
    rows, ps = [], []
    for spec in sets:
        labels, folder = spec.split(":", 1)
        with open(labels, encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                if r["kind"] != "photo":
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    img = load_image(str(Path(folder) / r["file"]))
                    img.load()
                feats = eng.encode_named(eng.preprocess.to_array(img)[None])["features"]
                ps.append(eng.concepts.probabilities(feats)[0])
                rows.append((f"{Path(folder).name}/{r['file']}", (r["what"] + " ; " + r["right"]).lower()))
    np.savez(out, probs=np.array(ps, dtype=np.float32), words=np.array(eng.concepts.words),
             path=np.array([f for f, _ in rows]), label=np.array([t for _, t in rows]))


def report(npz: str, *flags: str) -> None:
    z = np.load(npz)
    words = [str(w) for w in z["words"]]
    labels = [str(t) for t in z["label"]]
    show = flags[1] if len(flags) > 1 and flags[0] == "--show" else None
    print(f"{len(labels)} photos; a word: said / right, by threshold")
    cuts = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
    print(f"{'word':12s} " + " ".join(f"{c:>9}" for c in cuts))
    for w, kin in KIN.items():
        if w not in words:
            continue
        p = z["probs"][:, words.index(w)]
        pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in kin) + r")\b")
        right = np.array([bool(pattern.search(t)) for t in labels])
        print(f"{w:12s} " + " ".join(f"{int((p >= c).sum()):>4}/{int((right & (p >= c)).sum()):<4}" for c in cuts)
              + f"   labelled {int(right.sum())}")
        if w == show:
            for i in np.argsort(-p):
                if p[i] < 0.3:
                    break
                print(f"   {p[i]:.2f} {'right' if right[i] else 'WRONG'} {z['file'][i]}: {labels[i][:90]}")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"probs": probs, "report": report}[cmd](*args)
