"""The sidecar ledger holds the path and alt text of every picture described, private folders' too: it is
readable by its user alone (state folder 0700, database and its WAL files 0600), older loose ones tightened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from capdesk.sidecars.ledger import Ledger


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_a_new_ledger_is_private(tmp_path):
    old = os.umask(0o022)  # the usual umask: files 0644 unless made otherwise
    try:
        db = tmp_path / "state" / "capdesk" / "sidecars.sqlite"
        ledger = Ledger(db)
        assert ledger.error is None
        ledger.forget(tmp_path / "a.txt")  # a write: the WAL files exist from here on
    finally:
        os.umask(old)
    assert _mode(db.parent) == 0o700 and _mode(db) == 0o600
    for extra in ("-wal", "-shm"):
        if Path(f"{db}{extra}").exists():
            assert _mode(Path(f"{db}{extra}")) == 0o600, extra


def test_an_older_loose_ledger_and_state_folder_are_tightened(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = tmp_path / "state" / "capdesk"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)
    Ledger(folder / "sidecars.sqlite")  # as an older CapDesk left it: a database of 0644
    os.chmod(folder / "sidecars.sqlite", 0o644)
    ledger = Ledger.default()
    assert ledger.error is None and Path(ledger.db) == folder / "sidecars.sqlite"
    assert _mode(folder) == 0o700 and _mode(folder / "sidecars.sqlite") == 0o600
