"""What CapDesk wrote where: the sha256 of each sidecar it wrote, so it can tell its own
files from files a person wrote or edited, and never overwrite the latter."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sidecars (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, image TEXT NOT NULL, image_path TEXT NOT NULL,
    alt_text TEXT, source TEXT, model TEXT, confidence REAL, written_at REAL
)
"""


class Ledger:
    def __init__(self, db: Path | str) -> None:
        self.db = str(db)
        if self.db != ":memory:":
            Path(self.db).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.db, check_same_thread=False, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL") if self.db != ":memory:" else None
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    @classmethod
    def default(cls) -> Ledger:
        import platformdirs

        return cls(Path(platformdirs.user_state_dir("capdesk", appauthor=False)) / "sidecars.sqlite")

    @staticmethod
    def _key(path: Path) -> str:
        return str(Path(path).absolute())

    def get(self, path: Path) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT sha256, image, image_path, alt_text, source, model, confidence, written_at "
                "FROM sidecars WHERE path = ?", (self._key(path),)).fetchone()
        if row is None:
            return None
        keys = ("sha256", "image", "image_path", "alt_text", "source", "model", "confidence", "written_at")
        return dict(zip(keys, row))

    def put(self, path: Path, sha256: str, image_sig: str, image: Path, alt) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO sidecars VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (self._key(path), sha256, image_sig, self._key(image), alt.text, alt.source, alt.model,
                 alt.confidence, time.time()))
            self._conn.commit()

    def forget(self, path: Path) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM sidecars WHERE path = ?", (self._key(path),))
            self._conn.commit()

    def move(self, old: Path, new: Path) -> None:
        with self._lock:
            self._conn.execute("UPDATE OR REPLACE sidecars SET path = ? WHERE path = ?",
                               (self._key(new), self._key(old)))
            self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
