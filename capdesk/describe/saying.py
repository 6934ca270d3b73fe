"""How surely one caption may be said: as fact, as "Probably ...", or withheld, by its trust score (or the
model's confidence where the bundle has no trust model), the picture's likeness to the model's photos and
the user's own threshold. The numbers are the model's ``Saying`` settings (``capdesk.describe.settings``).
"""

from __future__ import annotations

from dataclasses import dataclass

from capdesk.describe.evidence import Finalist, PictureEvidence
from capdesk.describe.picture_kind import PHOTO
from capdesk.describe.seeing import close_up
from capdesk.describe.settings import PolicySettings
from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD
from capdesk.status import SaidAs

Standing = tuple[SaidAs, "str | None"]  # how surely, and why not as fact


@dataclass
class Options:
    tags: str = "auto"  # "auto" | "always" | "never"
    show_guess: bool = False
    low_confidence: float = DEFAULT_CONFIDENCE_THRESHOLD  # the user's threshold (a stricter one takes facts away)


def standing(ev: PictureEvidence, f: Finalist, opts: Options, s: PolicySettings) -> Standing:
    """How surely one caption may be said, by its trust (or confidence) and the picture's place."""
    if ev.in_domain is False and not (ev.near and ev.has_trust):
        where = ev.domain or "its training pictures"
        return SaidAs.WITHHELD, f"the picture is unlike those the model knows ({where}), so its scene caption was " \
                                "withheld"
    # (not for a model of photos seen from above: aerial forests and fields read as texture, and its own
    # setting, overhead_photo, makes such captions a guess)
    if ev.kind == PHOTO and not ev.overhead and ev.kind_probability is not None \
            and ev.kind_probability < s.saying.caption_photo:
        return SaidAs.WITHHELD, (f"the picture may not be a photo (photo probability {ev.kind_probability:.2f}), "
                                 "unlike the photos the model learnt from, so its scene caption was withheld")
    if ev.has_trust and f.trust is not None:
        if f.trust < s.saying.trust_probably:
            return SaidAs.WITHHELD, (f"the caption is more likely than not to name something that is not there "
                                     f"(trust {f.trust:.2f}), so it was withheld")
        if f.trust < s.saying.trust_fact:
            return SaidAs.PROBABLY, f"the caption may name something that is not there (trust {f.trust:.2f})"
        if opts.low_confidence != DEFAULT_CONFIDENCE_THRESHOLD and f.confidence < opts.low_confidence:
            return SaidAs.PROBABLY, f"the model was unsure (confidence {f.confidence:.2f})"
        if not ev.typical or ev.in_domain is False:
            return SaidAs.PROBABLY, ("the picture is less like the model's training photos than those its captions "
                                     "are said as fact for, so the caption may be wrong")
        return SaidAs.FACT, None
    if f.confidence < opts.low_confidence:
        return SaidAs.PROBABLY, f"the model was unsure (confidence {f.confidence:.2f})"
    if ev.overhead and close_up(ev, s):
        return SaidAs.PROBABLY, "the objects seen in the picture are close up, unlike the model's pictures"
    if ev.overhead and ev.kind_probability is not None and ev.kind_probability < s.saying.overhead_photo:
        return SaidAs.PROBABLY, "the picture may not be a photo taken from above, so its caption may be wrong"
    if ev.overhead and ev.ratio is not None and ev.ratio >= s.saying.overhead_inside:
        return SaidAs.PROBABLY, "the picture is at the edge of what the model knows, so its caption may be wrong"
    return SaidAs.FACT, None


_ORDER = {SaidAs.FACT: 0, SaidAs.PROBABLY: 1, SaidAs.WITHHELD: 2, SaidAs.NONE: 3}


def weaker(a: Standing, b: Standing) -> Standing:
    """The less sure of two standings (the first where they are as sure)."""
    return a if _ORDER[a[0]] >= _ORDER[b[0]] else b
