"""Everything known about one picture before a word of its alt text is chosen: the beam's finalists with
their probabilities and trust, the concepts, the detector's objects, the ImageNet tags, the text read,
the picture's distance to the model's training pictures and the route it took.

The record is plain data: ``capdesk.describe.policy`` decides from it alone what may be said and how
surely, and ``capdesk.describe.composer`` writes the words. Studies re-run the policy on stored records
(``to_record`` / ``from_record``) to choose its thresholds on val without describing the photos again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from capdesk.describe.detector import Detection

OVERHEAD_WORDS = ("aerial", "satellite", "overhead")


def overhead(manifest: dict) -> bool:
    """Whether a model's pictures are seen from above: its manifest's ``view``, else the words of its domain."""
    view = manifest.get("view")
    if isinstance(view, str):
        return view == "overhead"
    return any(w in str(manifest.get("domain", "")).lower() for w in OVERHEAD_WORDS)


@dataclass(frozen=True)
class Finalist:
    """One finished caption of the beam, as the model wrote it."""

    text: str
    confidence: float  # geometric-mean word probability
    trust: float | None = None  # capdesk.describe.trust, when the model has a trust score


@dataclass
class PictureEvidence:
    finalists: list[Finalist] = field(default_factory=list)  # best first; empty: no caption
    concepts: dict[str, float] = field(default_factory=dict)  # concept word -> probability (empty: no head)
    detections: list[Detection] = field(default_factory=list)  # calibrated, best first
    detector: bool = False  # whether a detector looked at the picture (False: none installed, or turned off)
    tags: list[tuple[str, float]] = field(default_factory=list)  # ImageNet tags from the evidence floor
    tag_threshold: float = 0.7  # the model's own floor for saying a tag
    text: str | None = None  # text read in the picture, worth saying
    model: str = ""
    domain: str = ""  # what the model's pictures are ("everyday photos")
    in_domain: bool | None = None
    ratio: float | None = None  # distance to the model's training pictures over its gate (< 1: inside)
    near: bool = False  # just outside the gate and claimed by no model more
    typical: bool = True  # inside the model's fact zone (capdesk.describe.trust.TrustModel.typical)
    has_trust: bool = False  # the model carries a trust score
    overhead: bool = False  # the model's pictures are seen from above (aerial, satellite), unlike the detector's
    plain_fact: str = ""  # what the pixels alone say ("A blank white image."), when it was asked for
    size: tuple[int, int] | None = None  # the picture's upright size in pixels (the detector's boxes are in it)
    kind: str = "photo"  # what kind of picture it is (capdesk.describe.picture_kind): photo unless surely not
    kind_probability: float | None = None  # how sure, when a kind model looked
    transparent: float = 0.0  # the share of the picture that was transparent (a cut-out: no scene)

    @property
    def caption(self) -> Finalist | None:
        return self.finalists[0] if self.finalists else None

    def best_detection(self, label: str) -> float:
        return max((d.score for d in self.detections if d.label == label), default=0.0)

    def count(self, label: str, floor: float, area_share: float = 0.0) -> int:
        """Boxes of ``label`` from ``floor``, each at least ``area_share`` of the largest of them: the
        calibrated score of a second box is its class's photo-level score, so a sliver at the edge of a
        portrait would count as a second person by its score alone."""
        boxes = [d.box for d in self.detections if d.label == label and d.score >= floor]
        areas = [(x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in boxes]
        return sum(a >= area_share * max(areas) for a in areas) if areas else 0

    def to_record(self) -> dict:
        rec = asdict(self)
        rec["detections"] = [d.to_json() for d in self.detections]
        return rec

    @classmethod
    def from_record(cls, rec: dict) -> PictureEvidence:
        r = dict(rec)
        r["finalists"] = [Finalist(**f) for f in r.get("finalists", [])]
        r["detections"] = [Detection(d["label"], float(d["score"]), tuple(d["box"]))  # type: ignore[arg-type]
                           for d in r.get("detections", [])]
        r["tags"] = [tuple(t) for t in r.get("tags", [])]
        r["size"] = tuple(r["size"]) if r.get("size") else None
        return cls(**r)
