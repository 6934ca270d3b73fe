"""Pictures as evidence records, for testing the policy and the composer without the models."""

from __future__ import annotations

from capdesk.describe import composer, policy
from capdesk.describe.alttext import Wording
from capdesk.describe.detector import Detection
from capdesk.describe.evidence import Finalist, PictureEvidence


def evidence(caption: str = "A dog runs on the grass.", *, confidence: float = 0.9, trust: float | None = None,
             finalists: list[tuple[str, float | None]] = (), in_domain: bool | None = True,
             tags: list[tuple[str, float]] = (), text: str | None = None,
             detections: list[tuple[str, float] | tuple[str, float, tuple[int, int, int, int]]] | None = None,
             domain: str = "everyday photos", plain_fact: str = "", typical: bool = True,
             near: bool = False, overhead: bool = False, tag_threshold: float = 0.35,
             concepts: dict[str, float] | None = None, kind_probability: float | None = None,
             ratio: float | None = None) -> PictureEvidence:
    """One picture's evidence; ``detections`` None: no detector looked; a detection without a box
    gets one that fills the left half of a 200 x 100 picture."""
    fins = [Finalist(caption, confidence, trust)] if caption else []
    fins += [Finalist(t, confidence, tr) for t, tr in finalists]
    dets = [Detection(d[0], d[1], d[2] if len(d) > 2 else (0, 0, 100, 100)) for d in detections or ()]
    return PictureEvidence(fins, detections=dets, detector=detections is not None, tags=list(tags),
                           tag_threshold=tag_threshold, text=text, domain=domain, in_domain=in_domain,
                           typical=typical, near=near, has_trust=trust is not None, plain_fact=plain_fact,
                           size=(200, 100), overhead=overhead, concepts=dict(concepts or {}),
                           kind_probability=kind_probability, ratio=ratio)


def said(caption: str = "A dog runs on the grass.", *, tags_mode: str = "auto", show_guess: bool = False,
         low_confidence: float = 0.35, **kw) -> Wording:
    """The alt text the policy and the composer make of one picture's evidence."""
    d = policy.decide(evidence(caption, **kw), policy.Options(tags_mode, show_guess, low_confidence))
    return composer.alt_text(d, show_guess)


def whole(caption: str = "A dog runs on the grass.", **kw) -> str:
    """The caption as the policy mended it, whole (the alt text says only its subject and place where it is
    a guess; the long description says it whole)."""
    return policy.decide(evidence(caption, **kw)).caption


def mended(caption: str, **kw) -> list[str]:
    """What the policy changed in one picture's caption, as ``--json`` says it."""
    return policy.decide(evidence(caption, **kw)).mended
