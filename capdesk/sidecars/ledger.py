"""What CapDesk wrote where: the sha256 of each sidecar it wrote, so it can tell its own
files from files a person wrote or edited, and never overwrite the latter.

A write is recorded twice: as an *intent* (path and new hash) before the sidecar is renamed
into place, and *confirmed* after. A crash between the two leaves the intent; the next run
finds the file holding exactly the intended bytes and confirms it (so the sidecar is still
recognised as CapDesk's), or finds other bytes and drops the intent.

A ledger that cannot be opened or written (garbage, truncated, a folder, read-only) is set
aside as ``NAME.damaged-TIME`` and rebuilt; when even that is impossible, ``error`` says why in
one line and every call raises LedgerError with it, so callers refuse instead of crashing.
File names that are not valid UTF-8 are keyed by their raw bytes.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sidecars (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, image TEXT NOT NULL, image_path TEXT NOT NULL,
    alt_text TEXT, source TEXT, model TEXT, confidence REAL, written_at REAL
);
CREATE TABLE IF NOT EXISTS intents (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, image TEXT NOT NULL, image_path TEXT NOT NULL,
    alt_text TEXT, source TEXT, model TEXT, confidence REAL, written_at REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS reviews (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, review INTEGER NOT NULL, reason TEXT
);
"""
_COLUMNS = ("sha256", "image", "image_path", "alt_text", "source", "model", "confidence", "written_at")
EMPTY_REASON = "the alt text is empty: a person should write it"


def _private_file(db: str) -> None:
    """The ledger readable by its user alone: made 0600 before SQLite opens it (its -wal and -shm files
    take the database's mode), and an older 0644 one of this user's tightened."""
    try:
        fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return  # SQLite says why, in the ledger's own words
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


class LedgerError(Exception):
    """The ledger cannot be used; ``str()`` is one line naming the file and the reason."""


def _text(value: str) -> str | bytes:
    """A value sqlite can store: text when it is valid UTF-8, else the raw bytes of the file name."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(value)
    return value


def _damaged(exc: BaseException) -> bool:
    """Errors that say the file itself is bad (so a fresh ledger is the cure), not that it is busy or the disk full."""
    if isinstance(exc, sqlite3.OperationalError):
        return "readonly" in str(exc) or "unable to open" in str(exc)
    return isinstance(exc, sqlite3.DatabaseError)


def _why(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def recorded_review(rec: dict[str, Any] | None) -> str | None:
    """Why the machine-written alt text of a ledger record needs a person's review, or None when it
    does not (or the record is a person's). An empty alt text always does: empty alt marks a picture as
    decorative. A record without the review flag (from an earlier version) is judged by what it holds:
    only a withheld caption was written without its confidence."""
    if rec is None or rec.get("source") != "machine":
        return None
    review, reason = rec.get("review"), rec.get("reason")
    if not (rec.get("alt_text") or "").strip():
        return reason or EMPTY_REASON
    if review is None:
        return None if rec.get("confidence") is not None else \
            "no scene caption was said: a person should check the alt text"
    return (reason or "a person should check the alt text") if review else None


class Ledger:
    def __init__(self, db: Path | str) -> None:
        self.db = str(db)
        self.error: str | None = None
        self.set_aside: str | None = None  # where a damaged ledger was moved, when it was
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = self._open()
        except (sqlite3.Error, OSError) as exc:
            if self.db == ":memory:":
                raise
            if _damaged(exc):
                self._rebuild(exc)
            else:  # busy, disk full, I/O error: the file may be sound, so it is not moved
                self.error = f"the sidecar ledger {self.db} cannot be used ({_why(exc)})"

    # -- opening, and what to do when that fails ------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if self.db != ":memory:":
            Path(self.db).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if os.path.lexists(self.db) and not os.path.isfile(self.db):
                raise sqlite3.DatabaseError("it is not a file")
            _private_file(self.db)
        conn = sqlite3.connect(self.db, check_same_thread=False, timeout=30)
        try:
            if self.db != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
                # In WAL mode NORMAL loses nothing when the process is killed; only a power cut can
                # undo the last commits, and then those sidecars read as a person's: kept, never lost.
                # (FULL tripled the cost of a write: 23 ms against 7 ms per image, measured.)
                conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("PRAGMA quick_check").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"damaged ({row[0] if row else 'no answer'})")
            # A real write: a read-only file or folder shows here, not in the middle of a batch.
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('opened', ?)", (str(time.time()),))
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _rebuild(self, exc: BaseException) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = f"{self.db}.damaged-{stamp}"
        try:
            if os.path.lexists(self.db):
                os.replace(self.db, aside)
                self.set_aside = aside
            for extra in ("-wal", "-shm"):
                if os.path.lexists(self.db + extra):
                    os.replace(self.db + extra, aside + extra)
            self._conn = self._open()
        except (sqlite3.Error, OSError) as exc2:
            self._conn = None
            self.error = (f"the sidecar ledger {self.db} cannot be used ({_why(exc)}) and cannot be rebuilt "
                          f"({_why(exc2)}); fix its folder's permissions or move it away")

    @classmethod
    def default(cls) -> Ledger:
        import platformdirs

        folder = Path(platformdirs.user_state_dir("capdesk", appauthor=False))
        # The path and alt text (text read included) of every picture described, those in private
        # folders too: CapDesk's own folder is made private, as older versions did not.
        with contextlib.suppress(OSError):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.lstat(folder)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(folder, 0o700)
        return cls(folder / "sidecars.sqlite")

    # -- queries ---------------------------------------------------------------------------------
    @staticmethod
    def _key(path: Path) -> str | bytes:
        return _text(str(Path(path).absolute()))

    def _run(self, sql: str, args: tuple = (), fetch: bool = False, many: list[tuple] | None = None) -> Any:
        """One statement (or a few, as one transaction) under the lock; LedgerError on any sqlite failure."""
        if self._conn is None:
            raise LedgerError(self.error or f"the sidecar ledger {self.db} is closed")
        with self._lock:
            try:
                if fetch:
                    return self._conn.execute(sql, args).fetchone()
                with self._conn:  # commits, or rolls back on error
                    for stmt, a in many or [(sql, args)]:
                        self._conn.execute(stmt, a)
            except sqlite3.Error as exc:
                raise LedgerError(f"the sidecar ledger {self.db} cannot be {'read' if fetch else 'written'} "
                                  f"({_why(exc)})") from None
        return None

    def _row(self, table: str, path: Path) -> dict[str, Any] | None:
        """The record of ``path``, with its review flag (``review``: True, False or None when not known,
        ``reason``): kept in a table of its own, for the record's exact bytes, so that the tables an
        earlier version reads and writes stay as they were, and a write by it leaves no stale flag."""
        cols = ", ".join(f"t.{c}" for c in _COLUMNS)
        row = self._run(f"SELECT {cols}, r.review, r.reason FROM {table} t LEFT JOIN reviews r "
                        "ON r.path = t.path AND r.sha256 = t.sha256 WHERE t.path = ?", (self._key(path),), fetch=True)
        if row is None:
            return None
        rec = dict(zip((*_COLUMNS, "review", "reason"), row))
        rec["review"] = None if rec["review"] is None else bool(rec["review"])
        if isinstance(rec["image_path"], bytes):
            rec["image_path"] = os.fsdecode(rec["image_path"])
        return rec

    def get(self, path: Path) -> dict[str, Any] | None:
        return self._row("sidecars", path)

    def intent(self, path: Path) -> dict[str, Any] | None:
        """The write announced for ``path`` and not yet confirmed (a crash came between), or None."""
        return self._row("intents", path)

    def _values(self, path: Path, sha256: str, image_sig: str, image: Path, alt) -> tuple:
        return (self._key(path), sha256, image_sig, self._key(image), alt.text, alt.source, alt.model,
                alt.confidence, time.time())

    def _review(self, path: Path, sha256: str, review: bool | None, reason: str | None) -> tuple[str, tuple]:
        if review is None:
            return "DELETE FROM reviews WHERE path = ?", (self._key(path),)
        return ("INSERT OR REPLACE INTO reviews VALUES (?, ?, ?, ?)",
                (self._key(path), sha256, int(review), reason if review else None))

    def put(self, path: Path, sha256: str, image_sig: str, image: Path, alt, review: bool | None = None,
            reason: str | None = None) -> None:
        """Record what CapDesk wrote at ``path``; ``review``: whether a person should check it (None: unknown)."""
        self._run("", many=[("INSERT OR REPLACE INTO sidecars VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             self._values(path, sha256, image_sig, image, alt)),
                            self._review(path, sha256, review, reason)])

    def intend(self, path: Path, sha256: str, image_sig: str, image: Path, alt, review: bool | None = None,
               reason: str | None = None) -> None:
        """Record a write about to happen (before the rename that makes it real); its review flag is
        kept for its bytes, so it holds once the write is confirmed and never for other bytes."""
        self._run("", many=[("INSERT OR REPLACE INTO intents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             self._values(path, sha256, image_sig, image, alt)),
                            self._review(path, sha256, review, reason)])

    def confirm(self, path: Path) -> None:
        """The announced write happened: it becomes the record of what CapDesk wrote there."""
        key = (self._key(path),)
        self._run("", many=[("INSERT OR REPLACE INTO sidecars SELECT * FROM intents WHERE path = ?", key),
                            ("DELETE FROM intents WHERE path = ?", key)])

    def abandon(self, path: Path) -> None:
        self._run("DELETE FROM intents WHERE path = ?", (self._key(path),))

    def forget(self, path: Path) -> None:
        key = (self._key(path),)
        self._run("", many=[("DELETE FROM sidecars WHERE path = ?", key), ("DELETE FROM intents WHERE path = ?", key),
                            ("DELETE FROM reviews WHERE path = ?", key)])

    def reimage(self, path: Path, before: str, after: str) -> None:
        """The record of ``path`` was made for the picture at signature ``before``, which CapDesk itself
        changed to ``after``: it holds for ``after`` now (a record for another signature is left alone)."""
        self._run("UPDATE sidecars SET image = ? WHERE path = ? AND image = ?", (after, self._key(path), before))

    def move(self, old: Path, new: Path) -> None:
        keys = (self._key(new), self._key(old))
        self._run("", many=[("UPDATE OR REPLACE sidecars SET path = ? WHERE path = ?", keys),
                            ("UPDATE OR REPLACE reviews SET path = ? WHERE path = ?", keys)])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None
