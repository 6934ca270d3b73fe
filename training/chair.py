"""Object hallucination, measured the way Rohrbach et al. (2018, "Object Hallucination in Image
Captioning") do in their caption-reference form: an object of COCO's 80 categories (with the words
people use for each, ``capdesk.describe.objects``) that a caption names and none of the photo's human
captions names counts as hallucinated.

CHAIRs: the share of captions that name at least one hallucinated object.
CHAIRi: the share of object mentions that are hallucinated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from capdesk.describe.objects import mentions


def reference_objects(refs: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for r in refs:
        out.update(mentions(r))
    return out


def hallucinated(caption: str, refs: Iterable[str]) -> list[str]:
    """The categories ``caption`` names that no reference names."""
    seen = reference_objects(refs)
    return [c for c in mentions(caption) if c not in seen]


def chair(hyps: Mapping[str, str], refs: Mapping[str, list[str]]) -> dict[str, float]:
    """CHAIRs and CHAIRi over the captions ``hyps`` (id -> caption), with their counts; empty captions
    (nothing said) count as captions with no object."""
    captions = with_bad = mentioned = bad = 0
    for k, cap in hyps.items():
        objs = mentions(cap)
        wrong = [c for c in objs if c not in reference_objects(refs[k])]
        captions += 1
        with_bad += bool(wrong)
        mentioned += len(objs)
        bad += len(wrong)
    return {"CHAIRs": with_bad / captions if captions else 0.0, "CHAIRi": bad / mentioned if mentioned else 0.0,
            "captions": captions, "object_mentions": mentioned}
