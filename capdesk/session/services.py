"""What every front end (the CLI's commands, the window's session and dialogs) sets up the same way:
the describer, the speaker, the sidecar writer's options, and the one-line summaries they show.

No Qt and no printing here: each function returns what went wrong as one line, and the caller
says it where its user will see it (stderr for the CLI, the status line for the window).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from capdesk.describe.describer import OCR_MISSING, DescribeOptions, Describer

if TYPE_CHECKING:
    from capdesk.speech import Speaker, Voice


class SetupError(Exception):
    """A service that cannot start as asked; ``str()`` is one line for the user."""


def open_describer(model: str | None, provider: str | None, beam: int | None,
                   options: DescribeOptions) -> tuple[Describer, list[str]]:
    """The describer the options ask for, and warnings worth one line each (a broken model
    bundle, text reading asked for but not installed). Raises ``SetupError`` for a model or
    provider that cannot be used."""
    from capdesk.model.bundle import BundleError
    from capdesk.model.providers import ProviderError

    try:
        describer = Describer(model, provider=provider, beam=beam, options=options)
    except ProviderError:
        raise SetupError(provider_unavailable(provider or "")) from None
    except BundleError as exc:
        raise SetupError(str(exc)) from None
    warnings = []
    if options.ocr == "always":
        from capdesk.describe import ocr

        if not ocr.available():
            warnings.append(f"--ocr always: {OCR_MISSING}")
    # A broken bundle is said once; the others go on.
    warnings += [f"model skipped: {p}" for p in dict.fromkeys(describer.problems)]
    return describer, warnings


def provider_unavailable(requested: str) -> str:
    """Why ``requested`` cannot be used, naming the providers this onnxruntime offers by the short
    names ``--provider`` takes."""
    from capdesk.model import providers

    names = []
    for full in providers.available():
        short = next((a for a, f in providers.ALIASES.items() if f == full), providers.short_name(full))
        names.append(short)
    return f"execution provider {requested!r} is not available; this onnxruntime offers: {', '.join(names)}"


def open_speaker(voice: Voice | None = None, wait: bool = True) -> tuple[Speaker | None, str | None]:
    """(speaker, None), or (None, why speech cannot be played here)."""
    from capdesk.speech import Speaker

    speaker = Speaker(voice, wait=wait)
    if speaker.error:
        error = speaker.error
        speaker.close()
        return None, error
    return speaker, None


SOURCE_NAMES = {"flickr8k": "Flickr8k", "coco": "COCO"}


def metrics_line(manifest: Mapping[str, Any]) -> str:
    """The test figures the README gives, at beam 3: by data set where the test split mixes several
    (everyday: 'Flickr8k test BLEU-4 0.207 CIDEr 0.553; COCO test ...'; their mixture's CIDEr is in no
    document), the largest first; else the whole split's ('test BLEU-4 0.405 CIDEr 2.424'); '' without."""
    test = manifest.get("metrics", {}).get("test", {})
    by = test.get("by_source") or {}
    parts = [(d.get("images", 0), f"{SOURCE_NAMES.get(src, src)} test BLEU-4 {f['BLEU-4']:.3f} CIDEr {f['CIDEr']:.3f}")
             for src, d in by.items() if {"BLEU-4", "CIDEr"} <= set(f := d.get("beam3") or {})]
    if parts:
        return "; ".join(text for _, text in sorted(parts, key=lambda p: -p[0]))
    fig = test.get("beam3") or {}
    if "BLEU-4" not in fig or "CIDEr" not in fig:
        return ""
    return f"test BLEU-4 {fig['BLEU-4']:.3f} CIDEr {fig['CIDEr']:.3f}"
