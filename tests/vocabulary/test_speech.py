from __future__ import annotations

import shutil
import wave

import numpy as np
import pytest
from conftest import SAMPLES, run_cli

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None and shutil.which("espeak") is None,
                                reason="needs espeak-ng (Debian package espeak-ng)")


def _read(path):
    with wave.open(str(path)) as w:
        frames = w.readframes(w.getnframes())
        return np.frombuffer(frames, dtype=np.int16).astype(np.float32), w.getframerate()


@pytest.mark.slow  # 2 s measured on two busy cores
def test_wav_holds_real_speech_of_the_caption(tmp_path):
    out = tmp_path / "caption.wav"
    r = run_cli("caption", "--json", "--wav", str(out), str(SAMPLES / "chelsea.png"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1 and r.stdout.startswith("{")  # speech never pollutes results
    samples, rate = _read(out)
    seconds = len(samples) / rate
    assert 0.2 < seconds < 20
    assert np.sqrt(np.mean(samples**2)) > 300  # not silence


def test_longer_text_gives_longer_speech(tmp_path):
    from capdesk.speech import save_wav

    short, _ = _read(save_wav("A cat.", tmp_path / "a.wav"))
    long, _ = _read(save_wav("A tabby cat lying on a red rug next to a window on a sunny afternoon.",
                             tmp_path / "b.wav"))
    assert len(long) > 2 * len(short)


class SoundCard:
    """Stands in for the sound device this machine lacks: 'plays' each rendered WAV for its length,
    and says when it starts, so that a test can speak over it."""

    def __init__(self) -> None:
        import threading

        self.played: list[float] = []
        self.playing = threading.Event()
        self._stop = threading.Event()

    def play(self, path, interrupted) -> None:
        if interrupted.is_set():
            return
        samples, rate = _read(path)
        self.played.append(len(samples) / rate)
        self._stop.clear()
        self.playing.set()
        self._stop.wait(len(samples) / rate)
        self.playing.clear()

    def stop(self) -> None:
        self._stop.set()


LONG = "A tabby cat lying on a red rug next to a window on a sunny afternoon, with a book beside it."


def test_now_interrupts_and_drops_what_waits():
    from capdesk.speech import Priority, Speaker

    card = SoundCard()
    sp = Speaker(player=card)
    assert sp.error is None
    sp.say(LONG)
    assert card.playing.wait(30)
    sp.say("Queued behind it.", Priority.NORMAL)
    sp.say("Speak now.")  # the user pressed Speak: the long one stops, the queued one is dropped
    assert sp.wait_idle(60)
    assert sp.spoken == ["Speak now."]
    sp.close()


@pytest.mark.slow  # 5 s measured on two busy cores
def test_normal_priority_waits_its_turn():
    from capdesk.speech import Priority, Speaker

    card = SoundCard()
    sp = Speaker(player=card)
    sp.say("New picture one: a cat.", Priority.NORMAL)
    assert card.playing.wait(30)
    sp.say("New picture two: a dog.", Priority.NORMAL)
    sp.say("New picture three: a cup.", Priority.NORMAL)
    assert sp.wait_idle(60)
    assert sp.spoken == ["New picture one: a cat.", "New picture two: a dog.", "New picture three: a cup."]
    assert len(card.played) == 3 and all(s > 0.5 for s in card.played)  # each one really spoken whole
    sp.close()


def test_speaker_starts_without_blocking_its_caller():
    import time

    from capdesk.speech import Speaker

    t0 = time.monotonic()
    sp = Speaker(wait=False, player=SoundCard())
    assert time.monotonic() - t0 < 0.5  # the engine starts in the speech thread, not the caller's
    assert sp.ready.wait(20) and sp.error is None
    sp.close()


def test_spoken_descriptions_say_whose_they_are_and_never_fall_silent():
    from capdesk.session.messages import for_the_ear

    assert for_the_ear("cat.jpg", "A cat.", None, False, several=False) == "A cat."
    assert for_the_ear("cat.jpg", "A cat.", None, False, several=True) == "cat.jpg: A cat."
    assert for_the_ear("cat.jpg", "May contain: a cat.", "withheld", True, several=True) == \
        "cat.jpg: May contain: a cat. Needs review."
    assert for_the_ear("rocket.jpg", "", "nothing was recognised with confidence", True, several=True) == \
        "rocket.jpg: No description: nothing was recognised with confidence."


@pytest.mark.slow  # describes and speaks two pictures
def test_several_pictures_are_spoken_each_with_its_name_and_an_empty_one_is_not_silence(tmp_path):
    from capdesk.speech import save_wav

    d = tmp_path / "pics"
    d.mkdir()
    for n in ("chelsea.png", "rocket.jpg"):
        shutil.copy(SAMPLES / n, d / n)
    out = tmp_path / "all.wav"
    r = run_cli("caption", "--json", "--wav", str(out), str(d))
    assert r.returncode == 0, r.stderr
    import json

    said = [json.loads(line)["description"] for line in r.stdout.splitlines()]
    spoken, rate = _read(out)
    bare, _ = _read(save_wav(" ".join(t for t in said if t), tmp_path / "bare.wav"))
    # The names and the empty one's "No description: ..." are heard too: clearly longer than the
    # descriptions alone (espeak-ng says about 15 characters a second).
    assert len(spoken) / rate > len(bare) / rate + 1.5


def test_sound_output_needs_a_sound_server_a_card_or_an_alsa_default(tmp_path, monkeypatch):
    """Unasked speech needs somewhere for the sound to go: without a server, a card or an ALSA default the
    window's first start said 'speech failed: audio open error' in the status bar."""
    from pathlib import Path

    from capdesk import speech

    run, home = tmp_path / "run", tmp_path / "home"
    run.mkdir()
    home.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PULSE_SERVER", raising=False)
    real_read, real_is_file = Path.read_text, Path.is_file
    cards = {"text": " --- no soundcards ---\n"}
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: cards["text"] if str(self) == "/proc/asound/cards"
                        else real_read(self, *a, **k))
    monkeypatch.setattr(Path, "is_file", lambda self: False if str(self) == "/etc/asound.conf" else real_is_file(self))
    assert not speech.sound_output()
    (home / ".asoundrc").write_text("pcm.!default { type null }\n")
    assert speech.sound_output()
    (home / ".asoundrc").unlink()
    (run / "pipewire-0").touch()
    assert speech.sound_output()
    (run / "pipewire-0").unlink()
    cards["text"] = " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n"
    assert speech.sound_output()
