"""The words CapDesk says to its user: every message the window shows and speaks, in one place.

Plain functions of plain values (no Qt, no engine), so that what a person hears can be read,
reviewed and tested here. Each message is short, starts with what happened, and names the
picture or file it is about; a problem says why in words a person can act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

# How each outcome of a batch is said (the batch runner's row statuses): one, many.
BATCH_WORDS = {
    "captioned": ("alt text written", "alt texts written"),
    "skipped": ("already up to date", "already up to date"),
    "kept": ("kept as a person wrote it", "kept as people wrote them"),
    "failed": ("failed", "failed"),
}


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def join_names(names: Iterable[str]) -> str:
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def opened(count: int, where: str) -> str:
    return f"{plural(count, 'picture')} in {where}" if count else f"No pictures in {where}"


def unreadable(count: int) -> str:
    return f"{plural(count, 'picture')} cannot be read; each says why in the list"


def captioning(name: str, again: bool = False) -> str:
    return f"Captioning {name} again…" if again else f"Captioning {name}…"


NO_ALT_TEXT_BRIEF = "No alt text: nothing was recognised"


def description(text: str, reason: str | None, name: str = "", source: str = "file", brief: bool = False) -> str:
    """What is said when a picture's description arrives or is revisited. An empty one is explained in
    full, with what to do; ``brief``: once heard, in a few words (the caption details keep the reason)."""
    prefix = {"clipboard": "Clipboard picture: ", "watched": f"New picture {name}: "}.get(source, "")
    if text:
        return prefix + text
    if brief:
        return f"{prefix}{NO_ALT_TEXT_BRIEF}."
    why = f": {reason}" if reason else ""
    return f"{prefix}No alt text{why}. Write one in the Alt text box and save it with Ctrl+S."


def in_the_list(text: str, reason: str | None, name: str, brief: bool = False) -> str:
    """A clipboard picture that arrived while the person was writing: listed and said, not shown."""
    return f"{name} added to the list, not shown: {description(text, reason, brief=brief)}"


def unsaved_edit(text: str) -> str:
    return f"Your unsaved edit: {text}"


def unsaved_question(name: str, what_next: str) -> str:
    return f"Your alt text for {name} is not saved. Save it before {what_next}?"


def edit_kept(name: str) -> str:
    return f"Your edit of {name} is kept, not saved yet"


def new_caption_question(name: str, what_next: str) -> str:
    """Asked where the box holds CapDesk's new caption beside a person's saved words: never "your alt text"."""
    return (f"CapDesk's new caption for {name} is not saved; the words a person saved stay unless you save it. "
            f"Save the new caption over them before {what_next}?")


def new_caption_kept(name: str) -> str:
    return f"The new caption of {name} is kept in the box, not saved"


def settings_saved(changes: list[str]) -> str:
    return "Settings saved: " + "; ".join(changes) if changes else "Settings saved; nothing changed"


NO_WORDS = "No words to show where the model looked: select a described picture"


def attention_step(index: int, count: int, word: str, place: str) -> str:
    return f"Word {index + 1} of {count}, “{word}”: looked {place}"


def caption_failed(name: str, error: str) -> str:
    return f"Cannot caption {name}: {error}"


def cannot_read(name: str, error: str) -> str:
    return f"{name} cannot be shown: {error}"


def saved(files: Iterable[str]) -> str:
    return f"Alt text saved to {join_names(files)}"


def save_failed(file: str, reason: str) -> str:
    return f"Could not save {file}: {reason}"


NOTHING_TO_SAVE = "Nothing to save: the Alt text box is empty"
NOTHING_CHANGED = "Nothing to save: the alt text is as it was saved"


def new_caption_kept_apart(text: str) -> str:
    """A picture with a person's saved words, captioned again: the caption is offered, not saved."""
    return f"New caption, not saved; the saved alt text stays until you save: {text}"


def caption_over_person_question(name: str) -> str:
    return f"The alt text of {name} was written by a person. Caption it again? The saved words stay until you save."
NOTHING_SELECTED = "No picture selected; open a folder with Ctrl+O"
CLIPBOARD_HAS_NO_FILE = "A clipboard picture has no file to save alt text beside; copy the text instead (Ctrl+Shift+C)"
COPIED = "Alt text copied"
NOTHING_TO_COPY = "Nothing to copy: the Alt text box is empty"
NOTHING_TO_SPEAK = "Nothing to speak: the Alt text box is empty"
STILL_CAPTIONING = "Still captioning this picture"


def clipboard(on: bool) -> str:
    return "Pictures copied to the clipboard will be captioned" if on else "Clipboard captioning off"


def watching(folder: str) -> str:
    return f"Watching {folder}: new pictures there are captioned"


NOT_WATCHING = "No folders are being watched; add one with Ctrl+Shift+W"


def stopped_watching(count: int, folders: Iterable[str] = (), left: Iterable[str] = ()) -> str:
    names = join_names(folders)
    left = list(left)
    rest = f"; still watching {join_names(left)}" if left else "; no folder is watched now"
    return f"Stopped watching {names or plural(count, 'folder')}{rest if names else ''}"


def still_watching(folders: Iterable[str]) -> str:
    folders = list(folders)
    if not folders:
        return NOT_WATCHING
    return f"No folder chosen; still watching {join_names(folders)}"


def watched(described: list[tuple[str, str, str | None]], failed: list[tuple[str, str]], brief: bool = False) -> str:
    """New pictures in a watched folder: ``described`` is (name, alt text, reason), ``failed`` (name, why);
    ``brief``: an empty alt text's reason was heard already (see ``description``)."""
    parts = []
    if len(described) == 1:
        name, text, reason = described[0]
        parts.append(description(text, reason, name, "watched", brief))
    elif described:
        name, text, reason = described[-1]
        said = text or (f"no alt text ({reason})" if reason and not brief else "no alt text")
        parts.append(f"{plural(len(described), 'new picture')} captioned. The last, {name}: {said}")
    for name, why in failed[:3]:
        parts.append(f"New picture {name} failed: {why}")
    if len(failed) > 3:
        parts.append(f"and {plural(len(failed) - 3, 'more failure')}")
    return ". ".join(p.rstrip(".") for p in parts) + "." if parts else ""


def model_in_use(name: str, kept_edit: bool = False) -> str:
    who = f"model {name}" if name else "automatic model choice (each picture goes to the model it fits)"
    if kept_edit:
        return f"Now using {who}. Your edited alt text is kept; press F5 to caption again."
    return f"Now using {who}"


def same_description(name: str) -> str:
    who = f"model {name}" if name else "automatic model choice"
    return f"The description is the same with {who}"


def verified(name: str, problems: list[str]) -> str:
    if not problems:
        return f"{name}: all files verified"
    return f"{name}: {plural(len(problems), 'problem')}: " + "; ".join(problems)


# -- batch -----------------------------------------------------------------------------------
def batch_started(folder: str) -> str:
    return f"Batch export started in {folder}"


def batch_progress(done: int, total: int, name: str) -> str:
    return f"{done} of {total}: {name}"


def batch_milestone(done: int, total: int, previous: int) -> str | None:
    """A spoken progress line at each quarter of a long batch (never for a short one, nor the end)."""
    if total < 8 or done >= total or done * 4 // total <= previous * 4 // total:
        return None
    return f"Batch export: {done} of {total} done"


def batch_counts(counts: Mapping[str, int]) -> str:
    """A batch's outcome in words: the alt texts written, and of those how many are empty and how many
    need review; then skipped (and needing review), kept and failed. ``counts`` is the batch's tally
    (``BatchResult.tally``) or its counts by row status."""
    from capdesk.folders.batch import of_them  # the words the report and the CLI use for the same counts

    got = counts.get
    said = {"captioned": (got("written", got("captioned", 0)), got("empty", 0), got("review", 0)),
            "skipped": (got("skipped", 0), 0, got("skipped_review", 0)),
            "kept": (got("kept", 0), 0, 0), "failed": (got("failed", 0), 0, 0)}
    parts = [f"{n} {BATCH_WORDS[k][n != 1]}{of_them(n, e, r)}" for k, (n, e, r) in said.items() if n]
    return ", ".join(parts) or "no pictures found"


def batch_outcome(counts: Mapping[str, int], interrupted: bool, report: str = "") -> str:
    """The end of a batch: finished, or cancelled and how far it got (never a percentage: what was not
    reached was not done), what was done, and the report."""
    said = batch_counts(counts)
    head = "Batch export finished"
    if interrupted:
        done, listed = counts.get("done"), counts.get("listed")
        head = "Batch export cancelled"
        if done is not None and listed:
            head += f" after {done} of {plural(listed, 'picture')}"
        said = said if done != 0 else "nothing was done"
    tail = f". Report: {Path(report).name} (Open report, Alt+P)" if report else ""
    return f"{head}: {said}{tail}"


def report_not_opened(path: str) -> str:
    """No program opened the report: where it is, so that the person can open it another way."""
    return f"No program opened the report. It is saved at {path}"


def batch_failed(error: str) -> str:
    return f"Batch export failed: {error}"


BATCH_STOPPING = "Stopping after the current picture…"
CHOOSE_A_FORMAT = "Choose at least one sidecar format"


def not_a_folder(folder: str) -> str:
    return f"{folder}: not a folder"


# -- alt text in pages and documents ----------------------------------------------------------
def altfill_started(folder: str, dry_run: bool = False) -> str:
    return f"{'Previewing alt text for' if dry_run else 'Filling alt text in'} the pages and documents in {folder}"


def altfill_milestone(done: int, total: int, previous: int) -> str | None:
    """A spoken progress line at each quarter of a long run (never for a short one, nor the end)."""
    if total < 8 or done >= total or done * 4 // total <= previous * 4 // total:
        return None
    return f"Alt text: {done} of {total} pictures described"


def altfill_summary(result) -> str:
    """What a run did, in words a listener can act on: web pages and documents counted apart, how many
    alt texts were written and how many of those need a person's review, which documents now say that
    every picture has alt text."""
    pages = sum(1 for p in result.pages if p.kind == "page")
    docs = len(result.pages) - pages
    where = " and ".join(x for x in (plural(pages, "web page") if pages else "",
                                     plural(docs, "document") if docs else "") if x) or "nothing to fill"
    filled = [r for r in result.images if str(r.status) == "filled"]
    review = sum(1 for r in filled if r.needs_review)
    said = f"{where}: {plural(len(filled), 'alt text')} {'to write' if result.dry_run else 'written'}"
    if review:
        said += f", {review} {'needs' if review == 1 else 'need'} review"
    failed = sum(1 for r in result.images if str(r.status) == "failed") + sum(
        1 for p in result.pages if p.status == "failed")
    if failed:
        said += f", {failed} failed"
    # Said only where it is so: not of a dry run's note (it "would have" one), nor of a language note.
    described = [Path(p.page).name for p in result.pages
                 if p.kind != "page" and p.note and "every picture has" in p.note]
    if described:
        said += f"; every picture now has alt text in {join_names(described)}"
    return said


def altfill_outcome(summary: str, interrupted: bool, dry_run: bool, report: str = "") -> str:
    head = "Alt text preview" if dry_run else "Alt text"
    head += " stopped" if interrupted else " finished"
    tail = f". Report: {Path(report).name} (Open report, Alt+P)" if report else ""
    return f"{head}: {summary}{tail}"


def altfill_failed(error: str) -> str:
    return f"Filling alt text failed: {error}"


ALTFILL_STOPPING = "Stopping after the pictures being described; what is described so far is written…"


# -- teaching --------------------------------------------------------------------------------
TEACH_PREPARING = "Reading your pictures and preparing…"
TEACH_STOPPING = "Stopping…"


def teach_progress(epoch: int, epochs: int, step: int, steps: int, minutes_left: float) -> str:
    return (f"Round {epoch + 1} of {epochs}, step {step} of {steps}; at most about {minutes_left:.0f} min left "
            "(it may stop early when it stops improving)")


def teach_done(name: str, before: float, after: float) -> str:
    return (f"Done. CapDesk now uses {name}. On your held-out pictures CIDEr went from {before:.2f} "
            f"to {after:.2f}.")


def teach_finished(verdict: str) -> str:
    """The fine-tune's verdict, in its own plain words ("better on your pictures, ...: installed ...")."""
    return f"Done. {verdict[0].upper() + verdict[1:]}" + ("" if verdict.endswith(".") else ".")


def teach_stopped(error: str) -> str:
    return f"Teaching stopped: {error}"


def teach_cannot_start(why: str) -> str:
    return f"Teaching cannot start: {why}"


# Said when the Teach dialog opens where training cannot run: once, short, and nothing "stopped" (nothing
# started); the dialog's status line holds the commands that add it.
TEACH_UNAVAILABLE = "Teaching is not available in this install: it needs PyTorch. The status line says how to add it."


def teach_unavailable(why: str) -> str:
    return f"Not available in this install: {why}"


# -- attention -------------------------------------------------------------------------------
def where(att: np.ndarray) -> str:
    """Where an attention grid looked most, in words: 'top left', 'centre', 'across the picture'."""
    a = np.asarray(att, dtype=np.float64)
    if a.ndim != 2 or a.size == 0 or not np.isfinite(a).all() or a.sum() <= 0:
        return "nowhere in particular"
    a = a / a.sum()
    rows, cols = a.shape
    # Thirds of the picture: the one holding the most attention, unless none clearly leads.
    r_edges = np.linspace(0, rows, 4).round().astype(int)
    c_edges = np.linspace(0, cols, 4).round().astype(int)
    mass = np.array([[a[r_edges[i]:r_edges[i + 1], c_edges[j]:c_edges[j + 1]].sum() for j in range(3)]
                     for i in range(3)])
    i, j = np.unravel_index(int(mass.argmax()), mass.shape)
    if mass[i, j] < 0.2:
        return "across the whole picture"
    vert, horiz = ("top", "middle", "bottom")[i], ("left", "centre", "right")[j]
    if vert == "middle" and horiz == "centre":
        return "in the centre"
    if vert == "middle":
        return f"at the {horiz}"
    return f"at the {vert}" if horiz == "centre" else f"at the {vert} {horiz}"


def attention(word: str, place: str) -> str:
    return f"Attention for “{word}”: {place}"


def for_the_ear(name: str, text: str, reason: str | None, review: bool, several: bool) -> str:
    """A description spoken by ``capdesk caption --speak`` or written to its WAV file: among several
    pictures each is introduced by its file name; an empty one says so and why (never silence), and one
    that needs a person's look says that too."""
    if text:
        said = text if not review else f"{text} Needs review."
    else:
        said = f"No description: {reason or 'nothing was recognised'}."
    return f"{name}: {said}" if several else said


NOTHING_TO_EXPLORE = "Nothing was found in this picture to explore"
NOT_DESCRIBED_YET = "This picture is not described yet: nothing to explore"
END_OF_FOUND = "End of what was found; F7 starts again from the first"
# Going back (Shift+F7) past the first: the end reached is the start, and the next step back is the last.
START_OF_FOUND = "Start of what was found; Shift+F7 starts again from the last"


def found_part(said: str, number: int, count: int) -> str:
    """One part of what was found, with its place in the list: "Dog, bottom right, small. 2 of 3"."""
    return f"{said} {number} of {count}"
