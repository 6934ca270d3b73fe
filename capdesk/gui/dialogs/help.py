"""Help > What the alt text says: the rule every description follows, in the window (the README's
"What the alt text says", shortened to what a person needs while reading descriptions)."""

from __future__ import annotations

from capdesk.limits import TRUST_FACT_THRESHOLD, TRUST_PROBABLY_THRESHOLD

from .common import show_list

ALT_TEXT_RULES = [
    "Alt text stands in for the picture, so it says only what is known about the picture, never anything "
    "about CapDesk or its model.",
    "Said as fact, for example \"A dog, probably running on the grass.\": only who or what is there and how "
    "many, where the object detector confirms them, when the picture is the kind the model was trained on and "
    f"the model trusts its caption (trust {TRUST_FACT_THRESHOLD:.2f} or more: the chance that it names nothing "
    "that is not there). What they do, and where, follows as \"probably\": nothing in CapDesk sees that "
    "surely. A scene with no person, animal or vehicle, such as \"A stream in the woods.\", is said whole.",
    "Said as \"Probably ...\": the model is less sure, or the picture is less typical of its photos. "
    "People, animals and vehicles a caption names must be seen by the object detector (or, for animals "
    "and vehicles, the tags); how many comes from the detector where it is sure. Tags that name something "
    "the caption does not follow as \"May contain: ...\".",
    f"Withheld: a picture unlike any the models know, or a caption more likely wrong than not (trust under "
    f"{TRUST_PROBABLY_THRESHOLD:.1f}). The alt text is then what else is known: the objects seen "
    "(\"A cat.\"), \"May contain: ...\" from the tags, the text read in the picture ('Text: \"EXIT 12\"'), "
    "or a fact the pixels settle (\"A blank white image.\").",
    "Otherwise the alt text is empty. An empty alt text marks a picture as decorative on a web page, so an "
    "empty sidecar means: a person should write this one.",
    "Every picture that is not said as fact is marked \"needs review\" in the list, the sidecars and the "
    "batch report, with the reason.",
    "Never a placeholder such as \"A photo.\": that is not an alternative to the picture.",
    "Details, and how these were measured: the README's section \"What the alt text says\".",
]


def show_alt_text_rules(parent) -> None:
    show_list(parent, "What the alt text says", "&What the alt text says, one point at a time:", ALT_TEXT_RULES)
