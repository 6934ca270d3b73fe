"""The session under the window: the open pictures, their descriptions and statuses, the describer,
the folder watcher and the speaker, and every decision about what to say. No Qt here (in the way
napari keeps its viewer model apart from the Qt viewer): the window draws what the session holds
and forwards the user's actions to it; the session tells its listeners what changed through
plain callbacks (``Notifier``), and runs slow work through a ``capdesk.session.tasks.Runner``.

What reaches the user's ears is decided here too. Each ``Message`` says whether it goes to a
running screen reader; a picture's description goes to the screen reader or to CapDesk's own
voice as the speech setting says, and a description heard again on revisiting a picture is
marked as such, so that the window can leave it to the screen reader's reading of the list.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from capdesk.describe.describer import Described, DescribeOptions, Describer
from capdesk.folders.reading import describe_paths, expand_paths
from capdesk.imageio import ImageError, load_image
from capdesk.session import messages
from capdesk.session.picture import Kind, Message, Notifier, Picture, PictureStatus, person_words, status_on_disk
from capdesk.session.settings import Settings
from capdesk.session.tasks import Runner
from capdesk.session.watching import Watching
from capdesk.sidecars.writer import AltText, SidecarWriter
from capdesk.speech import Priority, Speaker, SpeechError, Voice, can_sound

PREVIEW_SIZE = (1600, 1600)

__all__ = ["Kind", "Message", "Notifier", "Picture", "PictureStatus", "Session"]


CLIPBOARD_MAX_SIDE = 2560  # a clipboard picture is kept for the session: its text still reads at this size


def bounded(img: Image.Image) -> Image.Image:
    """A clipboard picture at most ``CLIPBOARD_MAX_SIDE`` on its long side: an 8000x8000 one kept whole
    for the session took 250 MB each."""
    if max(img.size) <= CLIPBOARD_MAX_SIDE:
        return img
    small = img.copy()
    small.thumbnail((CLIPBOARD_MAX_SIDE, CLIPBOARD_MAX_SIDE), Image.Resampling.LANCZOS)
    return small


def _needs_review(d: Described) -> bool:
    return bool(d.review)


class Session(Watching):
    def __init__(self, settings: Settings, runner: Runner,
                 screen_reader: Callable[[], bool] = lambda: False) -> None:
        self.settings = settings
        self.runner = runner
        self.screen_reader = screen_reader
        self.pictures: dict[str, Picture] = {}
        self.current: Picture | None = None
        self.watcher = None
        self.speaker: Speaker | None = None
        self._describer: Describer | None = None
        self._describer_lock = threading.Lock()
        self._can_sound: bool | None = None  # asked once, when something is first to be spoken unasked
        self._busy = 0
        self._clip_count = 0
        # The description a picture had before a model switch: the same words again are not read again
        # (the screen reader has just read them in the picture's list entry, as the focus came back).
        self._before_switch: dict[str, str] = {}
        self._empty_explained = False  # why a picture has no alt text was said in full once
        # Where the person is in each picture's list of what was found (F7), with the description it is of.
        self._exploring: dict[str, tuple[object, int | None]] = {}
        self.pictures_reset = Notifier()  # ()
        self.picture_added = Notifier()  # (Picture)
        self.picture_changed = Notifier()  # (Picture)
        self.current_changed = Notifier()  # (Picture | None)
        self.message = Notifier()  # (Message)
        self.busy_changed = Notifier()  # (bool)
        self.writer = self._make_writer()

    # -- services ---------------------------------------------------------------------------
    def _make_writer(self) -> SidecarWriter:
        return SidecarWriter(self.settings.sidecar_options())

    def apply_settings(self) -> None:
        """After the settings changed: new writer, describer loaded afresh, watcher and voice restarted."""
        self.writer = self._make_writer()
        with self._describer_lock:
            self._describer = None
        if self.speaker is not None:
            self.speaker.close()
            self.speaker = None
        self.restart_watcher()

    def describer(self) -> Describer:
        """Loaded on first use, on whichever worker thread needs it first (a model load takes a moment)."""
        with self._describer_lock:
            if self._describer is None:
                s = self.settings
                opts = DescribeOptions(tags=s.tags, ocr=s.ocr, low_confidence=s.confidence_threshold)
                self._describer = Describer(s.model or None, None if s.provider == "auto" else s.provider,
                                            s.beam, opts)
            return self._describer

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        if self.speaker is not None:
            self.speaker.close()
            self.speaker = None
        # Work still running (a preview being read) finishes unheard: its listeners (a window) are gone.
        for n in (self.pictures_reset, self.picture_added, self.picture_changed, self.current_changed,
                  self.message, self.busy_changed):
            n.clear()

    def _set_busy(self, delta: int) -> None:
        before = self._busy > 0
        self._busy = max(0, self._busy + delta)
        if (self._busy > 0) != before:
            self.busy_changed.emit(self._busy > 0)

    # -- what is said -----------------------------------------------------------------------
    def say(self, text: str, kind: Kind = Kind.RESULT, key: str | None = None) -> None:
        """Show a message; a result also goes to a running screen reader."""
        self.message.emit(Message(text, kind, kind is Kind.RESULT and self.screen_reader(), key=key))

    def _say_description(self, text: str, key: str | None, revisit: bool = False,
                         priority: Priority = Priority.NOW, asked: bool = False) -> None:
        """A description: to the screen reader or CapDesk's voice, as the speech setting says.

        ``asked``: the user pressed Speak, so "off" (which only silences what comes unasked) does not apply.
        """
        mode = self.settings.speech
        if mode == "off" and asked:
            mode = "auto"
        if mode == "off":
            self.message.emit(Message(text, Kind.STATUS, key=key))
            return
        to_reader = mode == "announce" or (mode == "auto" and self.screen_reader())
        self.message.emit(Message(text, Kind.DESCRIPTION, to_reader, revisit, key))
        if to_reader:
            return
        # Unasked, "auto" speaks only where speech can be heard: a first start on a machine without a
        # voice or a player shows descriptions, not "no audio player found".
        if mode == "auto" and not asked and not self._voice_works():
            return
        self._speak(text, priority)

    def _brief_if_empty(self, text: str) -> bool:
        """Whether "No alt text" is said in a few words: the long reason, said in full the first time in
        a session, is the same for every unrecognised picture (the caption details keep it)."""
        brief = self._empty_explained
        if not text:
            self._empty_explained = True
        return brief

    def _voice_works(self) -> bool:
        if self.speaker is not None:
            return self.speaker.error is None
        if self._can_sound is None:
            self._can_sound = can_sound()
        return self._can_sound

    def _speak(self, text: str, priority: Priority) -> None:
        if self.speaker is None:
            s = self.settings
            self.speaker = Speaker(Voice(s.rate, s.volume, s.voice or None), wait=False)
            self.speaker.on_error = lambda msg: self.runner.post(lambda: self.say(msg))
        try:
            self.speaker.say(text, priority)
        except SpeechError as exc:
            self.say(str(exc))

    # -- opening ----------------------------------------------------------------------------
    def _sidecar_status(self, path: Path) -> PictureStatus | None:
        return status_on_disk(self.writer, path)

    def open_paths(self, *paths: Path) -> None:
        """List a folder's pictures (or the given ones) and select the first given picture, or the first."""
        paths = tuple(Path(p) for p in paths)
        chosen = next((str(p) for p in paths if p.is_file()), None)
        roots = [p.parent if p.is_file() and len(paths) == 1 else p for p in paths]
        self.pictures = {}
        self.current = None
        for p, err in expand_paths(roots):
            pic = Picture(str(p), Path(p))
            if err and str(p) != chosen:  # (a link the user opened is theirs to follow)
                pic.status, pic.error = PictureStatus.FAILED, err
            else:
                pic.status = self._sidecar_status(pic.path) or PictureStatus.NEW
                self._read_person_words(pic)
            self.pictures[pic.key] = pic
        if paths:
            self.settings.last_folder = str(paths[0] if paths[0].is_dir() else paths[0].parent)
        self.pictures_reset.emit()
        where = str(roots[0]) if len(roots) == 1 else f"{len(roots)} places"
        self.say(messages.opened(len(self.pictures), where), Kind.STATUS)
        keys = [k for k, p in self.pictures.items() if p.status is not PictureStatus.FAILED]
        self.runner.run(self._unreadable, keys, on_done=self._on_checked)
        if self.pictures:
            self.select(chosen if chosen in self.pictures else next(iter(self.pictures)))

    def _read_person_words(self, p: Picture) -> None:
        """A picture whose sidecars hold a person's words shows and says those words, never a new caption."""
        if p.path is not None and p.status is PictureStatus.EDITED:
            p.person_text = person_words(self.writer, p.path)

    def holds_person_words(self) -> bool:
        """The shown picture's alt text is a person's saved words: captioning again asks first."""
        return self.current is not None and self.current.person_text is not None

    @staticmethod
    def _unreadable(keys: list[str]) -> dict[str, str]:
        """The pictures that cannot be read, so that the list says why before anyone selects them."""
        bad = {}
        for k in keys:
            try:
                load_image(k, draft_size=(64, 64))
            except ImageError as exc:
                bad[k] = exc.reason
        return bad

    def _on_checked(self, bad: dict[str, str]) -> None:
        changed = 0
        for k, why in bad.items():
            p = self.pictures.get(k)
            if p is not None and p.described is None and p.status is not PictureStatus.DESCRIBING:
                p.status, p.error = PictureStatus.FAILED, why
                self.picture_changed.emit(p)
                changed += 1
        if changed:
            self.say(messages.unreadable(changed))

    # -- selecting and describing -------------------------------------------------------------
    def select(self, key: str) -> None:
        p = self.pictures.get(key)
        if p is None or p is self.current:
            return
        self.current = p
        self.current_changed.emit(p)
        if p.status is PictureStatus.FAILED and p.described is None:
            # Its list entry says the same ("broken.jpg, failed: ..."): a revisit, for the screen reader.
            self.message.emit(Message(messages.cannot_read(p.name, p.error), Kind.RESULT, self.screen_reader(),
                                      revisit=True, key=p.key))
        elif p.status is PictureStatus.DESCRIBING:
            return  # its description is said when it arrives
        elif p.described is not None or p.person_text is not None:
            if p.preview is None and p.path is not None:
                self.runner.run(self._load_preview, p, on_done=self._on_preview)
            said = messages.unsaved_edit(p.draft) if p.draft else messages.description(
                p.alt_text, p.reason, brief=self._brief_if_empty(p.alt_text))
            self._say_description(said, p.key, revisit=True)
        else:
            self._describe(p)

    def caption_again(self) -> None:
        p = self.current
        if p is None:
            self.say(messages.NOTHING_SELECTED)
        elif p.status is PictureStatus.DESCRIBING:
            self.say(messages.STILL_CAPTIONING)
        else:
            self._describe(p, again=True)

    def _describe(self, p: Picture, again: bool = False) -> None:
        p.status, p.error = PictureStatus.DESCRIBING, ""
        self.picture_changed.emit(p)
        self._set_busy(+1)
        self.say(messages.captioning(p.name, again), Kind.RESULT if again else Kind.STATUS, p.key)
        self.runner.run(self._describe_work, p, on_done=self._on_described,
                        on_failed=lambda msg: self._on_describe_failed(p, msg))

    def _describe_work(self, p: Picture) -> tuple[Picture, Described, Image.Image | None]:
        """Worker side: describe and load a preview; the picture itself changes only on the interface thread."""
        d = self.describer()
        if p.image is not None:
            return p, d.describe_images([p.image], [p.key])[0], p.image
        described = next(describe_paths(d, [p.path]))
        return p, described, self._load_preview(p)[1] if described.ok else None

    @staticmethod
    def _load_preview(p: Picture) -> tuple[Picture, Image.Image | None]:
        try:
            return p, load_image(p.path, draft_size=PREVIEW_SIZE)
        except ImageError:
            return p, None

    def _on_preview(self, result: tuple[Picture, Image.Image | None]) -> None:
        p, preview = result
        if preview is not None and self.pictures.get(p.key) is p:
            p.preview = preview
            self.picture_changed.emit(p)

    def _on_described(self, result: tuple[Picture, Described, Image.Image | None]) -> None:
        self._set_busy(-1)
        p, d, preview = result
        if self.pictures.get(p.key) is not p:
            return  # another folder was opened meanwhile
        p.described, p.preview = d, preview or p.preview
        if not d.ok:
            p.status, p.error = PictureStatus.FAILED, d.error or ""
            self.picture_changed.emit(p)
            if p is self.current:
                self.say(messages.caption_failed(p.name, p.error), key=p.key)
            return
        p.status = self._status_after_describing(p, d)
        if p.person_text is not None and d.description != p.person_text:
            p.draft = d.description  # offered in the box as an edit; the person's saved words stay
        self.picture_changed.emit(p)
        before = self._before_switch.pop(p.key, None)
        if p is self.current and p.draft and p.person_text is not None:
            self._say_description(messages.new_caption_kept_apart(p.draft), p.key)
        elif p is self.current and before is not None and before == d.description:
            self.say(messages.same_description(self.settings.model), key=p.key)
        elif p is self.current:
            text = messages.description(d.description, p.reason, p.name, p.source,
                                        self._brief_if_empty(d.description))
            self._say_description(text, p.key)
        elif p.source == "clipboard":  # arrived while the person was writing: said, not shown
            brief = self._brief_if_empty(d.description)
            self._say_description(messages.in_the_list(d.description, p.reason, p.name, brief), p.key)

    def _status_after_describing(self, p: Picture, d: Described) -> PictureStatus:
        on_disk = self._sidecar_status(p.path) if p.path is not None else None
        if on_disk is not None:
            return on_disk
        return PictureStatus.NEEDS_REVIEW if _needs_review(d) else PictureStatus.DESCRIBED

    def _on_describe_failed(self, p: Picture, msg: str) -> None:
        self._set_busy(-1)
        if self.pictures.get(p.key) is p:
            p.status, p.error = PictureStatus.FAILED, msg
            self.picture_changed.emit(p)
        self.say(messages.caption_failed(p.name, msg), key=p.key)

    # -- the alt text ---------------------------------------------------------------------------
    def has_unsaved_edit(self, text: str) -> bool:
        """The alt text box holds words of the person's own that are not saved anywhere yet."""
        p = self.current
        if p is None:
            return False
        mine, known = " ".join(text.split()), " ".join(p.alt_text.split())
        return bool(mine) and mine != known

    def explore(self, delta: int) -> str:
        """The next (``delta`` 1) or previous (-1) part of what was found in the shown picture, with where it
        is and how big, in words to be said; past either end, that the list ended (the next step starts
        again). A new description of the picture starts the list again."""
        p = self.current
        if p is None or p.described is None:
            return messages.NOT_DESCRIBED_YET
        found = p.described.found()
        if not found:
            return messages.NOTHING_TO_EXPLORE
        of, at = self._exploring.get(p.key, (None, None))
        if of is not p.described or at is None:
            at = -1 if delta > 0 else len(found)
        at += delta
        if not 0 <= at < len(found):
            self._exploring[p.key] = (p.described, None)
            return messages.END_OF_FOUND if delta > 0 else messages.START_OF_FOUND
        self._exploring[p.key] = (p.described, at)
        return messages.found_part(found[at].said(), at + 1, len(found))

    def holds_new_caption_beside_person_words(self, text: str) -> bool:
        """The box holds CapDesk's new caption, untouched, for a picture whose saved words are a person's."""
        p = self.current
        if p is None or p.person_text is None or p.described is None or not p.described.description:
            return False
        return " ".join(text.split()) == " ".join(p.described.description.split())

    def set_draft(self, text: str) -> None:
        """Keep what the alt text box holds for the shown picture, when it is the person's unsaved edit,
        so that moving to another picture (or a clipboard picture arriving) never loses it."""
        p = self.current
        if p is not None:
            before, p.draft = p.draft, text if self.has_unsaved_edit(text) else ""
            if p.draft != before:  # its list entry says so
                self.picture_changed.emit(p)

    def save_current(self, text: str) -> bool:
        p, text = self.current, " ".join(text.split())
        if p is None:
            self.say(messages.NOTHING_SELECTED)
            return False
        if not text:
            self.say(messages.NOTHING_TO_SAVE)
            return False
        if p.path is None:
            self.say(messages.CLIPBOARD_HAS_NO_FILE)
            return False
        if p.person_text is not None and text == p.person_text:
            p.draft = ""  # nothing of a person's is written over with the same words (or a caption)
            self.picture_changed.emit(p)
            self.say(messages.NOTHING_CHANGED, key=p.key)
            return False
        d = p.described
        alt = AltText(text, "human", d.model if d else "", d.confidence if d else None)
        outcomes = self.writer.write(p.path, alt, force=True)  # the person's own words: always theirs to save
        failed = [o for o in outcomes if o.action == "failed"]
        if failed:
            self.say(messages.save_failed(failed[0].path.name, failed[0].reason), key=p.key)
            return False
        p.status, p.error, p.text, p.draft, p.person_text = PictureStatus.SAVED, "", text, "", text
        if d is not None:
            # The person's words now stand: why the machine's needed review (an empty alt text, say)
            # no longer holds, and the caption details stop saying it.
            d.description, d.review, d.reason = text, False, None
        self.picture_changed.emit(p)
        self.say(messages.saved(o.path.name for o in outcomes), key=p.key)
        return True

    def copy_text(self, text: str) -> str | None:
        """The text to put on the clipboard, or None (and why) when there is none."""
        text = text.strip()
        self.say(messages.COPIED if text else messages.NOTHING_TO_COPY)
        return text or None

    def speak(self, text: str) -> None:
        """The user asked to hear the alt text (Speak, F6): now, interrupting anything being said."""
        text = text.strip()
        if not text:
            self.say(messages.NOTHING_TO_SPEAK)
            return
        self._say_description(text, self.current.key if self.current else None, asked=True)

    def use_model(self, name: str, alt_text: str = "") -> None:
        """Switch models; caption the shown picture again unless that would replace the person's edit."""
        kept = self.has_unsaved_edit(alt_text)
        self.settings.model = name
        self.settings.save()
        self.apply_settings()
        self.say(messages.model_in_use(name, kept))
        if self.current is not None and not kept and self.current.status is not PictureStatus.DESCRIBING:
            if self.current.described is not None:
                self._before_switch[self.current.key] = self.current.described.description
            self._describe(self.current)

    # -- clipboard ----------------------------------------------------------------------------
    def set_clipboard(self, on: bool) -> None:
        self.settings.clipboard = bool(on)
        self.settings.save()
        self.say(messages.clipboard(on))

    def add_clipboard_image(self, img: Image.Image, show: bool = True) -> Picture:
        """A picture copied to the clipboard: listed, captioned and said; shown unless ``show`` is False
        (the person is writing alt text for the picture shown)."""
        self._clip_count += 1
        key = f"clipboard picture {self._clip_count} ({time.strftime('%H:%M:%S')})"
        p = Picture(key, None, bounded(img), source="clipboard")
        self.pictures[key] = p
        self.picture_added.emit(p)
        if show or self.current is None:
            self.select(key)
        else:
            self._describe(p)
        return p

    # -- after a batch ------------------------------------------------------------------------
    def refresh_statuses(self, writer: SidecarWriter | None = None) -> int:
        """Read the sidecars again (a batch wrote some); say nothing. Returns how many entries changed."""
        w, changed = writer or self.writer, 0
        for p in self.pictures.values():
            if p.path is None or p.status in (PictureStatus.DESCRIBING, PictureStatus.FAILED):
                continue
            new = status_on_disk(w, p.path)
            if new is not None and new is not p.status and p.status is not PictureStatus.SAVED:
                p.status = new
                if p.person_text is None:
                    self._read_person_words(p)
                self.picture_changed.emit(p)
                changed += 1
        return changed
