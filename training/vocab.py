"""Word vocabulary with ``<pad> <start> <end> <unk>``, saved as ``vocab.json``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

SPECIALS = ("<pad>", "<start>", "<end>", "<unk>")
PAD, START, END, UNK = range(4)


class Vocab:
    def __init__(self, itos: list[str]) -> None:
        if tuple(itos[:4]) != SPECIALS:
            raise ValueError(f"vocabulary must begin with {SPECIALS}")
        self.itos = list(itos)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    @classmethod
    def build(cls, captions: Iterable[list[str]], min_count: int = 5) -> Vocab:
        counts = Counter(w for cap in captions for w in cap)
        words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        return cls(list(SPECIALS) + words)

    def extend(self, captions: Iterable[list[str]], min_count: int = 2) -> list[str]:
        """Add new words (keeping every old index); returns the words added."""
        counts = Counter(w for cap in captions for w in cap if w not in self.stoi)
        new = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        for w in new:
            self.stoi[w] = len(self.itos)
            self.itos.append(w)
        return new

    def too_rare(self, captions: Iterable[list[str]], min_count: int = 2) -> dict[str, int]:
        """New words used fewer than ``min_count`` times (word -> times): not learnt, so the person is told."""
        counts = Counter(w for cap in captions for w in cap if w not in self.stoi)
        return {w: c for w, c in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0])) if c < min_count}

    def encode(self, tokens: list[str], max_len: int) -> list[int]:
        ids = [self.stoi.get(w, UNK) for w in tokens[:max_len]]
        return [START, *ids, END]

    def decode(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            if i == END:
                break
            if i in (PAD, START):
                continue
            out.append(self.itos[i])
        return out

    def to_json(self) -> dict:
        return {"itos": self.itos, "pad": PAD, "start": START, "end": END, "unk": UNK}

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocab:
        return cls(json.loads(Path(path).read_text(encoding="utf-8"))["itos"])
