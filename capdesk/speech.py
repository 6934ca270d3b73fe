"""Speaking captions with pyttsx3 (espeak-ng on Linux, SAPI5 on Windows, NSSpeech on macOS).

``Speaker`` is a queue with two priorities, in the way NVDA's speech manager has NOW and NORMAL:
``say(text)`` (NOW: the user asked, e.g. "Speak" or a new selection) stops what is being said
and drops what waits; ``say(text, Priority.NORMAL)`` (a watched folder's new captions) waits its
turn. The engine starts and speaks in the speaker's own thread, so nothing here blocks the
caller, and the engine is only ever touched from that thread.

On Linux pyttsx3's espeak driver plays its audio through a blocking ``aplay`` that cannot be
stopped, so there the speech is rendered to a WAV file and played by a player process the
speaker can end at once. ``save_wav`` renders speech to a file instead of the speakers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

WAV_TIMEOUT_S = 20.0
PLAYERS = (["aplay", "-q"], ["paplay"], ["pw-play"])  # ALSA, PulseAudio, PipeWire


class SpeechError(Exception):
    pass


class Priority(IntEnum):
    NORMAL = 0  # after what is being said
    NOW = 1  # instead of what is being said, and of everything waiting


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
    with contextlib.suppress(Exception):
        # The espeak driver prints "Audio saved to ..." on stdout, where the CLI writes its
        # results; silencing that module's print keeps stdout clean without touching sys.stdout
        # (which other threads are using).
        import pyttsx3.drivers.espeak as espeak_driver

        espeak_driver.print = lambda *a, **k: None
    if v.rate:
        eng.setProperty("rate", int(v.rate))
    if v.volume is not None:
        eng.setProperty("volume", float(v.volume))
    if v.voice:
        eng.setProperty("voice", v.voice)
    return eng


def list_voices() -> list[tuple[str, str]]:
    """(id, name) of every voice the speech engine offers; empty when there is no engine."""
    try:
        eng = _engine(Voice())
    except SpeechError:
        return []
    voices = []
    for vo in eng.getProperty("voices") or []:
        voices.append((str(vo.id), str(getattr(vo, "name", "") or vo.id)))
    return voices


def _render(eng, text: str, path: Path) -> None:
    done = threading.Event()
    token = eng.connect("finished-utterance", lambda **_: done.set())
    eng.save_to_file(text, str(path))
    try:
        eng.runAndWait()
        # pyttsx3's espeak driver can return from runAndWait while espeak-ng is still
        # synthesising on its own thread (seen under CPU load); the file is complete only
        # once the utterance is reported finished.
        done.wait(WAV_TIMEOUT_S + len(text) / 10)
    finally:
        eng.disconnect(token)


def save_wav(text: str, path: Path, voice: Voice | None = None) -> Path:
    """Speak ``text`` into a WAV file (blocking)."""
    path = Path(path)
    _render(_engine(voice or Voice()), text, path)
    if not path.exists() or path.stat().st_size <= 44:
        raise SpeechError(f"{path}: the speech engine wrote no audio")
    return path


def can_sound() -> bool:
    """Whether speech can be heard here at all: a voice (espeak-ng's library on Linux) and a player. The
    window speaks unasked only then; asked (Speak, --speak), it says why it cannot."""
    if not sys.platform.startswith("linux"):
        return True  # Windows and macOS speak through their own voices and sound
    import ctypes.util

    voice = any(ctypes.util.find_library(n) for n in ("espeak-ng", "espeak"))
    return voice and ProcessPlayer.find() is not None and sound_output()


def sound_output() -> bool:
    """Whether there is somewhere for sound to go: a PulseAudio or PipeWire server, a sound card, or an
    ALSA configuration that names a default device (a null or file device in a container counts). With
    none, a first start said "speech failed: audio open error" in the status bar unasked."""
    run = os.environ.get("XDG_RUNTIME_DIR")
    if os.environ.get("PULSE_SERVER") or (run and any(Path(run, s).exists() for s in ("pulse/native", "pipewire-0"))):
        return True
    try:
        cards = Path("/proc/asound/cards").read_text(encoding="utf-8", errors="replace")
    except OSError:
        cards = ""
    if cards.strip() and "no soundcards" not in cards:
        return True
    return any(p.is_file() for p in (Path("/etc/asound.conf"), Path.home() / ".asoundrc"))


class ProcessPlayer:
    """Plays a WAV file with a player program; ``stop`` ends it at once, from any thread."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @staticmethod
    def find() -> ProcessPlayer | None:
        for cmd in PLAYERS:
            if shutil.which(cmd[0]):
                return ProcessPlayer(cmd)
        return None

    def play(self, path: Path, interrupted: threading.Event) -> None:
        """Raises SpeechError when the player fails (no sound device, no sound server)."""
        with self._lock:  # a stop() that came first wins: nothing starts after it
            if interrupted.is_set():
                return
            # The player's stderr is kept, not shown: ALSA prints a dozen lines when there is no
            # sound card; its last line says why, and that goes into one error.
            self._proc = subprocess.Popen([*self.command, str(path)], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                          errors="replace")
        _, err = self._proc.communicate()
        if self._proc.returncode != 0 and not interrupted.is_set():
            last = (err or "").strip().splitlines()[-1:] or [f"exit status {self._proc.returncode}"]
            raise SpeechError(f"{self.command[0]} could not play the speech ({last[0]}); "
                              "is there a sound device?")

    def stop(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.terminate()


class Speaker:
    """Non-blocking, prioritised, interruptible speech in a worker thread.

    ``player``: something with ``play(path, interrupted)`` (blocking; starts nothing once the
    event is set) and ``stop()`` (any thread) that sounds a WAV file; on Linux the first of aplay,
    paplay, pw-play by default. ``wait``: block up to 10 s until the engine has started, so that
    ``error`` is known at once (the command line); the window passes False and reads ``error``
    when it matters.
    """

    def __init__(self, voice: Voice | None = None, wait: bool = True, player=None) -> None:
        self.voice = voice or Voice()
        self._cond = threading.Condition()
        self._queue: deque[str] = deque()
        self._closed = False
        self._interrupt = threading.Event()
        self._busy = False
        self._player = player
        self.error: str | None = None
        self.ready = threading.Event()
        self.spoken: list[str] = []  # what was said through to the end, newest last (for the tests)
        self.on_error: Callable[[str], None] | None = None
        self._thread = threading.Thread(target=self._run, name="capdesk-speech", daemon=True)
        self._thread.start()
        if wait:
            self.ready.wait(10)

    # -- the caller's side -----------------------------------------------------------------
    def say(self, text: str, priority: Priority = Priority.NOW) -> None:
        if self.error:
            raise SpeechError(self.error)
        if not text:
            return
        with self._cond:
            if priority >= Priority.NOW:
                self._queue.clear()
                self._stop_current()
            self._queue.append(text)
            self._cond.notify()

    def cancel(self) -> None:
        """Stop what is being said and forget what waits."""
        with self._cond:
            self._queue.clear()
            self._stop_current()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once nothing is being said or waiting (False after ``timeout`` seconds)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._stop_current()
            self._cond.notify()
        self._thread.join(timeout=5)

    def _stop_current(self) -> None:
        if self._busy:
            self._interrupt.set()
            if self._player is not None:
                self._player.stop()

    # -- the speech thread -----------------------------------------------------------------
    def _run(self) -> None:
        try:
            engine = _engine(self.voice)
            if self._player is None and sys.platform.startswith("linux"):
                self._player = ProcessPlayer.find()
                if self._player is None:
                    raise SpeechError("no audio player found (aplay, paplay or pw-play); "
                                      "install alsa-utils to hear speech")
        except SpeechError as exc:
            self.error = str(exc)
            self.ready.set()
            if self.on_error:
                self.on_error(self.error)
            return
        self.ready.set()
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._queue or self._closed)
                if self._closed:
                    return
                text = self._queue.popleft()
                self._busy = True
                self._interrupt.clear()
            try:
                finished = self._speak(engine, text)
            except Exception as exc:  # a failed utterance must not end the speech thread
                finished = False
                if self.on_error:
                    self.on_error(f"speech failed: {str(exc).splitlines()[0]}")
            if finished:
                self.spoken.append(text)

    def _speak(self, engine, text: str) -> bool:
        """Say one text; False when it was interrupted."""
        if self._player is not None:
            fd, name = tempfile.mkstemp(prefix="capdesk-speech-", suffix=".wav")
            os.close(fd)
            path = Path(name)
            try:
                _render(engine, text, path)
                if self._interrupt.is_set():
                    return False
                self._player.play(path, self._interrupt)
            finally:
                path.unlink(missing_ok=True)
            return not self._interrupt.is_set()

        def check(**_) -> None:  # runs in this thread, inside runAndWait: the safe place to stop
            if self._interrupt.is_set():
                engine.stop()

        token = engine.connect("started-word", check)
        try:
            engine.say(text)
            engine.runAndWait()
        finally:
            engine.disconnect(token)
        return not self._interrupt.is_set()
