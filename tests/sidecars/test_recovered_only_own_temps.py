"""What CapDesk's next write in a folder moves into the user's private ``recovered`` folder: only a temporary
file its own killed write left there, never a file someone else named like one.

In a shared team folder another member can make a hard link to a shared file (plan.txt) under a name
like an abandoned CapDesk temporary file (``.NAME.PID.XXXXXXXX.tmp``, the PID of a process that is gone).
Moving that name away and making it private was a chmod of the shared file itself: the team could no
longer read plan.txt. Only a regular file of the user's, with one link, noted by the user's own CapDesk
before it made it, is recovered; its bytes are copied into a new private file; everything else stays."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from killed_write import left_by_a_killed_write

from capdesk.safe_files import _recover, atomic_write, recovery_folder, sweep_stale_temps, temp_name


def _dead_pid() -> int:
    r = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                       timeout=30)
    return int(r.stdout)


def _recovered() -> list:
    folder = recovery_folder()
    return sorted(folder.iterdir()) if folder.exists() else []


@pytest.fixture
def team(tmp_path):
    """A shared folder holding plan.txt, which the team reads (0664)."""
    d = tmp_path / "team"
    d.mkdir()
    plan = d / "plan.txt"
    plan.write_text("team plan: everyone reads this\n")
    plan.chmod(0o664)
    return d


def _untouched(plan, link) -> None:
    assert stat.S_IMODE(os.stat(plan).st_mode) == 0o664  # the team still reads it
    assert link.exists() and os.path.samefile(link, plan) and plan.read_text() == "team plan: everyone reads this\n"
    assert _recovered() == []


def test_a_hard_link_named_like_an_abandoned_temp_is_left_where_it_is(team):
    plan = team / "plan.txt"
    link = team / temp_name("plan.txt", _dead_pid(), "deadbeef")
    os.link(plan, link)
    atomic_write(team / "a.txt", b"the next write in the folder")  # sweeps the folder
    _untouched(plan, link)


def test_a_hard_link_put_in_place_of_a_real_abandoned_temp_is_left_where_it_is(team):
    """Even under the very name CapDesk's killed write used (so CapDesk's note stands for that name), a
    second link to a shared file is not the file CapDesk made."""
    plan = team / "plan.txt"
    tmp = left_by_a_killed_write(plan, b"the new plan, half written")
    tmp.unlink()
    os.link(plan, tmp)
    assert sweep_stale_temps(team) == []
    _untouched(plan, tmp)
    assert _recover(tmp) is None  # the descriptor's judgement too, without the look by name first
    _untouched(plan, tmp)


def test_a_file_named_like_a_temp_that_capdesk_did_not_make_is_left_where_it_is(team):
    fake = team / temp_name("plan.txt", _dead_pid(), "0badf00d")
    fake.write_bytes(b"someone's file, named like a temporary one")
    fake.chmod(0o644)
    assert sweep_stale_temps(team) == []
    assert fake.read_bytes() == b"someone's file, named like a temporary one"
    assert stat.S_IMODE(fake.stat().st_mode) == 0o644 and _recovered() == []


def test_a_fifo_in_place_of_an_abandoned_temp_is_judged_without_waiting_on_it(team):
    tmp = left_by_a_killed_write(team / "plan.txt", b"half")
    tmp.unlink()
    os.mkfifo(tmp)
    assert _recover(tmp) is None  # opened without waiting for a writer: no hang
    assert stat.S_ISFIFO(os.lstat(tmp).st_mode) and _recovered() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="a file of another user can only be made as root (os.chown)")
def test_a_temp_of_another_user_is_left_where_it_is(team):
    tmp = left_by_a_killed_write(team / "plan.txt", b"another user's half-written plan")
    os.chown(tmp, 65534, -1)
    assert sweep_stale_temps(team) == []
    assert tmp.read_bytes() == b"another user's half-written plan" and tmp.stat().st_uid == 65534
    assert _recovered() == []


def test_a_temp_left_by_a_killed_capdesk_write_is_recovered_into_a_new_private_file(team):
    plan = team / "plan.txt"
    tmp = left_by_a_killed_write(plan, b"the new plan, half written")
    assert stat.S_IMODE(tmp.stat().st_mode) == 0o664  # the plan's mode, as write_temp gives it
    ino = tmp.stat().st_ino
    assert sweep_stale_temps(team) == [tmp]
    assert not tmp.exists() and plan.read_text() == "team plan: everyone reads this\n"
    [copy] = _recovered()
    assert copy.read_bytes() == b"the new plan, half written"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600 and copy.stat().st_ino != ino  # a copy, made private
    assert stat.S_IMODE(plan.stat().st_mode) == 0o664
