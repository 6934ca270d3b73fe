"""Caption data set readers, all into one in-memory form: ``Record(image, captions, split)``.

Formats: Karpathy ``dataset_*.json``; the Flickr8k token file with its split lists; COCO
captions JSON; a folder of images with ``.txt`` caption sidecars (the files CapDesk
writes); a CSV of ``image,caption``. Problems with single records are collected in
``Dataset.problems`` and the record skipped: one bad line never stops a data set.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.imageio import is_image_path
from training.errors import UsageError

SPLITS = ("train", "val", "test")
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    """Lower-case words without punctuation, the way caption metrics expect them."""
    return _TOKEN_RE.findall(text.lower().replace("\u2019", "'"))


@dataclass
class Record:
    image: Path
    captions: list[list[str]]
    split: str = "train"
    raw: list[str] = field(default_factory=list)
    source: str = ""  # the collection an image came from (e.g. "flickr8k"), when the data set says


@dataclass
class Dataset:
    records: list[Record]
    problems: list[str] = field(default_factory=list)
    name: str = "data"

    def split(self, name: str) -> list[Record]:
        return [r for r in self.records if r.split == name]

    def summary(self) -> dict:
        out: dict = {"name": self.name, "skipped": len(self.problems)}
        for s in SPLITS:
            recs = self.split(s)
            out[s] = {"images": len(recs), "captions": sum(len(r.captions) for r in recs)}
        return out

    def ensure_splits(self, val_fraction: float = 0.1, seed: int = 7, min_val: int = 5) -> None:
        """Hold out part of the training images for validation when no val split exists."""
        if self.split("val") or not self.records:
            return
        train = self.split("train")
        rng = random.Random(seed)
        order = sorted(range(len(train)), key=lambda i: str(train[i].image))
        rng.shuffle(order)
        n_val = max(min_val, round(len(train) * val_fraction))
        n_val = min(n_val, max(len(train) - 1, 0))
        for i in order[:n_val]:
            train[i].split = "val"


def _add(records: dict[Path, Record], problems: list[str], image: Path, text: str,
         split: str, where: str) -> None:
    toks = tokenize(text)
    if not toks:
        problems.append(f"{where}: caption for {image.name} has no words; skipped")
        return
    rec = records.setdefault(image, Record(image, [], split))
    rec.captions.append(toks)
    rec.raw.append(text.strip())


def _finish(records: dict[Path, Record], problems: list[str], name: str,
            check_files: bool) -> Dataset:
    kept = []
    for rec in records.values():
        if check_files and not rec.image.is_file():
            problems.append(f"{rec.image}: image file not found; skipped")
            continue
        kept.append(rec)
    return Dataset(kept, problems, name)


def read_karpathy(path: Path, image_root: Path | None = None, check_files: bool = True) -> Dataset:
    path = Path(path)
    root = image_root or _guess_image_root(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    records: dict[Path, Record] = {}
    problems: list[str] = []
    for i, img in enumerate(data.get("images", [])):
        fn = img.get("filename")
        if not fn:
            problems.append(f"{path.name}: image entry {i} has no filename; skipped")
            continue
        image = root / img.get("filepath", "") / fn
        split = {"restval": "train"}.get(img.get("split", "train"), img.get("split", "train"))
        for s in img.get("sentences", []):
            text = s.get("raw") or " ".join(s.get("tokens", []))
            _add(records, problems, image, text, split, f"{path.name}[{fn}]")
        if image not in records:
            problems.append(f"{path.name}: {fn} has no usable captions; skipped")
        else:
            records[image].source = str(img.get("source", ""))
    return _finish(records, problems, data.get("dataset", path.stem), check_files)


def _guess_image_root(path: Path) -> Path:
    for cand in (path.parent / "images", path.parent):
        if cand.is_dir():
            return cand
    return path.parent


def read_flickr8k(token_file: Path, image_root: Path, split_files: dict[str, Path] | None = None,
                  check_files: bool = True) -> Dataset:
    """``Flickr8k.token.txt`` (``name.jpg#n<TAB>caption``) plus the official split lists."""
    token_file = Path(token_file)
    split_of: dict[str, str] = {}
    if split_files is None:
        d = token_file.parent
        split_files = {s: d / f"Flickr_8k.{n}Images.txt" for s, n in
                       (("train", "train"), ("val", "dev"), ("test", "test"))}
    for split, f in split_files.items():
        if Path(f).is_file():
            for line in Path(f).read_text(encoding="utf-8").split():
                split_of[line.strip()] = split
    records: dict[Path, Record] = {}
    problems: list[str] = []
    for n, line in enumerate(token_file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if "\t" not in line:
            problems.append(f"{token_file.name}:{n}: no tab between image and caption; skipped")
            continue
        key, text = line.split("\t", 1)
        name = key.split("#")[0]
        if split_of and name not in split_of:
            continue  # images outside the official lists are not part of the data set
        _add(records, problems, Path(image_root) / name, text, split_of.get(name, "train"),
             f"{token_file.name}:{n}")
    return _finish(records, problems, "flickr8k", check_files)


def read_coco(captions_json: Path, image_root: Path, split: str = "train",
              check_files: bool = True) -> Dataset:
    captions_json = Path(captions_json)
    data = json.loads(captions_json.read_text(encoding="utf-8"))
    names = {im["id"]: im["file_name"] for im in data.get("images", [])}
    records: dict[Path, Record] = {}
    problems: list[str] = []
    for ann in data.get("annotations", []):
        name = names.get(ann.get("image_id"))
        if name is None:
            problems.append(f"{captions_json.name}: annotation {ann.get('id')} names unknown image; skipped")
            continue
        _add(records, problems, Path(image_root) / name, ann.get("caption", ""), split,
             f"{captions_json.name}[{name}]")
    return _finish(records, problems, captions_json.stem, check_files)


def read_sidecar_folder(folder: Path, recursive: bool = True) -> Dataset:
    """Images with a caption file beside them: ``photo.txt`` or ``photo.jpg.txt``, one caption a line."""
    folder = Path(folder)
    records: dict[Path, Record] = {}
    problems: list[str] = []
    files = sorted(folder.rglob("*") if recursive else folder.iterdir())
    for img in files:
        if not img.is_file() or not is_image_path(img) or any(p.startswith(".") for p in img.relative_to(folder).parts):
            continue
        side = next((c for c in (img.with_name(img.name + ".txt"), img.with_suffix(".txt")) if c.is_file()), None)
        if side is None:
            problems.append(f"{img}: no caption sidecar (.txt) beside it; skipped")
            continue
        try:
            lines = _read_caption_file(side)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{side}: cannot read captions ({exc}); skipped")
            continue
        except ValueError as exc:
            problems.append(f"{side}: {exc}; skipped")
            continue
        before = len(problems)
        for line in lines:
            if line.strip():
                _add(records, problems, img, line, "train", side.name)
        if img not in records and len(problems) == before:
            problems.append(f"{side}: no captions in file; skipped")
    return _finish(records, problems, folder.name, check_files=False)


MAX_CAPTION_FILE_BYTES = 1 << 20  # the captions of one picture: a thousand long ones fit in far less


def _read_caption_file(side: Path) -> list[str]:
    """The lines of one picture's caption file, read with a bound: a huge file (a 2 GB one in a shared
    folder) is refused, never read whole."""
    with side.open("rb") as fh:
        data = fh.read(MAX_CAPTION_FILE_BYTES + 1)
    if len(data) > MAX_CAPTION_FILE_BYTES:
        raise ValueError(f"too large for a caption file (over {MAX_CAPTION_FILE_BYTES >> 20} MiB)")
    return data.decode("utf-8").splitlines()


def read_csv(path: Path, image_root: Path | None = None) -> Dataset:
    """CSV with columns ``image,caption`` (and optionally ``split``); header row optional."""
    path = Path(path)
    root = image_root or path.parent
    records: dict[Path, Record] = {}
    problems: list[str] = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.reader(fh))
    if rows and [c.strip().lower() for c in rows[0][:2]] == ["image", "caption"]:
        header = [c.strip().lower() for c in rows[0]]
        rows = rows[1:]
        start = 2
    else:
        header, start = ["image", "caption", "split"], 1
    split_col = header.index("split") if "split" in header else None
    for n, row in enumerate(rows, start):
        if len(row) < 2 or not row[0].strip():
            problems.append(f"{path.name}:{n}: expected image,caption; skipped")
            continue
        split = row[split_col].strip() if split_col is not None and len(row) > split_col else "train"
        if split not in SPLITS:
            split = "train"
        _add(records, problems, root / row[0].strip(), row[1], split, f"{path.name}:{n}")
    return _finish(records, problems, path.stem, check_files=True)


def read_any(path: Path, image_root: Path | None = None) -> Dataset:
    """Pick the reader by what ``path`` is."""
    path = Path(path)
    try:
        return _read_any(path, image_root)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_any(path: Path, image_root: Path | None) -> Dataset:
    if path.is_dir():
        karpathy = sorted(path.glob("dataset_*.json"))
        if karpathy:
            return read_karpathy(karpathy[0], image_root)
        return read_sidecar_folder(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".csv":
        return read_csv(path, image_root)
    if path.suffix.lower() == ".txt" and "token" in path.name.lower():
        return read_flickr8k(path, image_root or path.parent / "Flicker8k_Dataset")
    if path.suffix.lower() == ".json":
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: not a JSON caption file ({exc})") from None
        if "annotations" in head:
            return read_coco(path, image_root or path.parent)
        return read_karpathy(path, image_root)
    raise UsageError(f"{path}: unknown data format (expected a folder, .csv, .json or Flickr8k token file)")


def group_by_split(records: list[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        out[r.split].append(r)
    return out
