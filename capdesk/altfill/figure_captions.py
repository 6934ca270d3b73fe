"""A figure caption made into alt text: the author's words for what the picture shows, without what
names the figure or its sources ("Figure 2:", "1.", "[12]", "(Smith et al., 2019)", a URL, a DOI,
"Source: ...", "Photo: J. Doe") or a heading the text extraction ran into it ("Results Figure 2. ...");
and whether what is left describes the picture at all (``caption_alt``).
"""

from __future__ import annotations

import re

CAPTION_MAX = 250  # alt text is read in one breath; a caption past this keeps its first sentences
# Only a caption's start is cleaned (its first sentences are all that is kept): a page's caption of megabytes,
# credit words all through it, is cleaned in the time of a short one.
CLEAN_MAX = 4 * CAPTION_MAX

# The words a figure's label starts with ("Figure 3:", "Fig. 2.", "Illustration 1 -", "Abbildung 4:", "Şekil 1.").
_LABEL_WORD = (r"(?:fig(?:ure)?s?|abb(?:ildung)?|illustration|image|picture|plate|chart|drawing|photo(?:graph)?"
               r"|diagram|graph|map|scheme|exhibit|bild|grafik|afbeelding|immagine|imagen|ilustraci[oó]n"
               r"|şekil|resim|figura|gambar|рисунок|рис)")
# Its number: "3", "2.1", "S1", "A.2", "4b", "IV", "3(a)".
_NUMBER = r"(?:[A-Z]?\d+(?:[.\-–]\d+)*[a-z]?|[IVXLC]+\b)(?:\s*\(?[a-z]\))?"
_SEP = r"[:.\-–—|]"
# A label at the start: with its separator (the number may be left out: "Picture: ..."), or with its
# number and no separator ("Figure 1 chair").
_LABEL = re.compile(rf"^\s*{_LABEL_WORD}\.?\s*(?:{_NUMBER})?\s*{_SEP}\s*|^\s*{_LABEL_WORD}\.?\s*{_NUMBER}\s+", re.I)
# A label after a few words: a heading run into the caption ("Results Figure 2. The ..."), where the
# label has both its number and its separator (so "a drawing of a map" is no label).
_RUN_IN = re.compile(rf"^(?:\S+\s+){{1,8}}?(?={_LABEL_WORD}\.?\s*{_NUMBER}\s*{_SEP}\s)", re.I)
_NUMBERING = re.compile(r"^(?:\(?[a-zA-Z0-9]{1,3}\)|\d+(?:\.\d+)*[.:])\s+")
_URL = re.compile(r"(?:https?://|ftp://|www\.)\S+|\bdoi:\s*\S+|\b10\.\d{4,9}/\S+", re.I)
_DANGLING = re.compile(r"[\s,;:]*(?:available (?:at|from|online)|retrieved from|see|from|doi|url|at)?\s*:?\s*$", re.I)
_YEAR = r"(?:1[6-9]|20)\d{2}[a-z]?"
_CITATIONS = re.compile(
    r"\s*\[\s*\d+(?:\s*[,\-–]\s*\d+)*\s*\]"  # [12], [3, 4], [12-15]
    rf"|\s*\[[^\[\]]{{1,80}}?{_YEAR}\]"  # [Smith 2019]
    # (Smith et al., 2019), (Doe 2018; Roe 2020, p. 4)
    rf"|\s*\((?:see |cf\. )?[^()]{{0,120}}?\b{_YEAR}(?:[,:]\s*(?:p{{1,2}}\.\s*)?\d+(?:[-–]\d+)?)?\)",
    re.I)
# A credit or a source: "Source: NASA", "Photo: J. Doe", "Image courtesy of ...", "© 2020 Jane Doe".
_CREDIT_WORDS = (r"(?:source|credits?|courtesy(?: of)?|copyright|©|\(c\)"
                 r"|(?:photo(?:graph)?|image|picture|illustration)s?(?: by| courtesy of| credit)?)")
_SURE_CREDIT = re.compile(r"^(?:(?:source|credits?|courtesy|copyright)\b|©|\(c\)|\w+ (?:by|courtesy of|credit)\b)",
                          re.I)
# At the start, after a sentence, in brackets or after a dash: "... night (Source: Wikimedia Commons)".
_TRAILING_CREDIT = re.compile(rf"(?:^|(?<=[.;!?])\s+|\s*\(|\s+[-–—|]\s+){_CREDIT_WORDS}(?!\w)\s*[:\-–—]?\s*"
                              r"(?P<who>[^()]*?)\)?\.?$", re.I)
_NAME_WORD = re.compile(r"^(?:[A-Z][\w'’\-]*\.?|[A-Z]\.|de|van|von|der|da|di|le|la|and|&|/|,)$")
_NOT_WORDS = {"fig", "figure", "et", "al", "doi", "url", "ibid", "pp", "p"}
_IDEOGRAPHS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")


def _credit(m: re.Match[str]) -> bool:
    """Whether a credit keyword with what follows it is a credit, not words of the caption: "Source:",
    "Courtesy of" and "Photo by" always are, "Photo: ..." only before a name ("Photo: J. Doe")."""
    head = m.group(0).strip(" (").lower()
    who = m.group("who").strip()
    if _SURE_CREDIT.match(head):
        return True
    words = who.split()
    return 0 < len(words) <= 5 and all(_NAME_WORD.match(w) for w in words)


def _strip_credit(text: str) -> str:
    m = _TRAILING_CREDIT.search(text)
    return text[:m.start()].rstrip(" ,;:-–—|") if m and _credit(m) else text


def caption_text(caption: str) -> str:
    """The alt text a figure caption gives: its words without the figure's label and numbering, its
    citations, links and credits, on one line, ending as a sentence ends ("Figure 2: Waxing crescent
    moon [4]" -> "Waxing crescent moon."); "" when nothing is left (a label alone, a credit alone)."""
    text = " ".join(caption[:CLEAN_MAX + 1].split())
    if len(caption) > CLEAN_MAX:  # cut at a word's end: the tail is past what is kept anyway
        text = text[:CLEAN_MAX].rsplit(" ", 1)[0]
    unlinked = _URL.sub("", text)
    if unlinked != text:  # "Available at: <URL>" leaves its words behind
        text = _DANGLING.sub("", unlinked)
    text = _CITATIONS.sub("", text)
    text = _strip_credit(text)
    if not _LABEL.sub("", text + ":", count=1).strip():  # "Figure 4": a label alone names nothing
        return ""
    run_in = _RUN_IN.match(text)
    if run_in:
        text = text[run_in.end():]
    text = _LABEL.sub("", text, count=1).strip()
    text = _NUMBERING.sub("", text, count=1)
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\(\s*\)|\[\s*\]", "", text))
    text = " ".join(text.split()).strip(" ,;:-–—|")
    if len(text) > CAPTION_MAX:
        cut = text.rfind(". ", 0, CAPTION_MAX)
        text = text[:cut + 1] if cut > 0 else text[:CAPTION_MAX].rsplit(" ", 1)[0] + " ..."
    if text and text[-1].isalnum():
        text += "."
    return text[:1].upper() + text[1:]


def describes(text: str) -> bool:
    """Whether a cleaned caption says what a picture shows: two words at least that are not numbers or
    references (a run of two or more ideographs counts as two), and not a credit alone."""
    credit = _TRAILING_CREDIT.fullmatch(text)
    if not text or credit and _credit(credit):
        return False
    words = 0
    for token in re.findall(r"[^\W\d_][\w'’\-]*", text):
        if len(_IDEOGRAPHS.findall(token)) >= 2:
            words += 2
        elif token.lower().strip(".") not in _NOT_WORDS:
            words += 1
    return words >= 2


def caption_alt(caption: str) -> str:
    """The caption's cleaned words when they describe the picture, else ""."""
    text = caption_text(caption)
    return text if describes(text) else ""
