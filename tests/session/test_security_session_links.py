"""The window's list of a folder that others can write: a picture planted as a link to one of the user's
private pictures is listed as refused, with its reason; the same link opened by the user is theirs to
follow. Real links, the session without Qt."""

from __future__ import annotations

import shutil

from conftest import SAMPLES

from capdesk.imageio import OUTSIDE
from capdesk.session.core import PictureStatus, Session
from capdesk.session.settings import Settings
from capdesk.session.tasks import ThreadRunner


def _folder(tmp_path):
    private = tmp_path / "home" / "private"
    private.mkdir(parents=True)
    shutil.copy(SAMPLES / "chelsea.png", private / "bank.png")
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(SAMPLES / "coffee.png", shared / "ours.png")
    (shared / "leak.png").symlink_to(private / "bank.png")
    return shared


def _open(settings_file, *paths) -> Session:
    runner = ThreadRunner()
    s = Session(Settings(ocr="never"), runner, lambda: True)
    s.open_paths(*paths)
    assert runner.pump(lambda: s._busy == 0, 180)
    return s


def test_a_link_leaving_an_opened_folder_is_listed_as_refused(settings_file, tmp_path):
    shared = _folder(tmp_path)
    s = _open(settings_file, shared)
    leak = s.pictures[str(shared / "leak.png")]
    assert leak.status is PictureStatus.FAILED and leak.error == OUTSIDE
    assert s.pictures[str(shared / "ours.png")].status is not PictureStatus.FAILED


def test_the_same_link_opened_by_the_user_is_followed(settings_file, tmp_path):
    shared = _folder(tmp_path)
    s = _open(settings_file, shared / "leak.png")
    leak = s.pictures[str(shared / "leak.png")]
    assert leak.status is not PictureStatus.FAILED and s.current is leak
