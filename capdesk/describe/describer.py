"""What CapDesk says about a picture: caption, confidence, domain gate, tags and text, composed
into one description. This is the one path from a file (or clipboard pixels) to a description,
and ``Described`` the one result type: the CLI, batch, watch, speech, sidecars and the GUI all
use them.

Everything known about a picture is gathered into one ``PictureEvidence`` (``capdesk.describe.evidence``);
``capdesk.describe.policy`` decides from it alone what may be said and how surely, and
``capdesk.describe.composer`` writes the alt text and the long description. Every route, every model,
goes through them. Why a picture needs a person's review is kept beside the alt text (``review``,
``reason``), never in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from capdesk.describe import composer, ocr, picture_kind, policy, tags, text_gate
from capdesk.describe.alttext import AltText
from capdesk.describe.detector import Detection, ObjectFinder
from capdesk.describe.evidence import Finalist, PictureEvidence, overhead
from capdesk.describe.extdescr import extended_description
from capdesk.describe.fact_check import FactCheck
from capdesk.describe.found import Part, parts_found, where_things_are
from capdesk.describe.grounding import bias_matrix, token_concepts
from capdesk.describe.pixelfacts import PictureFacts, picture_facts, plain_fact
from capdesk.describe.settings import DEFAULT, PolicySettings
from capdesk.describe.trust import TAG_THRESHOLD as EVIDENCE_TAG_FLOOR
from capdesk.describe.trust import Evidence, TrustModel
from capdesk.imageio import cut_out_share, load_image, original_size
from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD, DEFAULT_TAG_THRESHOLD, MAX_TAGS
from capdesk.model.bundle import Bundle, BundleError, discover
from capdesk.model.domain import Route, automatic, fine_tuned, route
from capdesk.model.engine import Caption, Engine
from capdesk.status import SaidAs, TextStatus

# Fewer letters or digits than this is not said as text: OCR reads a lone "®" or "2" off
# textures, cells and handwriting (scikit-image's cell.png and text.png) far more often than a
# picture holds a single character.
MIN_TEXT_CHARS = 2
MAX_CONCEPTS = 10  # the confident concepts listed in --json, most likely first
OCR_MISSING = "text reading is not installed (pip install 'capdesk[ocr]'), so no text was read"


@dataclass
class DescribeOptions:
    tags: str = "auto"  # "auto": in the description when the caption is withheld; "always"; "never"
    ocr: str = "auto"  # "auto": read text where a cheap test finds some (ocr.read_if_found); "always"; "never"
    text_upscale: float | None = None  # how far the text finder may enlarge the picture (``ocr.read_text``)
    show_guess: bool = False  # say the withheld caption, marked as a guess
    low_confidence: float = DEFAULT_CONFIDENCE_THRESHOLD
    objects: bool = True  # run the object detector (--json's "objects"; what a caption names must be seen by it)
    text_upright: bool = False  # the text is drawn upright (the screen's): no angle classifier (``ocr.read_text``)


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
    text_lines: list[tuple[str, tuple[float, float, float, float]]] = field(default_factory=list)  # where it is
    decision: policy.Decision | None = field(default=None, repr=False)  # what the policy allowed
    evidence: PictureEvidence | None = field(default=None, repr=False)  # what it decided from
    settings: PolicySettings = field(default=DEFAULT, repr=False)  # the model's, by which it decided

    @property
    def said_caption(self) -> str | None:
        """The caption as the evidence mended it, whole, said or not (of a guess the alt text says only its
        subject and place, ``capdesk.describe.safe_guess``); None without one."""
        if self.decision is None:
            return None
        d = self.decision
        if d.caption:
            return d.caption
        return d.guess or None

    @property
    def said_fact(self) -> str | None:
        """What the alt text says as fact of the caption: its confirmed subject ("a dog") where the rest is
        said as probable, the whole caption where it is said whole as fact; None where none is a fact."""
        d = self.decision
        if d is None or d.said_as is not SaidAs.FACT or not d.caption:
            return None
        return d.fact or d.caption

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
        if self.decision is None:  # described elsewhere (an older worker): the caption and its standing only
            return extended_description(self.caption.text if self.caption else None, self.said_as, self.tags,
                                        self.text, self.facts)
        seen = [(o.label, o.score) for o in self.objects if o.score >= self.settings.saying.say_object]
        long = composer.long_description(self.decision, self.tags, seen, self.facts)
        where = where_things_are(self.found())
        return f"{long} {where}".strip() if where else long

    def found(self) -> list[Part]:
        """What was found, part by part, with where each is (``capdesk.describe.found``)."""
        if not self.ok:
            return []
        ev = self.evidence
        means_things = ev is None or ev.kind == picture_kind.PHOTO or ev.kind in picture_kind.DEPICTS
        kind = self.decision.kind if self.decision is not None else ""
        return parts_found(self.image_size, kind or None, self.objects, self.text_lines, means_things)

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
                "objects": [o.to_json() for o in self.objects], "evidence": self.evidence_summary(),
                "found": [p.to_json() for p in self.found()]}

    def evidence_summary(self) -> dict | None:
        """What the decision rested on, in brief: the beam's captions with their confidence and trust, and
        what the evidence changed in the caption said."""
        if self.evidence is None:
            return None
        ev = self.evidence
        return {"finalists": [{"caption": f.text, "confidence": round(f.confidence, 4),
                               "trust": None if f.trust is None else round(f.trust, 4)} for f in ev.finalists],
                "detector": ev.detector, "typical": ev.typical, "near": ev.near,
                "said_caption": self.said_caption, "said_fact": self.said_fact,
                "mended": list(self.decision.mended) if self.decision else [],
                "kind": ev.kind,
                "kind_probability": None if ev.kind_probability is None else round(ev.kind_probability, 4)}


def text_worth_saying(text: str | None) -> str | None:
    """The text read, or None when it has fewer than ``MIN_TEXT_CHARS`` letters or digits."""
    return text if text and sum(ch.isalnum() for ch in text) >= MIN_TEXT_CHARS else None


def caption_threads(cores: int | None) -> int:
    """Threads for the caption model's graphs when the user left it to CapDesk: every core but one, which
    the object detector has, since it runs beside the encoder and the decoder (``ObjectFinder.find_later``).
    Measured on 2 cores (docs/performance.md): file to description 42.4 ms with the encoder on both cores
    against 39.1 ms on one, the detector's core no longer fought over."""
    return max(1, (cores or 1) - 1)


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
        threads = threads or caption_threads(os.cpu_count())
        primary = Engine(model, provider=provider, beam=beam, threads=threads)
        self.primary = primary
        self.engines: dict[str, Engine] = {primary.name: primary}
        self.settings: dict[str, PolicySettings] = {primary.name: _settings_of(primary)}
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
                self.settings[e.name] = _settings_of(e)
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
        self._fact_checks: dict[str, FactCheck | None] = {}
        # Loaded at the first picture, on the caption model's providers; a missing or broken one is said once.
        self.objects = ObjectFinder(primary.requested_providers, 1)
        self.kinds = self._kind_model()
        self.text_gate = self._text_gate()

    def _kind_model(self) -> picture_kind.KindModel | None:
        """The picture-kind model of the first engine that carries one for the primary's encoder."""
        return self._first_for_encoder(picture_kind.from_bundle)

    def _text_gate(self) -> text_gate.TextGate | None:
        """The text gate of the first engine that carries one for the primary's encoder."""
        return self._first_for_encoder(text_gate.from_bundle)

    def _first_for_encoder(self, load):
        """What ``load`` gives for the first engine's bundle that has it, among those sharing the primary's
        encoder; a broken one is noted in ``problems`` and the next is tried."""
        for e in self.engines.values():
            if e.bundle.features_key != self.primary.bundle.features_key:
                continue
            try:
                found = load(e.bundle)
            except BundleError as exc:
                self.problems.append(str(exc))
                continue
            if found is not None:
                return found
        return None

    def may_hold_text(self, feats: np.ndarray, kinds: list[tuple[str, float] | None]) -> list[bool]:
        """For each picture, whether ``--ocr auto``'s test for text should look at it: every picture that is
        not surely a photo, and the photos the text gate lets through (all of them without a gate)."""
        if self.text_gate is None or self.options.ocr != "auto":
            return [True] * len(kinds)
        gate = self.text_gate.may_hold_text(feats)
        return [g or (k is not None and k[0] != picture_kind.PHOTO) for g, k in zip(gate, kinds)]

    def picture_kinds(self, images: list[Image.Image], feats: np.ndarray) -> list[tuple[str, float] | None]:
        """Each picture's kind and how sure (None where no kind model is installed); ``feats``: the grid."""
        if self.kinds is None:
            return [None] * len(images)
        return list(self.kinds.of_pictures(feats, images))

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
        for im in images:
            im.load()  # decoded here, before two threads read the pixels
        finding = self.objects.find_later(images) if self.options.objects else None
        batch = np.stack([self.primary.preprocess.to_array(im) for im in images])
        with self.primary._lock:
            named = self.primary.encode_named(batch)
        # Every model routed to shares the primary's encoder (one encoder run serves them all).
        feats, logits = named["features"], named.get("class_logits")
        routes = self.route(feats)
        kinds = self.picture_kinds(images, feats)
        texty = self.may_hold_text(feats, kinds)
        decoded = []
        for name in {r.model for r in routes}:
            idx = [i for i, r in enumerate(routes) if r.model == name]
            eng = self.engines[name]
            with eng._lock:
                probs = None if eng.concepts is None else eng.concepts.probabilities(feats[idx])
                caps = eng.decode(eng.decoder_input(named)[idx], beam, None if logits is None else logits[idx],
                                  self._grounding(eng, probs))
            decoded.append((idx, eng, probs, caps))
        # The objects are needed only now, to finish each description: the detector ran meanwhile. (Reading
        # text beside the caption too gained nothing measurable and cost a folder 107 MiB more at its peak.)
        seen = (finding.result() if finding else None) or [None] * len(images)
        results: list[Described | None] = [None] * len(images)
        for idx, eng, probs, caps in decoded:
            for j, (i, cap) in enumerate(zip(idx, caps)):
                results[i] = self._finish(paths[i], images[i], cap, eng, routes[i],
                                          None if probs is None else probs[j], seen[i], kinds[i], texty[i])
        return results  # type: ignore[return-value]

    def _grounding(self, eng: Engine, probs: np.ndarray | None) -> np.ndarray | None:
        """The beam's penalties on object words these pictures' concepts do not support, or None."""
        if probs is None or eng.concepts is None or eng.concepts.grounding is None:
            return None
        if eng.name not in self._tokens:
            self._tokens[eng.name] = token_concepts(eng.vocab, eng.concepts.words)
        g = eng.concepts.grounding
        return bias_matrix(self._tokens[eng.name], probs, g.alpha, g.tau)

    def _trust_model(self, eng: Engine) -> TrustModel | None:
        if eng.name not in self._trust_models:
            self._trust_models[eng.name] = TrustModel.from_manifest(eng.bundle.manifest.get("trust"))
        return self._trust_models[eng.name]

    def _fact_check(self, eng: Engine) -> FactCheck | None:
        if eng.name not in self._fact_checks:
            words = eng.concepts.words if eng.concepts is not None else []
            self._fact_checks[eng.name] = FactCheck.from_manifest(eng.bundle.manifest.get("fact_check"), words)
        return self._fact_checks[eng.name]

    def _finalists(self, cap: Caption, model: TrustModel | None, concepts: dict[str, float] | None,
                   evidence_tags: list[tuple[str, float]], where: Route) -> list[Finalist]:
        """The beam's captions, best first, each with its own trust (the others' texts are its finalists)."""
        texts = [cap.text] + [t[:1].upper() + t[1:] + "." if t else "" for t in cap.finalists]
        words = [cap.words] + [t.split() for t in cap.finalists]
        confs = [cap.confidence] + (list(cap.finalist_confidences) or [0.0] * len(cap.finalists))
        out = []
        for i, (text, w, c) in enumerate(zip(texts, words, confs)):
            if not w and i:
                continue
            trust = None
            if model is not None and concepts is not None:
                others = [" ".join(x) for j, x in enumerate(words) if j != i]
                trust = model.score(Evidence(w, c, concepts, others, evidence_tags, where.ratio))
            out.append(Finalist(text, float(c), trust))
        return out

    def evidence(self, img: Image.Image, cap: Caption, eng: Engine, where: Route, probs: np.ndarray | None,
                 objects: list[Detection] | None, text: str | None,
                 kind: tuple[str, float] | None = None) -> PictureEvidence:
        """Everything known about one picture, for the policy (``objects`` None: no detector looked)."""
        conc = None if probs is None or eng.concepts is None else dict(zip(eng.concepts.words, map(float, probs)))
        model = self._trust_model(eng) if conc is not None else None
        evidence_tags = tags.top_tags(cap.class_logits, eng.labels, EVIDENCE_TAG_FLOOR, MAX_TAGS)
        t = eng.bundle.manifest.get("tags", {})
        return PictureEvidence(
            finalists=self._finalists(cap, model, conc, evidence_tags, where) if cap.words else [],
            concepts=conc or {}, detections=list(objects or []), detector=objects is not None,
            tags=evidence_tags, tag_threshold=float(t.get("threshold", DEFAULT_TAG_THRESHOLD)), text=text,
            model=eng.name, domain=eng.bundle.manifest.get("domain", ""), in_domain=where.in_domain,
            ratio=where.ratio, near=where.near, typical=model.typical(where.ratio) if model else True,
            has_trust=model is not None, overhead=overhead(eng.bundle.manifest), size=original_size(img),
            kind=kind[0] if kind else picture_kind.PHOTO, kind_probability=kind[1] if kind else None,
            transparent=cut_out_share(img))

    def read_text(self, img: Image.Image, lines_out: list | None = None,
                  may_hold_text: bool = True) -> tuple[str | None, TextStatus]:
        """The text in ``img`` worth saying as the options ask, and what became of reading it (``lines_out``:
        its lines with where each is, as ``ocr.read_text`` gives them). ``may_hold_text``: False where the
        text gate found no sign of text, which ``--ocr auto`` takes as the test's answer."""
        o = self.options
        if o.ocr not in ("always", "auto"):  # "auto": a cheap test for text on every picture, read where found
            return None, TextStatus.SKIPPED
        if not ocr.available():
            return None, TextStatus.UNAVAILABLE
        if o.ocr == "auto" and not may_hold_text:
            return None, TextStatus.NONE
        read = ocr.read_text if o.ocr == "always" else ocr.read_if_found
        text = text_worth_saying(read(img, upscale=o.text_upscale, lines_out=lines_out, upright=o.text_upright))
        return text, TextStatus.READ if text else TextStatus.NONE

    def _finish(self, path: str, img: Image.Image, cap: Caption, eng: Engine, where: Route,
                probs: np.ndarray | None = None, objects: list[Detection] | None = None,
                kind: tuple[str, float] | None = None, may_hold_text: bool = True) -> Described:
        t = eng.bundle.manifest.get("tags", {})
        tag_list = tags.top_tags(cap.class_logits, eng.labels, t.get("threshold", DEFAULT_TAG_THRESHOLD),
                                 t.get("max_tags", MAX_TAGS))
        o = self.options
        lines: list = []
        text, status = self.read_text(img, lines, may_hold_text)
        size = original_size(img)
        d = Described(path, cap, eng.name, where.in_domain, where.ratio, tag_list, text, image_size=size,
                      text_status=status, facts=picture_facts(img, size), objects=list(objects or []),
                      text_lines=_in_picture_pixels(lines, img.size, size) if text else [])
        ev = self.evidence(img, cap, eng, where, probs, objects, text, kind)
        d.evidence = ev
        d.trust = ev.caption.trust if ev.caption else None
        if ev.concepts and eng.concepts is not None:
            sure = [(w, p) for w, p in ev.concepts.items() if p >= eng.concepts.threshold]
            d.concepts = sorted(sure, key=lambda wp: -wp[1])[:MAX_CONCEPTS]
        opts = policy.Options(o.tags, o.show_guess, o.low_confidence)
        d.settings = self.settings[eng.name]
        decision = policy.decide(ev, opts, self._fact_check(eng), d.settings)
        w = composer.alt_text(decision, o.show_guess)
        if not w.text and w.said_as in (SaidAs.WITHHELD, SaidAs.NONE):
            # Counting pixels costs a little; only a picture with nothing else to say needs it.
            ev.plain_fact = plain_fact(img)
            decision = policy.decide(ev, opts, self._fact_check(eng), d.settings)
            w = composer.alt_text(decision, o.show_guess)
        d.decision = decision
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


def _settings_of(e: Engine) -> PolicySettings:
    """The model's own policy settings (its manifest's ``policy`` section over the defaults)."""
    return PolicySettings.for_model(e.bundle.manifest.get("policy"), e.bundle.path / "manifest.json")


def _in_picture_pixels(lines: list, read_size: tuple[int, int], size: tuple[int, int] | None) -> list:
    """Text lines' boxes from the pixels read (a picture decoded at reduced size) to the picture's own."""
    if not size or tuple(read_size) == tuple(size):
        return list(lines)
    fx, fy = size[0] / max(1, read_size[0]), size[1] / max(1, read_size[1])
    return [(t, (x0 * fx, y0 * fy, x1 * fx, y1 * fy)) for t, (x0, y0, x1, y1) in lines]
