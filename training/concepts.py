"""The concept head: which words a person would use for a picture, from the encoder's features
(the word detector of Fang et al. 2015, "From captions to visual concepts and back"; the attribute
input of the LSTM-A family, Yao et al. 2017).

A small multi-label network over the mean of the encoder's grid features. Its words are COCO's
object categories (named as a person would say them, ``capdesk.describe.objects``) and the content
words the training captions use most (people, animals, things, colours, actions, places). A word is
positive for a photo when any of its human captions uses it. Trained on the train split, its
probabilities calibrated on val (one temperature), exported as ``concepts.onnx``:
``features [B, L, D] -> concepts [B, V]`` (probabilities), with ``concepts.json`` naming the words.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from torch import nn

from capdesk.describe.objects import OBJECTS, PHRASES, mentions, said_name, tokens

# Words that say nothing about what is in the picture (articles, prepositions, numbers, fillers).
_STOP_TEXT = """
a an the and or of in on at to with for from by into onto over under near next its it is are was were be been
being his her their there this that these those some one two three four five six several many other each
while as up down out off through front top side behind around across along another his their they he she we
you i very has have having who which what where when how than then other small large big little long short
top bottom left right background foreground area something image picture photo view looks look looking
stands standing sits sitting near beside against together each other another about just like very
"""
STOPWORDS = frozenset(_STOP_TEXT.split())
MIN_CATEGORY_IMAGES = 5
MIN_WORD_IMAGES = 25
MAX_WORDS = 700


def singular(w: str) -> str:
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def words_of_captions(captions: list[str]) -> set[str]:
    """The concept words a photo's human captions use: the categories they name, as a person says
    them, and their other content words (singular)."""
    out = {said_name(c) for cap in captions for c in mentions(cap)}
    category_words = {w for phrase in PHRASES for w in phrase}
    for cap in captions:
        for w in tokens(cap):
            if w in STOPWORDS or w in category_words or len(w) < 3 or not w.isalpha():
                continue
            out.add(singular(w))
    return out


def build_vocab(train_captions: list[list[str]]) -> list[str]:
    """Categories seen in at least ``MIN_CATEGORY_IMAGES`` photos first, then the most frequent content
    words, ``MAX_WORDS`` in all."""
    df = Counter(w for caps in train_captions for w in words_of_captions(caps))
    cats = sorted({said_name(c) for c in OBJECTS} & {w for w, n in df.items() if n >= MIN_CATEGORY_IMAGES})
    rest = [w for w, n in df.most_common() if n >= MIN_WORD_IMAGES and w not in cats]
    return cats + rest[: MAX_WORDS - len(cats)]


def labels(captions: list[list[str]], vocab: list[str]) -> np.ndarray:
    index = {w: i for i, w in enumerate(vocab)}
    y = np.zeros((len(captions), len(vocab)), np.float32)
    for n, caps in enumerate(captions):
        for w in words_of_captions(caps):
            if w in index:
                y[n, index[w]] = 1.0
    return y


class ConceptHead(nn.Module):
    def __init__(self, feature_dim: int, n_words: int, hidden: int = 384, dropout: float = 0.5) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Dropout(0.2), nn.Linear(feature_dim, hidden), nn.ReLU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, n_words))
        self.register_buffer("temperature", torch.ones(()))

    def logits(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.net(pooled)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """features [B, L, D] -> calibrated probabilities [B, V]."""
        return torch.sigmoid(self.net(features.mean(1)) / self.temperature)


def train_head(x: np.ndarray, y: np.ndarray, xv: np.ndarray, yv: np.ndarray, epochs: int = 40,
               seed: int = 7, log=print) -> tuple[ConceptHead, dict]:
    """Adam on binary cross-entropy, the epoch with the best val loss kept, then one temperature
    fitted on val (the grid that minimises val cross-entropy)."""
    torch.manual_seed(seed)
    head = ConceptHead(x.shape[1], y.shape[1])
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=1e-4)
    X, Y = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)
    XV, YV = torch.from_numpy(xv.astype(np.float32)), torch.from_numpy(yv)
    loss_fn = nn.BCEWithLogitsLoss()
    best, best_state, history = math.inf, None, []
    for epoch in range(epochs):
        head.train()
        perm = torch.randperm(len(X))
        for s in range(0, len(X), 128):
            idx = perm[s:s + 128]
            opt.zero_grad()
            loss = loss_fn(head.logits(X[idx]), Y[idx])
            loss.backward()
            opt.step()
        head.eval()
        with torch.no_grad():
            vl = float(loss_fn(head.logits(XV), YV))
        history.append(round(vl, 5))
        if vl < best:
            best, best_state = vl, {k: v.clone() for k, v in head.state_dict().items()}
        log(f"concepts epoch {epoch + 1}: val loss {vl:.4f}")
    head.load_state_dict(best_state)
    head.eval()
    with torch.no_grad():
        lv = head.logits(XV)
        temps = np.arange(0.5, 2.51, 0.05)
        losses = [float(loss_fn(lv / t, YV)) for t in temps]
    t = float(temps[int(np.argmin(losses))])
    head.temperature.fill_(t)
    return head, {"val_loss": round(best, 5), "temperature": round(t, 3), "history": history}


def quality(p: np.ndarray, y: np.ndarray, vocab: list[str], threshold: float = 0.5) -> dict:
    """Precision and recall of the words said at ``threshold``, and how well calibrated the
    probabilities are (expected calibration error over ten bins)."""
    said = p >= threshold
    tp = float((said & (y > 0)).sum())
    prec = tp / max(float(said.sum()), 1.0)
    rec = tp / max(float((y > 0).sum()), 1.0)
    bins = np.clip((p * 10).astype(int), 0, 9)
    ece = sum(abs(float(p[bins == b].mean()) - float(y[bins == b].mean())) * (bins == b).sum()
              for b in range(10) if (bins == b).any()) / p.size
    return {"threshold": threshold, "precision": round(prec, 3), "recall": round(rec, 3),
            "ece": round(float(ece), 4), "words": len(vocab)}


def export(head: ConceptHead, vocab: list[str], grid: int, folder: Path, info: dict) -> dict:
    """Write ``concepts.onnx`` and ``concepts.json`` into a bundle folder; the manifest section."""
    folder.mkdir(parents=True, exist_ok=True)
    head.eval()
    dummy = torch.zeros(1, grid, head.net[1].in_features)
    torch.onnx.export(head, (dummy,), str(folder / "concepts.onnx"), input_names=["features"],
                      output_names=["concepts"], opset_version=17, dynamo=False,
                      dynamic_axes={"features": {0: "batch"}, "concepts": {0: "batch"}})
    import onnx

    from training.shrink import float16_storage

    # float16 storage keeps the bundle small (the graph casts back to float32 when it loads)
    path = folder / "concepts.onnx"
    onnx.save(float16_storage(onnx.load(str(path))), str(path))
    (folder / "concepts.json").write_text(json.dumps({"words": vocab}, indent=0), encoding="utf-8")
    return {"file": "concepts.onnx", "words": "concepts.json", "size": len(vocab), **info}
