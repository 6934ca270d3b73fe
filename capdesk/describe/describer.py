"""What CapDesk says about a picture: caption, confidence, domain gate, tags and text, composed
into one description. This is the one path from a file (or clipboard pixels) to a description,
and ``Described`` the one result type: the CLI, batch, watch, speech, sidecars and the GUI all
use them.

A caption is only said as fact when the image lies inside the domain of the model that wrote
it and the model was confident. Out of every domain the caption is withheld (available on
request, marked as a guess) and CapDesk says what the ImageNet tags and the text show, or that
the picture is blank, or nothing (the rule is in ``capdesk.describe.alttext``). Why a picture needs a
person's review is kept beside the alt text (``review``, ``reason``), never in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from capdesk.describe import ocr, tags
from capdesk.describe.alttext import AltText, Wording, word
from capdesk.describe.detector import Detection, ObjectFinder
from capdesk.describe.extdescr import extended_description
from capdesk.describe.grounding import bias_matrix, token_concepts
from capdesk.describe.objects import WORD_CATEGORY
from capdesk.describe.pixelfacts import PictureFacts, picture_facts, plain_fact
from capdesk.describe.trust import TAG_THRESHOLD as TRUST_TAG_THRESHOLD
from capdesk.describe.trust import Evidence, TrustModel
from capdesk.imageio import load_image, original_size
from capdesk.limits import (
    CONCEPT_SAY_THRESHOLD,
    DEFAULT_CONFIDENCE_THRESHOLD,
    DEFAULT_TAG_THRESHOLD,
    MAX_TAGS,
    TRUST_PROBABLY_THRESHOLD,
)
from capdesk.model.bundle import Bundle, BundleError, discover
from capdesk.model.domain import Route, automatic, fine_tuned, route
from capdesk.model.engine import Caption, Engine
from capdesk.status import SaidAs, TextStatus

LOW_CONFIDENCE = DEFAULT_CONFIDENCE_THRESHOLD  # the name training/studies/people_rate.py knows
# A caption that names people is said as fact only from this confidence up: under it, captions
# name people that none of the human captions mention far more often (training/studies/people_rate.py,
# tuned on the everyday val split).
PEOPLE_CONFIDENCE = 0.0
# Fewer letters or digits than this is not said as text: OCR reads a lone "®" or "2" off
# textures, cells and handwriting (scikit-image's cell.png and text.png) far more often than a
# picture holds a single character.
MIN_TEXT_CHARS = 2
OBJECT_WORDS = frozenset(WORD_CATEGORY)  # concept words that name a thing one can point at
MAX_CONCEPTS = 10  # the confident concepts listed in --json, most likely first
MAX_SAID_OBJECTS = 3  # objects the concepts are sure of, said when no scene caption is
OCR_MISSING = "text reading is not installed (pip install 'capdesk[ocr]'), so no text was read"


@dataclass
class DescribeOptions:
    tags: str = "auto"  # "auto": in the description when the caption is withheld; "always"; "never"
    ocr: str = "auto"  # "auto": read text when the picture looks like text; "always"; "never"
    text_upscale: float | None = None  # how far the text finder may enlarge the picture (``ocr.read_text``)
    show_guess: bool = False  # say the withheld caption, marked as a guess
    low_confidence: float = DEFAULT_CONFIDENCE_THRESHOLD
    people_confidence: float = PEOPLE_CONFIDENCE
    objects: bool = True  # run the object detector (its boxes go to --json's "objects"; the alt text ignores them)


@dataclass
class Described:
    path: str
    caption: Caption | None = None
    model: str = ""
    in_domain: bool | None = None
    domain_score: float | None = None
    tags: list[tuple[str, float]] = field(default_factory=list)
    text: str | None = None
    description: str = ""
    error: str | None = None
    image_size: tuple[int, int] | None = None  # the picture's real upright size in pixels
    said_as: SaidAs | None = None  # the caption said as: fact | probably | withheld | none (no caption)
    review: bool = False  # a person should check or write the alt text
    reason: str | None = None  # why, in one line (for the JSON, the report and the GUI; never the alt text)
    text_status: TextStatus = TextStatus.SKIPPED
    facts: PictureFacts | None = field(default=None, repr=False)
    trust: float | None = None  # how far the caption can be trusted (capdesk.describe.trust), when the model says
    concepts: list[tuple[str, float]] = field(default_factory=list)  # words a person would use, confident ones
    objects: list[Detection] = field(default_factory=list)  # the detector's, calibrated, best first

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def confidence(self) -> float | None:
        return None if self.caption is None else self.caption.confidence

    @property
    def certain(self) -> bool:
        """The caption is said as fact, by the rule and the options (threshold included) that described it."""
        return self.said_as == SaidAs.FACT

    @property
    def extended(self) -> str:
        """The longer description for IPTC ExtDescrAccessibility (see ``capdesk.describe.extdescr``)."""
        if not self.ok:
            return ""
        return extended_description(self.caption.text if self.caption else None, self.said_as, self.tags,
                                    self.text, self.facts)

    def alt_text(self) -> AltText:
        """What CapDesk writes to the picture's sidecars for this description."""
        # The confidence belongs to the caption: when the caption is not in the alt text, neither is it.
        said = self.said_as in (None, SaidAs.FACT, SaidAs.PROBABLY)
        return AltText(self.description, "machine", self.model, self.confidence if said else None, self.extended)

    def to_json(self) -> dict:
        c = self.caption
        return {"path": self.path, "caption": c.text if c else None,
                "confidence": round(c.confidence, 4) if c else None,
                "in_domain": self.in_domain, "domain_score": self.domain_score,
                "tags": [{"label": n, "probability": p} for n, p in self.tags],
                "text": self.text, "description": self.description if self.ok else None,
                "words": c.words if c else None, "model": self.model, "error": self.error,
                "said_as": self.said_as, "review": self.review if self.ok else None,
                "reason": self.reason if self.ok else None, "text_status": self.text_status,
                "trust": None if self.trust is None else round(self.trust, 4),
                "concepts": [{"word": w, "probability": round(p, 4)} for w, p in self.concepts],
                "objects": [o.to_json() for o in self.objects]}


def compose(caption: str | None, confidence: float | None, in_domain: bool | None,
            tag_list: list[tuple[str, float]], text: str | None, opts: DescribeOptions,
            domain: str = "", fact: str = "") -> str:
    """The alt text alone (see ``wording`` for how it came about)."""
    return wording(caption, confidence, in_domain, tag_list, text, opts, domain, fact).text


def wording(caption: str | None, confidence: float | None, in_domain: bool | None,
            tag_list: list[tuple[str, float]], text: str | None, opts: DescribeOptions,
            domain: str = "", fact: str = "", animals: frozenset[str] = frozenset(),
            trust: float | None = None, objects: list[str] | None = None, typical: bool = True) -> Wording:
    """One short description about the picture only, saying uncertain parts as such. ``objects``: what
    the concepts are sure the picture shows, said beside the tags when the scene caption is not."""
    named = [(o, 1.0) for o in objects or () if not any(o in n.lower().split() for n, _ in tag_list)]
    said_tags = (tag_list + named)[:MAX_SAID_OBJECTS + len(tag_list)]
    return word(caption, confidence, in_domain, tags.plain(said_tags), [n for n, _ in said_tags], text,
                tags_mode=opts.tags, show_guess=opts.show_guess, low_confidence=opts.low_confidence,
                people_confidence=opts.people_confidence, domain=domain, plain_fact=fact,
                animal_tags=[n for n, _ in tag_list if n in animals], trust=trust, typical=typical)


def animal_names(labels: list[str] | None) -> frozenset[str]:
    """Tag names that name animals: ImageNet-1k's first 398 classes are animals, and so is every
    group of fine-grained classes that ``tags.grouped`` merges."""
    if not labels or len(labels) != 1000:
        return frozenset()
    return frozenset(labels[:398]) | {name for *_, name in tags.GROUPS}


def text_worth_saying(text: str | None) -> str | None:
    """The text read, or None when it has fewer than ``MIN_TEXT_CHARS`` letters or digits."""
    return text if text and sum(ch.isalnum() for ch in text) >= MIN_TEXT_CHARS else None


class Describer:
    """Engines for the installed models, sharing one encoder pass, with routing and the gate.

    ``beam``: the width the user chose; None (not chosen) lets each model use its tuned width.
    ``others``: the bundles that may be routed to besides ``model`` (default: every installed one);
    ``fixed``: whether ``model`` was the user's choice (default: whether one was named). A Ray
    worker passes both, so that it describes exactly as the machine that started the batch."""

    def __init__(self, model: str | Bundle | None = None, provider: str | None = None, beam: int | None = None,
                 options: DescribeOptions | None = None, threads: int = 0,
                 others: list[Bundle] | None = None, fixed: bool | None = None) -> None:
        self.options = options or DescribeOptions()
        self.fixed = model is not None if fixed is None else fixed
        self.beam = beam  # as chosen (None: each model's own); a Ray worker builds its describer with it
        primary = Engine(model, provider=provider, beam=beam, threads=threads)
        self.primary = primary
        self.engines: dict[str, Engine] = {primary.name: primary}
        self.problems: list[str] = []
        bundles, self.problems = (others, []) if others is not None else discover()
        for b in bundles:
            # Only models that see the same encoder features can be compared (or routed to).
            if b.name in self.engines or b.features_key != primary.bundle.features_key:
                continue
            if "domain_gate" not in b.manifest:
                continue
            if not automatic(b.manifest):
                continue  # a fine-tune that has not proved itself describes only when named
            try:
                e = Engine(b, provider=provider, beam=beam, threads=threads)
            except BundleError as exc:
                self.problems.append(str(exc))
                continue
            self.engines[e.name] = e
        # One encoder pass, the primary's, serves every model, so a model is described with only when
        # that pass gives what its decoder takes (a decoder that tunes the encoder's top takes the
        # trunk, which older encoders lack). The others still judge with their gates whose picture it is.
        self.decodable = {n for n, e in self.engines.items() if e.decoder_input_name in primary.encoder_outputs}
        self._tokens: dict[str, np.ndarray] = {}
        self._trust_models: dict[str, TrustModel | None] = {}
        # Loaded at the first picture, on the caption model's providers; a missing or broken one is said once.
        self.objects = ObjectFinder(primary.requested_providers, threads)

    @property
    def name(self) -> str:
        return self.primary.name

    @property
    def provider(self) -> str:
        return self.primary.provider

    def route(self, feats: np.ndarray) -> list[Route]:
        """The model for each image's encoder features, and whether the image is in its domain."""
        pooled = feats.mean(1)
        ratios = {n: e.domain.ratio(pooled) for n, e in self.engines.items() if e.domain is not None}
        inside_only = {n for n, e in self.engines.items() if fine_tuned(e.bundle.manifest)}
        return route(ratios, len(feats), self.primary.name, self.fixed, self.decodable, inside_only)

    def describe_images(self, images: list[Image.Image], paths: list[str] | None = None,
                        beam: int | None = None) -> list[Described]:
        paths = paths or [f"image {i + 1}" for i in range(len(images))]
        batch = np.stack([self.primary.preprocess.to_array(im) for im in images])
        with self.primary._lock:
            named = self.primary.encode_named(batch)
        # Every model routed to shares the primary's encoder (one encoder run serves them all).
        feats, logits = named["features"], named.get("class_logits")
        routes = self.route(feats)
        results: list[Described | None] = [None] * len(images)
        for name in {r.model for r in routes}:
            idx = [i for i, r in enumerate(routes) if r.model == name]
            eng = self.engines[name]
            with eng._lock:
                probs = None if eng.concepts is None else eng.concepts.probabilities(feats[idx])
                caps = eng.decode(eng.decoder_input(named)[idx], beam, None if logits is None else logits[idx],
                                  self._grounding(eng, probs))
            for j, (i, cap) in enumerate(zip(idx, caps)):
                results[i] = self._finish(paths[i], images[i], cap, eng, routes[i],
                                          None if probs is None else probs[j])
        if self.options.objects:
            for d, img in zip(results, images):
                d.objects = self.objects.find(img)  # type: ignore[union-attr]
        return results  # type: ignore[return-value]

    def _grounding(self, eng: Engine, probs: np.ndarray | None) -> np.ndarray | None:
        """The beam's penalties on object words these pictures' concepts do not support, or None."""
        if probs is None or eng.concepts is None or eng.concepts.grounding is None:
            return None
        if eng.name not in self._tokens:
            self._tokens[eng.name] = token_concepts(eng.vocab, eng.concepts.words)
        g = eng.concepts.grounding
        return bias_matrix(self._tokens[eng.name], probs, g.alpha, g.tau)

    def _trust(self, eng: Engine, cap: Caption, probs: dict[str, float] | None,
               where: Route) -> tuple[float | None, bool]:
        """The caption's trust (None when the model has no trust score), and whether the picture lies
        in the model's fact zone."""
        if probs is None:
            return None, True
        if eng.name not in self._trust_models:
            self._trust_models[eng.name] = TrustModel.from_manifest(eng.bundle.manifest.get("trust"))
        model = self._trust_models[eng.name]
        if model is None:
            return None, True
        evidence_tags = tags.top_tags(cap.class_logits, eng.labels, TRUST_TAG_THRESHOLD, MAX_TAGS)
        ev = Evidence(cap.words, cap.confidence, probs, cap.finalists, evidence_tags, where.ratio)
        return model.score(ev), model.typical(where.ratio)

    def _finish(self, path: str, img: Image.Image, cap: Caption, eng: Engine, where: Route,
                probs: np.ndarray | None = None) -> Described:
        in_dom = where.in_domain
        t = eng.bundle.manifest.get("tags", {})
        tag_list = tags.top_tags(cap.class_logits, eng.labels, t.get("threshold", DEFAULT_TAG_THRESHOLD),
                                 t.get("max_tags", MAX_TAGS))
        o = self.options
        text, status = None, TextStatus.SKIPPED
        if o.ocr == "always" or (o.ocr == "auto" and (in_dom is False or tags.suggests_text(tag_list))):
            if ocr.available():
                text = text_worth_saying(ocr.read_text(img, upscale=o.text_upscale))
                status = TextStatus.READ if text else TextStatus.NONE
            else:
                status = TextStatus.UNAVAILABLE
        size = original_size(img)
        d = Described(path, cap, eng.name, in_dom, where.ratio, tag_list, text, image_size=size, text_status=status,
                      facts=picture_facts(img, size))
        domain = eng.bundle.manifest.get("domain", "")
        animals = animal_names(eng.labels)
        conc = None if probs is None else dict(zip(eng.concepts.words, map(float, probs)))
        d.trust, typical = self._trust(eng, cap, conc, where)
        if in_dom is False and where.near and d.trust is not None:
            in_dom, typical = True, False  # just outside the gate: "Probably" at most, by the trust rule
        if conc:
            sure = sorted(((w, p) for w, p in conc.items() if p >= eng.concepts.threshold), key=lambda wp: -wp[1])
            d.concepts = sure[:MAX_CONCEPTS]
        # Objects said in place of a withheld scene caption come from the concepts only inside the model's
        # domain: outside it the concept head is as lost as the captioner.
        objects = [w for w, p in d.concepts if p >= CONCEPT_SAY_THRESHOLD and w in OBJECT_WORDS] if (
            in_dom and d.trust is not None and d.trust < TRUST_PROBABLY_THRESHOLD) else []
        w = wording(cap.text, cap.confidence, in_dom, tag_list, text, o, domain, animals=animals, trust=d.trust,
                    objects=objects[:MAX_SAID_OBJECTS], typical=typical)
        if not w.text and w.said_as in (SaidAs.WITHHELD, SaidAs.NONE):
            # Counting pixels costs a little; only a picture with nothing else to say needs it.
            w = wording(cap.text, cap.confidence, in_dom, tag_list, text, o, domain, plain_fact(img), animals,
                        trust=d.trust, objects=objects[:MAX_SAID_OBJECTS], typical=typical)
        d.description, d.said_as, d.review, d.reason = w.text, w.said_as, w.review, w.reason
        if status is TextStatus.UNAVAILABLE and d.review:
            d.reason = f"{d.reason}; {OCR_MISSING}"
        return d

    def load_picture(self, path: str | os.PathLike[str]) -> Image.Image:
        """A picture as ``describe_chunk`` takes it: JPEGs decoded at twice the model's input size."""
        return load_image(path, draft_size=(self.primary.preprocess.size * 2,) * 2)

    def describe_chunk(self, chunk: list[tuple[str, Image.Image | None, str | None]],
                       beam: int | None = None) -> list[Described]:
        """One ``Described`` per (path, picture, None) or (path, None, why unreadable) of ``chunk``
        (``capdesk.folders.reading.load_in_batches``), in order; a bad file gets its error."""
        good = [(i, img) for i, (_, img, err) in enumerate(chunk) if err is None]
        done: dict[int, Described] = {}
        if good:
            try:
                for (i, _), d in zip(good, self.describe_images([im for _, im in good],
                                                                [chunk[i][0] for i, _ in good], beam)):
                    done[i] = d
            except Exception as exc:
                why = f"model failed ({str(exc).splitlines()[0]})"
                return [Described(p, model=self.name, error=err or why) for p, _, err in chunk]
        return [done.get(i) or Described(p, model=self.name, error=err) for i, (p, _, err) in enumerate(chunk)]
