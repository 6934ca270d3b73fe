"""Alt-text sidecars: ``photo.txt`` and XMP with the IPTC accessibility fields.

Rules that protect what users have:
* every write is atomic (a temp file in the same folder, then one rename), and new files get
  the mode the umask gives, like any program's;
* a sidecar is overwritten only if CapDesk wrote it and nobody edited it since
  (the ledger remembers the sha256 of what was written), or with ``overwrite=True``;
* that check is made again after the new text is on disk, in the same step as the rename
  (``safe_files.swap_in``), with CapDesk's writers in one folder taking turns: an edit saved
  while CapDesk was writing is kept, never replaced;
* the ledger hears of a write before its rename and is told after, so a crash between the two
  still leaves the sidecar recognised as CapDesk's;
* a folder (or anything not a file) where a sidecar should go is an error, even with overwrite;
  so is a link: it is never followed, since in a folder others can write it may lead to any file
  of the user's, which would then be read and kept beside the picture for them to read;
* a sidecar is read from one descriptor, opened without following a link, and never more than
  ``SIDECAR_MAX_BYTES``: a larger file where a sidecar goes is kept as it is and said to be;
* a file written in place of someone else's, and the copy of someone else's damaged sidecar, are
  private to the user (0600); the user's own keep their mode;
* two images that would share a stem-named sidecar (``photo.jpg``, ``photo.png`` -> ``photo.txt``)
  get extension-named ones instead (``photo.jpg.txt``), and the outcome says so;
* an existing XMP sidecar is updated in place: every other property it holds is kept;
* images are never modified, except by ``embed_in_image`` when the user asks, and then the
  original bytes are kept beside it (``photo.jpg_original``, exiftool's convention).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from capdesk.describe.alttext import AltText
from capdesk.imageio import IMAGE_SUFFIXES
from capdesk.safe_files import RefusedFile, atomic_write, folder_lock, read_limited, snapshot, swap_in, write_temp
from capdesk.sidecars import formats as registry
from capdesk.sidecars import xmp
from capdesk.sidecars.formats import SIDECAR_MAX_BYTES
from capdesk.sidecars.ledger import Ledger, LedgerError
from capdesk.sidecars.xmp import NS, read_alt_text, read_ext_descr, render_xmp  # noqa: F401  (part of this module's API)
from capdesk.status import Ownership, SidecarState, WriteStatus

__all__ = ["SIDECAR_MAX_BYTES", "AltText", "SidecarError", "SidecarOptions", "SidecarWriter", "WriteOutcome",
           "atomic_write", "embed_in_image", "image_signature", "read_alt_text", "read_ext_descr", "render_xmp",
           "sidecar_path"]


class SidecarError(Exception):
    """A sidecar that could not be written; ``str()`` names the file and the reason."""


@dataclass
class SidecarOptions:
    formats: tuple[str, ...] = field(default_factory=registry.defaults)  # names in ``capdesk.sidecars.formats``
    # The naming of each shipped format, by the name settings.json and the command line give it.
    txt_name: str = "stem"  # photo.txt | "ext": photo.jpg.txt
    xmp_name: str = "ext"  # photo.jpg.xmp (cannot collide) | "stem": photo.xmp
    lang: str = "en"
    ext_descr: bool = False  # also write Iptc4xmpCore:ExtDescrAccessibility
    mirror_dc: bool = False  # also write dc:description
    overwrite: bool = False
    # A mirror tree for stores that cannot be written: the sidecar of ROOT/a/b.jpg goes to OUT/a/b.txt.
    out_dir: Path | None = None
    out_root: Path | None = None
    # The naming of any other format, by its name; a format in neither place has its default naming.
    namings: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.out_dir is None) != (self.out_root is None):
            raise ValueError("a mirror folder needs both out_dir and out_root")
        for f in self.formats:
            registry.get(f)  # an unknown name raises, listing the known ones
        chosen = [getattr(self, f.option) for f in registry.known() if hasattr(self, f.option)]
        for name in (*chosen, *self.namings.values()):
            if name not in registry.NAMINGS:
                raise ValueError(f"unknown sidecar naming {name!r} (choose {', '.join(registry.NAMINGS)})")

    def naming(self, fmt: str) -> str:
        """How the sidecars of the format ``fmt`` are named: ``namings``, its own field, or its default."""
        kind = registry.get(fmt)
        return self.namings.get(fmt) or getattr(self, kind.option, None) or kind.default_naming

    @classmethod
    def parse(cls, formats: str, **kw) -> SidecarOptions:
        """From a comma-separated list of formats ("txt,xmp"), as the command line gives it."""
        return cls(tuple(f.strip().lower() for f in formats.split(",") if f.strip()), **kw)


def sidecar_path(image: Path, fmt: str, naming: str) -> Path:
    return registry.get(fmt).path(image, naming)


def sha256_text(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _look(sidecar: Path) -> str | None:
    """``snapshot`` of a sidecar's place: a link there is not followed, a huge file not read."""
    return snapshot(sidecar, SIDECAR_MAX_BYTES)


_LINK = "not-a-file:link"
_TOO_LARGE = "too-large:"


def _blocked(snap: str) -> str:
    """Why nothing is written where the sidecar goes (``snap``: what ``_look`` saw there)."""
    if snap == _LINK:
        return ("a link is where the sidecar goes, and CapDesk does not follow it (it may lead to any file); "
                "move it away (--overwrite never replaces it)")
    if snap.startswith(_TOO_LARGE):
        size = int(snap[len(_TOO_LARGE):])
        return (f"a file of {size / (1 << 20):.0f} MiB is where the sidecar goes, too large to be one (at most "
                f"{SIDECAR_MAX_BYTES >> 20} MiB is read): it is kept as it is, unread; move it away "
                "(--overwrite never replaces it)")
    return "a folder (or other non-file) is where the sidecar goes; move it away (--overwrite never replaces it)"


def stem_siblings(image: Path) -> list[Path]:
    """Other images in the folder with the same stem (``photo.png`` beside ``photo.jpg``)."""
    image = Path(image)
    try:
        me = os.stat(image)
    except OSError:
        me = None
    out = []
    for suffix in sorted(IMAGE_SUFFIXES):
        for s in (suffix, suffix.upper()):
            cand = image.with_suffix(s)
            if cand.name == image.name:
                continue
            try:
                st = os.stat(cand)
            except OSError:
                continue
            # On a case-insensitive disk photo.JPG *is* photo.jpg.
            if me is None or (st.st_ino, st.st_dev) != (me.st_ino, me.st_dev):
                out.append(cand)
    return out


# -- the writer --------------------------------------------------------------------------------
@dataclass
class WriteOutcome:
    path: Path
    action: WriteStatus
    reason: str = ""
    note: str = ""  # something done differently from what was asked, said to the user


def _persons(rec: dict | None) -> bool:
    return rec is not None and rec.get("source") == "human"


class SidecarWriter:
    def __init__(self, opts: SidecarOptions | None = None, ledger: Ledger | None = None) -> None:
        self.opts = opts or SidecarOptions()
        self.ledger = ledger or Ledger.default()

    def _naming(self, image: Path, fmt: str) -> tuple[str, list[Path]]:
        """The naming used for ``fmt``, and the images that forced extension naming (if any)."""
        naming = self.opts.naming(fmt)
        if naming == "stem":
            clash = stem_siblings(image)
            if clash:
                return "ext", clash
        return naming, []

    def _place(self, sidecar: Path) -> Path:
        """Where the sidecar named ``sidecar`` (beside its image) is kept: there, or in the mirror tree."""
        o = self.opts
        if o.out_dir is None:
            return sidecar
        rel = os.path.relpath(Path(sidecar).absolute(), Path(o.out_root).absolute())
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            raise ValueError(f"{sidecar.parent}: not under {o.out_root}, so it has no place in {o.out_dir}")
        return Path(o.out_dir) / rel

    def sidecar(self, image: Path, fmt: str, naming: str) -> Path:
        return self._place(sidecar_path(image, fmt, naming))

    def paths(self, image: Path) -> dict[str, Path]:
        return {f: self.sidecar(image, f, self._naming(image, f)[0]) for f in self.opts.formats}

    def ownership(self, sidecar: Path) -> Ownership:
        """Whose words ``sidecar`` holds (see ``Ownership``)."""
        try:
            return self._ownership_of(sidecar, _look(sidecar))
        except (OSError, LedgerError):
            return Ownership.FOREIGN  # unknown is treated as a person's: never overwritten

    def _ownership_of(self, sidecar: Path, snap: str | None) -> Ownership:
        if snap is None:
            return Ownership.ABSENT
        if snap.startswith(("not-a-file", _TOO_LARGE)):  # (a huge file is never one CapDesk wrote)
            return Ownership.BLOCKED
        rec = self.ledger.get(sidecar)
        if rec is not None and rec["sha256"] == snap:
            return Ownership.OURS
        intent = self.ledger.intent(sidecar)
        if intent is not None and intent["sha256"] == snap:
            # CapDesk renamed this file into place and stopped before recording it: it is ours.
            with contextlib.suppress(LedgerError):  # (if the ledger cannot take it now, the intent stays)
                self.ledger.confirm(sidecar)
            return Ownership.OURS
        return Ownership.FOREIGN

    def is_current(self, image: Path) -> bool:
        """Every chosen sidecar exists and was made for the image as it is now (or a person owns it)."""
        sig = image_signature(image)
        try:
            for p in self.paths(image).values():
                own = self._ownership_of(p, _look(p))
                if own in (Ownership.ABSENT, Ownership.BLOCKED):
                    return False  # a blocked path is written (and fails) so that it is reported
                if own is Ownership.OURS and self.ledger.get(p)["image"] != sig:
                    return False
        except (OSError, ValueError, LedgerError):
            return False  # the write will say what is wrong
        return True

    def write(self, image: Path, alt: AltText, force: bool | None = None, review: bool | None = None,
              reason: str | None = None) -> list[WriteOutcome]:
        """Write ``alt`` to each chosen sidecar. ``review``: whether a person should check it (kept in the
        XMP and the ledger, so that the list says so after a restart); a person's own words never need it."""
        if review is None and alt.source == "human":
            review = False
        overwrite = self.opts.overwrite if force is None else force
        alt = xmp.clean_alt(alt)  # what is written, and what the ledger remembers, is the same text
        image = Path(image)
        sig = image_signature(image)
        out = []
        for fmt in self.opts.formats:
            naming, clash = self._naming(image, fmt)
            p = sidecar_path(image, fmt, naming)
            try:
                p = self._place(p)
                if self.opts.out_dir is not None:
                    p.parent.mkdir(parents=True, exist_ok=True)
                res = self._write_one(image, fmt, p, alt, sig, overwrite, (review, reason))
                if clash:
                    res.note = self._clash_note(image, fmt, clash)
                out.append(res)
            except OSError as exc:  # said as the sidecar's own name and why, never the temporary file's
                out.append(WriteOutcome(p, WriteStatus.FAILED, f"cannot be written ({exc.strerror or exc})"))
            except (ValueError, ET.ParseError, LedgerError) as exc:
                out.append(WriteOutcome(p, WriteStatus.FAILED, f"{type(exc).__name__}: {exc}".splitlines()[0]))
        return out

    def follow_embedding(self, image: Path, before: str) -> None:
        """The picture was changed by ``embed_in_image`` (signature ``before`` until then): CapDesk's
        sidecars made for it still describe it, so the next run skips it instead of describing it again."""
        after = image_signature(image)
        if not before or not after or before == after:
            return
        for p in self.paths(image).values():
            with contextlib.suppress(LedgerError):
                self.ledger.reimage(p, before, after)

    def _clash_note(self, image: Path, fmt: str, clash: list[Path]) -> str:
        stem_name = self.sidecar(image, fmt, "stem")
        note = (f"{stem_name.name} would also be the sidecar of {clash[0].name}: "
                f"written as {sidecar_path(image, fmt, 'ext').name} instead")
        with folder_lock(stem_name.parent), contextlib.suppress(OSError, LedgerError):
            # CapDesk's own, unedited stem sidecar for this image would now describe the wrong picture.
            rec = self.ledger.get(stem_name)
            if (rec is not None and rec["image_path"] == str(image.absolute())
                    and self.ownership(stem_name) is Ownership.OURS):
                os.unlink(stem_name)
                self.ledger.forget(stem_name)
                note += f" (CapDesk's earlier {stem_name.name} for it was removed)"
        return note

    def _write_one(self, image: Path, fmt: str, p: Path, alt: AltText, sig: str, overwrite: bool,
                   flag: tuple[bool | None, str | None] = (None, None)) -> WriteOutcome:
        review, reason = flag
        with folder_lock(p.parent):
            before = _look(p)
            own = self._ownership_of(p, before)
            if own is Ownership.BLOCKED:
                return WriteOutcome(p, WriteStatus.FAILED, _blocked(before or ""))
            if own is Ownership.OURS and alt.source != "human" and not overwrite and _persons(self.ledger.get(p)):
                # A person's words that CapDesk saved for them (Ctrl+S) are theirs, as if written by hand.
                return WriteOutcome(p, WriteStatus.KEPT, "holds alt text a person saved; use --overwrite to replace it")
            kind = registry.get(fmt)
            aside: Path | None = None  # where a damaged sidecar was kept
            existing, damage = None, None
            if not kind.merges:
                if own is Ownership.FOREIGN and not overwrite:
                    return WriteOutcome(p, WriteStatus.KEPT, "exists and was not written by CapDesk (or was edited); "
                                                  "use --overwrite to replace it")
            else:
                if own is not Ownership.ABSENT:
                    try:  # the bytes come from a descriptor opened without following a link
                        raw, st = read_limited(p, SIDECAR_MAX_BYTES)
                    except RefusedFile:  # a link or a huge file put there since the look above
                        raw, st = None, None
                    if raw is None or sha256_text(raw) != before:
                        return WriteOutcome(p, WriteStatus.KEPT, "was changed while CapDesk was writing it; "
                                                                 "that version is kept")
                    existing, damage = kind.check(raw)
                    if damage:  # kept aside, and written anew: never a failure on every later run
                        aside = xmp.set_aside(p, raw, st)
                current = kind.read(p) if existing is not None else None
                rec = self.ledger.get(p)
                # Other tools may add properties to the file; what matters is whose alt text it holds.
                theirs = current is not None and current.strip() and (rec is None or rec["alt_text"] != current)
                if theirs and not overwrite:
                    return WriteOutcome(p, WriteStatus.KEPT, "holds alt text not written by CapDesk (or edited); "
                                                  "use --overwrite to replace it")
            o = self.opts
            data = kind.render(registry.Request(alt, lang=o.lang, ext_descr=o.ext_descr, mirror_dc=o.mirror_dc,
                                                review=review, reason=reason), existing)
            digest = sha256_text(data)
            if before == digest:
                self.ledger.put(p, digest, sig, image, alt, review, reason)
                return WriteOutcome(p, WriteStatus.UNCHANGED)
            tmp = write_temp(p, data, like=p if before is not None else None)
            try:
                # Before the rename: a crash after it is recoverable.
                self.ledger.intend(p, digest, sig, image, alt, review, reason)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            if not swap_in(tmp, p, before):
                with contextlib.suppress(LedgerError):
                    self.ledger.abandon(p)
                if aside is not None:  # the damaged file is still there: its copy is not needed
                    with contextlib.suppress(OSError):
                        os.unlink(aside)
                return WriteOutcome(p, WriteStatus.KEPT,
                                    "was changed while CapDesk was writing it; that version is kept")
            with contextlib.suppress(LedgerError):  # the intent stays and is confirmed on the next run
                self.ledger.confirm(p)
            note = f"was damaged ({damage}): kept as {aside.name} and written anew" if aside is not None else ""
            return WriteOutcome(p, WriteStatus.WRITTEN, note=note)

    def status(self, image: Path) -> SidecarState:
        """Whether the picture's sidecars hold nothing, CapDesk's words or a person's."""
        try:
            paths = list(self.paths(image).values())
            states = [self.ownership(p) for p in paths]
            if all(s is Ownership.ABSENT for s in states):
                return SidecarState.NONE
            for p, s in zip(paths, states):
                rec = self.ledger.get(p) if s is Ownership.OURS else None
                if rec is not None and rec.get("source") == "human":
                    return SidecarState.EDITED
        except LedgerError:
            return SidecarState.NONE
        foreign = any(s in (Ownership.FOREIGN, Ownership.BLOCKED) for s in states)
        return SidecarState.EDITED if foreign else SidecarState.GENERATED


    def own_record(self, image: Path) -> dict | None:
        """The ledger's record of the first of the picture's sidecars that CapDesk wrote and nobody
        edited since (what it says, whose words, whether it needs review), or None."""
        try:
            for p in self.paths(image).values():
                if self.ownership(p) is Ownership.OURS:
                    return self.ledger.get(p)
        except (OSError, ValueError, LedgerError):
            return None
        return None


def image_signature(image: Path) -> str:
    """Size and modification time: cheap, and changes whenever the picture is replaced."""
    try:
        st = Path(image).stat()
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def embed_in_image(image: Path, xmp_sidecar: Path) -> Path:
    """Copy the sidecar's XMP into the image with exiftool, keeping ``<image>_original``.

    Only on the user's request; raises SidecarError when exiftool is missing or fails.
    """
    exe = shutil.which("exiftool")
    if exe is None:
        raise SidecarError(f"{image}: embedding needs exiftool (Debian: libimage-exiftool-perl)")
    backup = Path(str(image) + "_original")
    if backup.exists():
        raise SidecarError(f"{image}: {backup.name} already exists; move it away before embedding again")
    r = subprocess.run([exe, "-q", "-tagsfromfile", str(xmp_sidecar), "-xmp:all", str(image)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SidecarError(f"{image}: exiftool failed ({(r.stderr or r.stdout).strip().splitlines()[0]})")
    return backup
