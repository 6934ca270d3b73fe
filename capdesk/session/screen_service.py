"""``capdesk service``: CapDesk kept running in the background, so that ``capdesk screen`` (a key press)
is answered by a process that has the model and the text reader loaded, not by one that loads them.

``ScreenService`` answers each request as the command would have answered alone (``answer``: the
command itself, over the describers kept here and the service's own speech), grabs the key, follows
the settings' shortcut and gives the memory a request freed back. ``DescriberCache`` keeps the
describers loaded. The command line around it (its options, its signals) is ``capdesk.cli.service``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import queue
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from capdesk.screen import client
from capdesk.session.screen_speech import SPEECH_WAIT_S, Speech
from capdesk.session.services import open_describer

if TYPE_CHECKING:
    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.screen.keygrab import KeyGrab
    from capdesk.screen.service import Listener

KEY_ARGV = ["screen", "--focus", "--speak"]  # what the grabbed key does
MAX_ENGINES = 2  # describers kept for options other than the defaults (each holds a model: ~100 MB)
SETTINGS_POLL_S = 1.0
TRIM_AFTER_S = 1.0  # once the answer is out and spoken to speech-dispatcher

# The describer for a request's options (None once the command said why it cannot open one).
Engine = Callable[[argparse.Namespace], Any]
# ``capdesk screen`` itself: (its options, the client's environment, the describer, the speech) -> exit status.
Answer = Callable[[argparse.Namespace, dict[str, str], Engine, Speech], int]


class DescriberCache:
    """The describers of the last few options asked for, kept loaded; ``open`` is ``open_describer``."""

    def __init__(self, size: int = MAX_ENGINES) -> None:
        self.size = size
        self._engines: OrderedDict[tuple, tuple[Describer, list[str]]] = OrderedDict()

    def open(self, model: str | None, provider: str | None, beam: int | None,
             options: DescribeOptions) -> tuple[Describer, list[str]]:
        """The describer and its warnings, loaded once (``SetupError`` when it cannot be opened)."""
        from capdesk.model.bundle import looks_like_path, search_dirs

        where = os.path.abspath(model) if model and looks_like_path(model) else model
        installed = tuple((str(d), _mtime(d)) for d, _ in search_dirs())  # a model installed since is seen
        key = (where, provider, beam, dataclasses.astuple(options), installed)
        hit = self._engines.get(key)
        if hit is None:
            hit = open_describer(model, provider, beam, options)
            self._engines[key] = hit
            while len(self._engines) > self.size:
                self._engines.popitem(last=False)
        self._engines.move_to_end(key)
        return hit


class ScreenService:
    """Answers the requests: ``capdesk screen`` command lines, the grabbed key, ping and stop."""

    def __init__(self, env: dict[str, str], parser: Callable[[], argparse.ArgumentParser], engine: Engine,
                 answer: Answer, verbose: bool = False) -> None:
        from capdesk.screen import speechd

        self.env, self.parser, self.engine, self.answer, self.verbose = env, parser, engine, answer, verbose
        self.home = os.getcwd()
        self.umask = _current_umask()  # the key's pictures are saved as the service's own would be
        self.listener: Listener | None = None
        self._lock = threading.Lock()  # one request at a time: a request changes the folder and stdout
        self._speech = speechd.Background()
        self._speaker = None  # CapDesk's own voice, opened where speech-dispatcher is missing
        self._grab: KeyGrab | None = None
        self._presses: queue.Queue = queue.Queue(maxsize=1)
        self._closed = threading.Event()

    # -- requests ------------------------------------------------------------------------------
    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "ping":
            return {"pid": os.getpid(), "key": self._grab.key if self._grab else ""}
        if op == "stop":
            if self.listener is not None:
                self.listener.stop()
            return {"pid": os.getpid(), "key": ""}
        if op == "screen":
            argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(env, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
                    and isinstance(cwd, str)):
                return {"decline": "malformed request"}
            from capdesk import __version__

            if request.get("version") != __version__:  # a service left running across an upgrade
                return {"decline": f"the service runs CapDesk {__version__}"}
            if _names_paths(argv) and not client.acts_as(request.get("peer")):
                # Its groups differ from the service's: a folder the client may not enter could be
                # written or read for it. It does this one itself, with its own access.
                return {"decline": "the client's access differs from the service's"}
            umask = request.get("umask")
            return self.screen(argv, env, cwd, umask if isinstance(umask, int) else 0o022)
        return {"decline": f"unknown request {op!r}"}

    def screen(self, argv: list[str], env: dict[str, str], cwd: str, umask: int) -> dict:
        """``capdesk screen`` as this command line would have run alone: its output and exit status, or
        ``decline`` (the client then runs it itself) for what only the client can do the same."""
        if argv[:1] != ["screen"] or "-h" in argv or "--help" in argv:
            return {"decline": "not for the service"}  # help is laid out for the client's terminal
        if env.get("CAPDESK_MODELS", "") != os.environ.get("CAPDESK_MODELS", ""):
            return {"decline": "another model folder"}
        started = time.monotonic()
        output: list[list] = []  # [stream (1, 2), text] in the order written: a terminal shows them so
        out, err = _Chunks(1, output), _Chunks(2, output)
        with self._lock:
            try:
                os.chdir(cwd)  # relative --save and --model mean what they mean to the client
            except OSError:
                return {"decline": "the client's folder cannot be entered"}
            old_mask = os.umask(umask & 0o777)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    try:
                        ns = self.parser().parse_args(argv)
                    except SystemExit:
                        return {"decline": "usage"}  # said by the client, laid out for its terminal
                    status = self.answer(ns, env, self.engine, self)
            finally:
                os.umask(old_mask)
                with contextlib.suppress(OSError):
                    os.chdir(self.home)
        threading.Timer(TRIM_AFTER_S, _give_back_memory).start()
        if self.verbose:
            print(f"capdesk: screen request answered in {1000 * (time.monotonic() - started):.0f} ms "
                  f"(exit status {status})", file=sys.__stderr__, flush=True)
        return {"status": status, "output": output}

    # -- speech (screen_speech.Speech) ---------------------------------------------------------------
    def stop(self, env: dict[str, str]) -> None:
        from capdesk.screen import speechd

        speechd.stop_previous(env)  # a `capdesk screen --speak` that ran without the service
        self._speech.stop()
        if self._speaker is not None:
            self._speaker.cancel()

    def say(self, text: str, env: dict[str, str]) -> str | None:
        from capdesk.screen import speechd

        timeout = SPEECH_WAIT_S + len(text) / 15
        try:
            conn = speechd.Dispatcher(env)
        except (speechd.SpeechdUnavailable, OSError) as exc:
            print(f"capdesk: {exc}; speaking in CapDesk's own voice", file=sys.stderr, flush=True)
            return self._own_voice(text)
        try:
            self._speech.speak(conn, text, timeout)
        except (speechd.SpeechdUnavailable, OSError) as exc:
            return f"speech-dispatcher failed ({exc})"
        return None

    def _own_voice(self, text: str) -> str | None:
        from capdesk.session.services import open_speaker
        from capdesk.speech import Priority, SpeechError

        if self._speaker is None:
            self._speaker, why = open_speaker()
            if self._speaker is None:
                return f"cannot speak: {why}"
        try:
            self._speaker.say(text, Priority.NORMAL)
        except SpeechError as exc:
            self._speaker.close()
            self._speaker = None
            return f"cannot speak: {exc}"
        return None

    # -- start, key, end -----------------------------------------------------------------------
    def warm(self) -> None:
        """Load what the first key press would: the default describer, the text reader, the capture."""
        from PIL import Image, ImageDraw

        from capdesk.screen import atspi, capture  # noqa: F401 - imported now, not at the first press

        ns = self.parser().parse_args(["screen", "--full"])
        with contextlib.redirect_stderr(io.StringIO()):
            describer = self.engine(ns)
        if describer is not None:
            # Lines of words as wide as a web page's column (the text reader's three models) and a picture of
            # another size (the caption's own path): each runs much slower the first time it meets a larger
            # shape (a page of text: 0.7-1.1 s at the first press after a one-line warm-up, 0.55 s after).
            card = Image.new("RGB", (640, 200), "white")
            draw = ImageDraw.Draw(card)
            for i in range(5):
                draw.text((12, 12 + 36 * i), "CapDesk is ready to describe what is on the screen, " * 2,
                          fill="black", font_size=15)
            shades = Image.linear_gradient("L").resize((640, 400)).convert("RGB")
            for picture in (card, shades):
                with contextlib.suppress(Exception):
                    describer.describe_images([picture], ["warm-up"])
            _give_back_memory()
        if self.env.get("DISPLAY") and capture.refusal(self.env) is None:
            with contextlib.suppress(Exception):
                capture.grab(atspi.Rect(0, 0, 1, 1), self.env["DISPLAY"])

    def follow_key(self, key: str | None) -> str | None:
        """Grab ``key`` (None: the settings' screen shortcut, followed as they change); why it cannot be."""
        wanted = key if key is not None else _settings_key()[1]
        if key is None:
            threading.Thread(target=self._watch_settings, daemon=True, name="capdesk-settings").start()
        threading.Thread(target=self._answer_presses, daemon=True, name="capdesk-key").start()
        return self._set_key(wanted)

    def _set_key(self, key: str) -> str | None:
        if not key.strip():
            return self._grab.set_key("") if self._grab else None
        if self._grab is None:
            from capdesk.screen.keygrab import BadKey, KeyGrab

            display = self.env.get("DISPLAY")
            if not display:
                return f"no X display (DISPLAY is not set), so {key} is not grabbed"
            try:
                self._grab = KeyGrab(display, self._pressed)
            except BadKey as exc:
                return str(exc)
        why = self._grab.set_key(key)
        if why is None and self.env.get("WAYLAND_DISPLAY"):
            return (f"{key} is grabbed on the X server of this Wayland session, which sees it only while an X11 "
                    "program has the focus: bind 'capdesk screen --focus --speak' in the desktop's settings")
        return why

    def _pressed(self) -> None:
        with contextlib.suppress(queue.Full):  # a press while one waits adds nothing (a held key repeats)
            self._presses.put_nowait(None)

    def _answer_presses(self) -> None:
        while not self._closed.is_set():
            try:
                self._presses.get(timeout=1.0)
            except queue.Empty:
                continue
            with contextlib.suppress(Exception):
                self.screen(KEY_ARGV, self.env, self.home, self.umask)

    def _watch_settings(self) -> None:
        stamp, key = _settings_key()
        while not self._closed.wait(SETTINGS_POLL_S):
            now = _settings_stamp()
            if now == stamp:
                continue
            stamp, new = _settings_key()
            if new != key:
                key = new
                why = self._set_key(key)
                if why:  # to the service's own stderr, never into a request's output being gathered
                    print(f"capdesk: warning: {why}", file=sys.__stderr__, flush=True)

    def stop_on_signals(self) -> None:
        """SIGTERM (the session manager), SIGINT (Ctrl-C) and SIGHUP stop the listener: it ends its loop."""
        stop = self.listener.stop
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: stop())

    def close(self) -> None:
        self._closed.set()
        if self._grab is not None:
            self._grab.close()
        self._speech.stop()
        if self._speaker is not None:
            self._speaker.close()
        if self.listener is not None:
            self.listener.close()


class _Chunks(io.TextIOBase):
    """A stream whose text is kept, with which stream it went to, in one list shared by stdout and stderr."""

    def __init__(self, stream: int, chunks: list[list]) -> None:
        self.stream, self.chunks = stream, chunks

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            if self.chunks and self.chunks[-1][0] == self.stream:
                self.chunks[-1][1] += text
            else:
                self.chunks.append([self.stream, text])
        return len(text)


def _names_paths(argv: list[str]) -> bool:
    """Whether a ``capdesk screen`` command line names a file or folder the service would use for it."""
    return any(a in ("--save", "--model") or a.startswith(("--save=", "--model=")) for a in argv)


def _settings_stamp() -> tuple[int, int] | None:
    from capdesk.session.settings import Settings

    try:
        st = os.stat(Settings.path())
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _settings_key() -> tuple[tuple[int, int] | None, str]:
    """(the settings file's stamp, the screen shortcut it holds: "" for none)."""
    from capdesk.session.settings import Settings

    stamp = _settings_stamp()
    settings, _ = Settings.load()
    key = getattr(settings, "screen_shortcut", "")
    return stamp, key if isinstance(key, str) else ""


def _give_back_memory() -> None:
    """Hand the memory a request freed back to the system: idle, the service keeps a resident set of some
    270 MB instead of 400-600 MB (the next picture does not take longer for it; glibc only)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _mtime(path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
