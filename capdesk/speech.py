"""Speaking captions with pyttsx3 (espeak-ng on Linux, SAPI5 on Windows, NSSpeech on macOS).

``Speaker`` runs the engine in its own thread: ``say`` never blocks the caller, and a new
caption interrupts the one being spoken (the previous one is stale once the user moved on).
``save_wav`` renders speech to a file instead of the speakers.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

WAV_TIMEOUT_S = 20.0


class SpeechError(Exception):
    pass


@dataclass
class Voice:
    rate: int | None = None  # words per minute
    volume: float | None = None  # 0..1
    voice: str | None = None  # an id from list_voices()


def _engine(v: Voice):
    try:
        import pyttsx3

        eng = pyttsx3.init()
    except Exception as exc:  # pyttsx3 raises bare errors when no speech driver is installed
        raise SpeechError(f"no speech engine available ({exc}); on Linux install espeak-ng") from None
    if v.rate:
        eng.setProperty("rate", int(v.rate))
    if v.volume is not None:
        eng.setProperty("volume", float(v.volume))
    if v.voice:
        eng.setProperty("voice", v.voice)
    return eng


def list_voices() -> list[tuple[str, str]]:
    eng = _engine(Voice())
    return [(vo.id, vo.name) for vo in eng.getProperty("voices")]


def save_wav(text: str, path: Path, voice: Voice | None = None) -> Path:
    """Speak ``text`` into a WAV file (blocking)."""
    path = Path(path)
    eng = _engine(voice or Voice())
    done = threading.Event()
    token = eng.connect("finished-utterance", lambda **_: done.set())
    eng.save_to_file(text, str(path))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the espeak driver prints; stdout is for results
            eng.runAndWait()
            # pyttsx3's espeak driver can return from runAndWait while espeak-ng is still
            # synthesising on its own thread (seen under CPU load); the file is complete only
            # once the utterance is reported finished.
            done.wait(WAV_TIMEOUT_S + len(text) / 10)
    finally:
        eng.disconnect(token)
    if not path.exists() or path.stat().st_size <= 44:
        raise SpeechError(f"{path}: the speech engine wrote no audio")
    return path


class Speaker:
    """Non-blocking, interruptible speech in a worker thread."""

    def __init__(self, voice: Voice | None = None) -> None:
        self.voice = voice or Voice()
        self._q: queue.Queue[str | None] = queue.Queue()
        self._engine = None
        self._ready = threading.Event()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name="capdesk-speech", daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        try:
            self._engine = _engine(self.voice)
        except SpeechError as exc:
            self.error = str(exc)
            self._ready.set()
            return
        self._ready.set()
        while True:
            text = self._q.get()
            if text is None:
                return
            while not self._q.empty():  # only the newest caption is worth saying
                newer = self._q.get()
                if newer is None:
                    return
                text = newer
            self._engine.say(text)
            self._engine.runAndWait()

    def say(self, text: str) -> None:
        if self.error:
            raise SpeechError(self.error)
        if self._engine is not None:
            with contextlib.suppress(Exception):  # interrupt what is being said now
                self._engine.stop()
        self._q.put(text)

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(timeout=5)
