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
