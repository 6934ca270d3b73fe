"""The window's runner lets go of a job's objects on the interface thread only (real Qt thread pool, offscreen).

A Python object that wraps a Qt object must die on the thread that owns it: a pane's runner freed by a
worker thread, after its window had closed, destroyed its poster while the interface thread delivered a
call to it. So whatever a job is given or makes (its function, its callbacks and what they belong to, its
result or its failure) is let go on the interface thread, and the poster lives as long as the process."""

from __future__ import annotations

import gc
import sys
import threading

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import QCoreApplication, QThreadPool  # noqa: E402

JOBS = 120


class Tracked:
    """Records the thread it is freed on."""

    freed_on: list[str] = []

    def __del__(self) -> None:
        Tracked.freed_on.append(threading.current_thread().name)


class Owner(Tracked):
    """What a callback belongs to (in the window: a pane, a dialog)."""

    def __init__(self, done: list) -> None:
        self.done = done

    def finished(self, value) -> None:
        self.done.append(type(value).__name__)

    def work(self, fail: bool) -> Tracked:
        if fail:
            raise OSError("the disk went away")
        return Tracked()


@pytest.fixture
def busy_switching():
    """Threads handed the interpreter at every chance, so that a worker finishing after its result was
    delivered is common rather than rare."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_a_jobs_objects_are_let_go_on_the_interface_thread(qtbot, busy_switching):
    """Jobs that succeed, fail, or were started with no callback at all (work whose result nobody waits for)."""
    from capdesk.gui.qtutil import QtRunner

    Tracked.freed_on.clear()
    done: list[str] = []
    runner = QtRunner()
    results = 0
    for i in range(JOBS):
        owner = Owner(done)
        fail = i % 3 == 0
        results += not fail
        if i % 4 == 1:
            runner.run(owner.work, fail)
        else:
            runner.run(owner.work, fail, on_done=owner.finished, on_failed=owner.finished)
        del owner  # from here on only the job holds it
    called = JOBS - JOBS // 4
    expected = JOBS + results  # every owner, and every result made on a worker
    assert QThreadPool.globalInstance().waitForDone(60_000)
    while len(done) < called or len(Tracked.freed_on) < expected:
        QCoreApplication.processEvents()  # delivered as soon as posted, whatever the workers do meanwhile
        gc.collect()
    assert sorted(set(done)) == ["Tracked", "str"]  # results, and failures as their one-line message
    assert len(done) == called and len(Tracked.freed_on) == expected
    main = threading.main_thread().name
    assert set(Tracked.freed_on) == {main}, [t for t in Tracked.freed_on if t != main][:5]


def test_every_runner_posts_through_the_one_poster_of_the_process(qtbot):
    from capdesk.gui.qtutil import QtRunner

    a, b = QtRunner(), QtRunner()
    assert a._poster is b._poster
    got = []
    a.post(lambda: got.append(threading.current_thread().name))
    del a, b
    gc.collect()
    qtbot.waitUntil(lambda: got == [threading.main_thread().name])


def test_garbage_in_cycles_is_collected_on_the_interface_thread_while_workers_allocate(qtbot):
    """A closed dialog's widgets caught in a reference cycle were collected by a worker that crossed the
    collector's threshold (a test run died with SIGSEGV, "Garbage-collecting" in a worker reading a manifest)."""
    from capdesk.gui.qtutil import QtRunner

    runner = QtRunner()
    assert not gc.isenabled()  # from the first runner on, only the interface thread collects
    Tracked.freed_on.clear()
    for _ in range(20):
        a, b = Tracked(), Tracked()
        a.other, b.other = b, a  # garbage only a cycle collection frees
        del a, b
    done: list[int] = []

    def allocate() -> int:
        return len([[i] for i in range(200_000)])  # far past the collector's threshold, on the worker

    for _ in range(4):
        runner.run(allocate, on_done=done.append)
    qtbot.waitUntil(lambda: len(done) == 4, timeout=60_000)
    assert QThreadPool.globalInstance().waitForDone(60_000)
    assert Tracked.freed_on == []  # no worker collected them, though each crossed the threshold many times
    gc.collect()
    assert Tracked.freed_on == [threading.main_thread().name] * 40
