"""Whether a PDF is signed, and whether its certification allows any change after it.

An update appended to a signed PDF leaves the signed bytes as they were, so the signature stays intact over
the document as signed; but the alt text added after it is outside the signature, and a signature checker
(pyHanko, Acrobat) judges a change to the structure tree after signing as one the signature does not allow.
So a signed PDF is left as it is unless the person asks for the update (``--allow-signed``), and one
certified with no changes allowed (DocMDP P=1) is left even then.
"""

from __future__ import annotations

from dataclasses import dataclass

SIGNED = ("signed: an update would invalidate its signature; re-export it with alt text from its source, "
          "or pass --allow-signed")
CERTIFIED_NO_CHANGES = ("signed: an update would invalidate its signature (it is certified with no changes allowed, "
                        "DocMDP P=1, so not even --allow-signed updates it); re-export it with alt text from its "
                        "source")
SIGNED_UPDATED = ("signed: updated as --allow-signed asks; the signature still covers the document as signed and "
                  "checks intact, the alt text added after it is outside it, and a signature checker reports that "
                  "change as one the signature does not allow")
MAX_FIELDS = 10_000  # form fields looked at for a signature; a real form has a few hundred


@dataclass
class Signatures:
    signed: bool = False  # a signature, or a form that says it holds one
    no_changes: bool = False  # certified with DocMDP P=1


def _docmdp_p(sig) -> int | None:
    """The DocMDP permission a signature dictionary's references give, None when it gives none."""
    refs = sig.get("/Reference") if hasattr(sig, "get") else None
    refs = refs.get_object() if refs is not None else []
    for ref in refs if isinstance(refs, list) else [refs]:
        ref = ref.get_object() if hasattr(ref, "get_object") else ref
        if hasattr(ref, "get") and ref.get("/TransformMethod") == "/DocMDP":
            params = ref.get("/TransformParams")
            params = params.get_object() if params is not None else {}
            p = params.get("/P", 2) if hasattr(params, "get") else 2  # 2 when it says none (ISO 32000-1, 12.8.2.2)
            return int(p)
    return None


def signatures(reader) -> Signatures:
    """What the catalog says of signatures: a certification (``/Perms /DocMDP``), the form's ``/SigFlags``, a
    signature field whose value is a signature (``/ByteRange``)."""
    out = Signatures()
    root = reader.trailer["/Root"].get_object()
    perms = root.get("/Perms")
    perms = perms.get_object() if perms is not None else {}
    if hasattr(perms, "get") and perms.get("/DocMDP") is not None:
        out.signed = True
        out.no_changes = _docmdp_p(perms["/DocMDP"].get_object()) == 1
    form = root.get("/AcroForm")
    form = form.get_object() if form is not None else {}
    if not hasattr(form, "get"):
        return out
    if int(form.get("/SigFlags", 0) or 0):
        out.signed = True
    fields = form.get("/Fields")
    stack = list(fields.get_object()) if fields is not None and isinstance(fields.get_object(), list) else []
    seen: set[tuple[int, int]] = set()
    looked = 0
    while stack and looked < MAX_FIELDS:
        raw = stack.pop()
        looked += 1
        key = (getattr(raw, "idnum", None), getattr(raw, "generation", None))
        if key[0] is not None:
            if key in seen:
                continue
            seen.add(key)
        field = raw.get_object() if hasattr(raw, "get_object") else raw
        if not hasattr(field, "get"):
            continue
        value = field.get("/V")
        value = value.get_object() if value is not None else None
        if hasattr(value, "get") and value.get("/ByteRange") is not None:
            out.signed = True
            out.no_changes = out.no_changes or _docmdp_p(value) == 1
        kids = field.get("/Kids")
        kids = kids.get_object() if kids is not None else None
        if isinstance(kids, list):
            stack.extend(kids)
    return out


def refusal(found: Signatures, allow_signed: bool) -> str:
    """Why a PDF with these signatures is left as it is, "" when it may be updated."""
    if found.no_changes:
        return CERTIFIED_NO_CHANGES
    if found.signed and not allow_signed:
        return SIGNED
    return ""
