"""The schema of a bundle's ``manifest.json``: every field the app reads, with its type and range.

A manifest is someone else's file. Before anything in it is trusted (a file name to open, a
size to read up to, a number to decode with) it is checked here, so a malformed manifest is
one clear refusal at discovery or import, never a ``KeyError`` later in every caption.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from capdesk import limits
from capdesk.model import decoders

FORMAT_VERSION = 1
# What a bundle of the default decoder kind must list; another kind lists its own graphs in place of
# the decoder's two (``decoders.Kind.graphs``).
REQUIRED_FILES = ("encoder.onnx", *decoders.LstmAttention.GRAPHS, "vocab.json")
SPECIAL_TOKENS = ("<pad>", "<start>", "<end>", "<unk>")
MANIFEST_MAX_BYTES = 4 << 20  # the shipped manifests are ~10 KB, most of it training history
# Hard caps on what a manifest may declare: a graph over 2 GiB cannot be a protobuf anyway; the
# small files are read whole into memory, so they get a much smaller ceiling.
FILE_MAX_BYTES = 2 << 30
SMALL_FILE_MAX_BYTES = {".json": 16 << 20, ".npz": 64 << 20}
FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHA256 = re.compile(r"[0-9a-f]{64}")


class ManifestError(ValueError):
    """What is wrong with a manifest, in words (the caller adds where)."""


def is_model_name(name: object) -> bool:
    return isinstance(name, str) and re.fullmatch(limits.MODEL_NAME_PATTERN, name) is not None


def parse(raw: bytes) -> dict:
    """The manifest object from raw bytes; ManifestError when it is not readable JSON at all."""
    if len(raw) > MANIFEST_MAX_BYTES:
        raise ManifestError(f"manifest.json is larger than {MANIFEST_MAX_BYTES >> 20} MiB")
    try:
        m = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ManifestError("manifest.json is unreadable (nested too deeply)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"manifest.json is unreadable ({exc})") from None
    return m


def file_cap(name: str) -> int:
    for suffix, cap in SMALL_FILE_MAX_BYTES.items():
        if name.endswith(suffix):
            return cap
    return FILE_MAX_BYTES


# -- small typed getters: each names the field that is wrong -----------------------------------
def _get(d: dict, key: str, where: str, kind: type | tuple[type, ...], required: bool = True) -> Any:
    if key not in d:
        if required:
            raise ManifestError(f"manifest.json lacks {where + key!r}")
        return None
    v = d[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int to Python; never to a manifest.
    if isinstance(v, bool) and bool not in kinds or not isinstance(v, kinds):
        names = " or ".join("number" if k is float else {dict: "object", list: "list", str: "text",
                                                         int: "whole number", bool: "true/false"}.get(k, k.__name__)
                            for k in kinds)
        raise ManifestError(f"manifest {where + key!r} must be {names}")
    return v


def _int(d: dict, key: str, where: str, lo: int, hi: int, required: bool = True) -> int | None:
    v = _get(d, key, where, int, required)
    if v is not None and not lo <= v <= hi:
        raise ManifestError(f"manifest {where + key!r} must be from {lo} to {hi} (is {v})")
    return v


def _num(d: dict, key: str, where: str, lo: float, hi: float, required: bool = True) -> float | None:
    v = _get(d, key, where, (int, float), required)
    if v is not None and not (math.isfinite(v) and lo <= v <= hi):
        raise ManifestError(f"manifest {where + key!r} must be a number from {lo:g} to {hi:g}")
    return v


def _numbers(d: dict, key: str, where: str, n: int, nonzero: bool = False) -> None:
    v = _get(d, key, where, list)
    if len(v) != n or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                              and (x != 0 or not nonzero) for x in v):
        raise ManifestError(f"manifest {where + key!r} must be {n} finite{' non-zero' if nonzero else ''} numbers")


def validate(m: object) -> dict:
    """``m`` itself when it is a sound manifest; ManifestError naming the first wrong field otherwise."""
    if not isinstance(m, dict):
        raise ManifestError("manifest.json is not a JSON object")
    ver = m.get("format_version")
    if ver != FORMAT_VERSION or isinstance(ver, bool):
        raise ManifestError(f"manifest format_version {ver!r} is not supported (expected {FORMAT_VERSION})")
    for key in ("name", "encoder", "decoder", "vocab", "files"):
        if key not in m:
            raise ManifestError(f"manifest.json lacks {key!r}")
    name = _get(m, "name", "", str)
    if not is_model_name(name):
        raise ManifestError(f"model name {name[:80]!r} is not a plain name (letters, digits, '.', '_', '-'; "
                            "at most 64, not starting with a dot)")
    for key in ("description", "domain", "created"):
        _get(m, key, "", str, required=False)
    if isinstance(m["decoder"], dict):  # not an object: refused below, where it always was
        _get(m["decoder"], "kind", "decoder.", str, required=False)
    try:
        kind = decoders.kind_of(m)
    except ValueError as exc:
        raise ManifestError(str(exc)) from None

    files = _get(m, "files", "", dict)
    for fn, entry in files.items():
        if not FILE_NAME.fullmatch(fn) or fn == "manifest.json":
            raise ManifestError(f"manifest lists a file {fn[:80]!r}: only plain file names are allowed")
        if not isinstance(entry, dict):
            raise ManifestError(f"manifest 'files.{fn}' must be an object with sha256 and size")
        sha = _get(entry, "sha256", f"files.{fn}.", str)
        if not SHA256.fullmatch(sha):
            raise ManifestError(f"manifest 'files.{fn}.sha256' is not a sha256 (64 lower-case hex digits)")
        _int(entry, "size", f"files.{fn}.", 0, file_cap(fn))
    missing = [f for f in ("encoder.onnx", *kind.graphs, "vocab.json") if f not in files]
    if missing:
        raise ManifestError(f"manifest lists no {', '.join(missing)}")

    enc = _get(m, "encoder", "", dict)
    size = _get(enc, "input_size", "encoder.", int)
    if not limits.MODEL_INPUT_SIZE_MIN <= size <= limits.MODEL_INPUT_SIZE_MAX:
        raise ManifestError(f"manifest 'encoder.input_size' is {size}: it must be from {limits.MODEL_INPUT_SIZE_MIN} "
                            f"to {limits.MODEL_INPUT_SIZE_MAX} (every picture is scaled to this square, and a "
                            "larger one would need gigabytes of memory per batch)")
    _numbers(enc, "mean", "encoder.", 3)
    _numbers(enc, "std", "encoder.", 3, nonzero=True)
    _int(enc, "grid", "encoder.", 1, limits.MODEL_GRID_MAX)
    _int(enc, "feature_dim", "encoder.", 1, 65536)
    outs = _get(enc, "outputs", "encoder.", list, required=False)
    if outs is not None and not all(isinstance(o, str) for o in outs):
        raise ManifestError("manifest 'encoder.outputs' must be a list of names")
    key = _get(enc, "features_sha256", "encoder.", str, required=False)
    if key is not None and not SHA256.fullmatch(key):
        raise ManifestError("manifest 'encoder.features_sha256' is not a sha256 (64 lower-case hex digits)")
    _get(m, "decoder", "", dict)

    voc = _get(m, "vocab", "", dict)
    size = _int(voc, "size", "vocab.", len(SPECIAL_TOKENS), 10_000_000)
    specials = _get(voc, "specials", "vocab.", dict)
    for tok in SPECIAL_TOKENS:
        _int(specials, tok, "vocab.specials.", 0, size - 1)

    _int(m, "max_caption_length", "", 1, 500, required=False)
    dec = _get(m, "decoding", "", dict, required=False)
    if dec is not None:
        _int(dec, "beam", "decoding.", limits.BEAM_MIN, limits.BEAM_MAX, required=False)
        _num(dec, "length_alpha", "decoding.", 0.0, 10.0, required=False)
        _int(dec, "block_ngram", "decoding.", 0, 10, required=False)

    for section, lo in (("tags", 0.0), ("domain_gate", 1e-12)):
        sec = _get(m, section, "", dict, required=False)
        if sec is None:
            continue
        fn = _get(sec, "file", section + ".", str)
        if fn not in files:
            raise ManifestError(f"manifest '{section}.file' names {fn[:80]!r}, which 'files' does not list")
        _num(sec, "threshold", section + ".", lo, 1.0 if section == "tags" else 1e12,
             required=section == "domain_gate")
        if section == "tags":
            _int(sec, "max_tags", "tags.", 0, 100, required=False)

    metrics = _get(m, "metrics", "", dict, required=False)
    if metrics is not None:
        test = _get(metrics, "test", "metrics.", dict, required=False) or {}
        fig = _get(test, "beam3", "metrics.test.", dict, required=False) or {}
        for key in ("BLEU-4", "CIDEr"):
            _num(fig, key, "metrics.test.beam3.", 0.0, 100.0, required=False)
    return m
