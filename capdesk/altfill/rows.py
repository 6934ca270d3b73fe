"""What alt-fill reports: one row per image reference (in a page or a document), one per page or
document, and the run's result; and how a description becomes the text to write."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from capdesk.altfill.figure_captions import CAPTION_MAX, caption_alt, caption_text  # noqa: F401  (API)
from capdesk.describe.composer import fact_alone
from capdesk.describe.describer import Described
from capdesk.folders.batch import counts_summary
from capdesk.sidecars.xmp import clean_text
from capdesk.status import SaidAs

UNHIDDEN = ("marked decorative by the author, filled as --include-empty asks, and the mark that hid it taken "
            "away so that screen readers no longer skip it")
UNDESCRIBED = "nothing certain could be said about the picture, so no alt text was written"

# What ``--write`` lets into the files, by what the text says as a guess (``wording``). A kind said alone
# ("A drawing.") is written by ``probably`` and ``all`` as it always was; ``facts`` (the default) keeps it back.
WRITE_CHOICES = {"facts": ("fact",), "probably": ("fact", "probably", "kind"),
                 "all": ("fact", "probably", "maybe", "kind")}
HELD = {"probably": 'it is worded as a guess ("Probably ...")', "maybe": 'it only lists what the picture may contain',
        "kind": 'it only says what kind of picture it is ("A drawing.")'}
# How a text says what it says, in a publisher's words: the review file's ``said_as`` and the HTML report's.
SAID_WORDS = {"fact": "fact", "probably": "guess", "maybe": "tags only", "kind": "kind only",
              "caption": "from the caption", "none": "nothing said", "kept": "already in the document"}


class FillStatus(str, Enum):
    """What alt-fill did for one image reference: the report's ``status``."""

    FILLED = "filled"  # alt text written (or, in a dry run, would be)
    UNDESCRIBED = "undescribed"  # described, with nothing certain to say: no alt text, a person should write it
    KEPT = "kept"  # it has alt text, or the author marked it decorative
    SKIPPED = "skipped"  # not a local file (remote, data:), or no place to put the text exactly
    FAILED = "failed"  # the picture is missing or cannot be read, or its page could not be written
    REVIEW = "for review"  # described, but --write keeps its kind of text back: listed with the text proposed

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


@dataclass
class ImageRow:
    page: str
    line: int
    column: int
    src: str  # as the page gives it (character references and escapes decoded)
    status: FillStatus
    file: str | None = None  # the local picture it points to
    alt_text: str = ""  # what was written (filled), or what was there (kept)
    confidence: float | None = None
    needs_review: bool = False
    in_domain: bool | None = None
    model: str = ""
    reason: str | None = None  # why a person should look (never part of the alt text)
    note: str | None = None  # why it was left as it is
    error: str | None = None
    syntax: str = "html"  # html | markdown
    before: str = ""  # the reference's exact text before, and after the edit
    after: str = ""
    written: bool = False
    location: str = ""  # in a document: where the picture is (its chapter file and line, slide, page)
    trust: float | None = None  # the describer's trust in the caption, when the model has a trust score
    said_as: str | None = None  # how the text says the caption: fact | probably | withheld | none | caption (figure's)
    wording: str = ""  # what the text says as a guess: fact (nothing) | probably | maybe ("May contain:")
    proposed: str = ""  # the text CapDesk proposes, written or held back for review
    preview: str = field(default="", repr=False)  # a document's picture as a data: URL, for the HTML report only
    caption: str = ""  # the figure caption found beside the picture (figcaption, a caption paragraph)
    lang: str = ""  # the language of the alt text written, where the document is in another one
    # The text before and after the picture ("... [picture] ..."): evidence for the person reviewing; the
    # caption alone is context the wording takes, so this changes no alt text.
    context: str = ""
    # A picture of an untagged PDF: listed with a text to paste into the source, never written (nor by a review).
    listed_only: bool = False
    box: list[float] | None = None  # its place, there: x, y from the page's top left, width, height (points)
    pixels: list[int] | None = None  # and its width and height in pixels
    # Its identity in the page or document (``picture_ids``) and, for a picture the document holds, the
    # digest of its bytes: what a review row names it by, so that a reviewed text goes onto it alone.
    picture_id: str = ""
    picture_sha256: str = ""


@dataclass
class PageRow:
    page: str
    status: str  # changed | would change (dry run) | unchanged | failed | listed for review (an untagged PDF)
    encoding: str = ""
    images: int = 0
    filled: int = 0
    backup: str | None = None
    error: str | None = None
    kind: str = "page"  # page | epub | docx | pptx | odt | odp | xlsx | ods | pdf
    note: str | None = None  # what a person should know about the whole document (its pictures' alt text)
    sha256: str = ""  # of its bytes as they are after the run: what a review file is checked against
    lang: str = ""  # the language the page or document says it is in (its language tag), when it says


@dataclass
class AltFillResult:
    pages: list[PageRow] = field(default_factory=list)
    images: list[ImageRow] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    dry_run: bool = False
    diffs: dict[str, bytes] = field(default_factory=dict)  # page -> unified diff of what changes, in its bytes
    # The paths the run was given (as given and resolved) and the folders its pictures could come from: what
    # a review of the run records, since it may write only there.
    roots: list[str] = field(default_factory=list)
    picture_roots: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(p.status == "failed" for p in self.pages) or any(r.status == FillStatus.FAILED
                                                                     for r in self.images)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.images:
            out[str(r.status)] = out.get(str(r.status), 0) + 1
        return out

    def summary(self) -> str:
        pages: dict[str, int] = {}
        for p in self.pages:
            pages[p.status] = pages.get(p.status, 0) + 1
        listed = ", ".join(f"{n} {k}" for k, n in sorted(pages.items()))
        return files_said(self.pages) + (f" ({listed})" if listed else "") \
            + f"; images: {counts_summary(self.counts())}"


def files_said(rows: list[PageRow]) -> str:
    """'3 pages', '1 document', '2 pages and 1 document': web pages and documents counted apart."""
    pages = sum(1 for p in rows if p.kind == "page")
    docs = len(rows) - pages
    said = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((pages, "page"), (docs, "document")) if n]
    return " and ".join(said) or "0 pages"


def wording(d: Described) -> str:
    """What a description's text says as a guess: "fact" when nothing (a caption said as fact, or only
    what was seen, read or measured), "probably" for a caption said as "Probably ...", "maybe" for
    "May contain: ..." tags without a caption, "kind" for the picture's kind said alone ("An abstract
    image.", "A drawing."): a kind names no one thing the picture shows."""
    if d.said_as == SaidAs.PROBABLY:
        return "probably"
    if d.said_as == SaidAs.FACT:
        return "fact"
    dec = d.decision
    if dec is None:
        return "maybe" if "May contain:" in d.description else "fact"
    if dec.guesses or dec.perhaps:  # "Probably a cat.", "Perhaps a kite or a balloon.": one witness alone
        return "probably"
    if dec.maybe:
        return "maybe"
    return "kind" if dec.kind and not dec.objects and not dec.text else "fact"


def said_words(row: ImageRow) -> str:
    """How the row's text says what it says, in plain words (``SAID_WORDS``): "fact", "guess", "tags
    only", "kind only", "from the caption", "nothing said", or "already in the document" for alt
    text the document had."""
    if row.said_as == "caption":
        return SAID_WORDS["caption"]
    if row.status == FillStatus.KEPT:
        return SAID_WORDS["kept"] if row.alt_text else ""
    if not (row.proposed or row.alt_text):
        return SAID_WORDS["none"] if row.said_as or row.model else ""
    return SAID_WORDS.get(row.wording, "")


def foreign(lang: str) -> bool:
    """Whether a page or document in language ``lang`` is in another language than CapDesk's English."""
    return bool(lang) and lang.strip().lower().replace("_", "-").split("-")[0] not in ("en", "und", "")


def language_note(lang: str, mark: str) -> str:
    """What the report says of a document in another language than English; ``mark`` is how each picture
    filled says its text is English (``lang="en"``), "" where the format has no way to."""
    how = (f"each picture it filled says so ({mark})" if mark else
           "the format gives a picture's alt text no language of its own, so it is not marked")
    return (f"the document is in {lang}; the alt text CapDesk wrote is English ({how}), "
            "except where it was taken from a caption")


def trusted(d: Described) -> bool:
    """A description said as fact, with nothing for a person to check: it stands even beside a caption."""
    return d.ok and d.said_as == SaidAs.FACT and not d.review and bool(d.description.strip())


def from_caption(row: ImageRow, d: Described) -> str | None:
    """The rule for a picture with a figure caption: a trusted description is written as usual; any
    other (a guess, "May contain", only what was measured such as "A blank red image.", nothing, or a
    picture that could not be read) gives way to the caption, which names what the picture shows in
    the author's own words. The caption's text is then written, said as ``caption``, never a guess;
    None when the caption does not decide (no caption, one that says nothing of the picture once its
    label, citations, links and credits are taken away, or a trusted description)."""
    text = caption_alt(row.caption)
    if not text or trusted(d):
        return None
    said = " ".join(clean_text(d.description).split()) if d.ok else ""
    instead = (f"the describer's own text ({said!r}) was not said as fact" if said else
               "the describer had nothing certain to say" if d.ok else
               f"the picture could not be described ({d.error})")
    row.status, row.said_as, row.wording, row.proposed = FillStatus.FILLED, "caption", "fact", text
    row.needs_review, row.model, row.in_domain = False, d.model, d.in_domain
    row.trust = None if d.trust is None else round(d.trust, 4)
    row.reason = row.note = f"alt text taken from its caption, which names what the picture shows; {instead}"
    return text


def take_description(row: ImageRow, d: Described | None, write: str = "all") -> str | None:
    """Set the row from the picture's description; the one-line alt text to write, or None (the
    row then says why not). ``write`` (a key of WRITE_CHOICES) says which kinds of text are written;
    one it keeps back is listed for review with the text proposed. A picture with a caption
    (``row.caption``) follows ``from_caption``'s rule."""
    if row.caption and d is not None and not trusted(d):
        text = from_caption(row, d)
        if text is not None:
            return text
    if d is None:
        row.status, row.note = FillStatus.SKIPPED, "not described: the run was stopped first"
        return None
    row.model, row.in_domain = d.model, d.in_domain
    if not d.ok:
        row.status, row.error = FillStatus.FAILED, d.error
        return None
    row.trust = None if d.trust is None else round(d.trust, 4)
    row.said_as = None if d.said_as is None else str(d.said_as)
    # One line (an attribute or Markdown brackets hold no line breaks), with nothing a page, its
    # XML reader or a terminal showing the report must not be given (an ESC, a NUL).
    text = " ".join(clean_text(d.description).split())
    row.needs_review = d.review
    row.reason = (d.reason or "the model gave no caption") if d.review else None
    if not text:
        row.status, row.needs_review, row.reason = FillStatus.UNDESCRIBED, True, row.reason or UNDESCRIBED
        return None
    conf = d.alt_text().confidence  # only a caption said in the alt text carries its confidence
    row.confidence = None if conf is None else round(conf, 4)
    row.proposed, row.wording = text, wording(d)
    if write == "facts" and row.wording == "fact" and d.decision is not None and d.decision.fact:
        # Only the confirmed subject is a fact ("A dog, probably running ..."): facts only publish it alone.
        text = row.proposed = " ".join(clean_text(fact_alone(d.decision)).split())
    if row.wording not in WRITE_CHOICES[write]:
        row.status, row.needs_review = FillStatus.REVIEW, True
        row.note = f"left for review: {HELD[row.wording]} (--write {write})"
        return None
    return text
