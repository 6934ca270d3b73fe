"""``capdesk service``: CapDesk kept running in the background, so that ``capdesk screen`` (a key press)
is answered by a process that has the model and the text reader loaded, not by one that loads them.

``capdesk screen`` sends its command line to the service when one runs (see ``capdesk.screen.client``)
and prints what it answers; the output, the files saved and the exit status are those it would have
had working alone. With ``--speak`` the service hands the text to speech-dispatcher itself and goes on
saying it after the command has ended; the next request stops it. With ``--key`` (or the settings'
screen shortcut) the service also grabs that key on the X display and answers it as
``capdesk screen --focus --speak``, on any X11 desktop. The pictures stay in memory; nothing about
the requests is written anywhere unless ``--verbose`` says how long each took (never what was seen).
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

from capdesk.cli import screen as cli_screen
from capdesk.cli.common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, describe_options, error

if TYPE_CHECKING:
    from capdesk.screen.keygrab import KeyGrab
    from capdesk.screen.service import Listener

# The service's own modules (sockets, speech, the key grab) are imported when it starts, not whenever the
# parser of every command is built.

KEY_ARGV = ["screen", "--focus", "--speak"]  # what the grabbed key does
MAX_ENGINES = 2  # describers kept for options other than the defaults (each holds a model: ~100 MB)
SETTINGS_POLL_S = 1.0
TRIM_AFTER_S = 1.0  # once the answer is out and spoken to speech-dispatcher


def add_parser(sub) -> None:
    """Register the command with the main parser's subcommands."""
    p = sub.add_parser(
        "service", help="keep CapDesk loaded in the background so that capdesk screen answers at once",
        description="Run in the background (start it with your desktop session): 'capdesk screen' is then "
                    "answered by this process, with the model already loaded: about a third of a second on two "
                    "cores, where loading it takes a second or more. Only you "
                    "can reach it (a socket in your runtime folder). The pictures stay in memory and nothing "
                    "is logged. One runs per user; stop it with Ctrl-C or 'capdesk service --stop'.")
    p.add_argument("--key", metavar="KEY", default=None,
                   help="also grab this key on the X display, from any program, to describe the focused object "
                        "aloud ('capdesk screen --focus --speak'); written as GNOME writes shortcuts, e.g. "
                        "'<Super>d'; '' grabs none (default: the screen shortcut in CapDesk's settings, followed "
                        "when they change)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="say whether a service runs for you, and exit")
    what.add_argument("--stop", action="store_true", help="stop the service that runs for you, and exit")
    p.add_argument("--verbose", action="store_true",
                   help="say on stderr when each request was answered and how long it took (never what was "
                        "on screen or what was said)")


def cmd_service(ns: argparse.Namespace, parser: Callable[[], argparse.ArgumentParser]) -> int:
    """``parser`` builds the ``capdesk`` command line's parser, which reads what the clients send."""
    from capdesk.screen import client
    from capdesk.screen.keygrab import BadKey, parse_accelerator
    from capdesk.screen.service import AlreadyRunning, Listener, ServiceError

    if ns.status or ns.stop:
        reply = client.ask({"op": "stop" if ns.stop else "ping"}, timeout=10)
        if reply is None:
            print("capdesk: no CapDesk service is running for you", file=sys.stderr)
            return EXIT_SOME_FAILED
        key = f", key {reply['key']}" if reply.get("key") else ""
        print(f"CapDesk service {'stopping' if ns.stop else 'running'} (pid {reply.get('pid')}{key})")
        return EXIT_OK
    if ns.key:
        from capdesk.screen.shortcut import ShortcutError, normalize

        try:  # the notation and the refusals of the Settings dialog's key: Super+D is <Super>d there too
            ns.key = normalize(ns.key)
            parse_accelerator(ns.key)
        except (ShortcutError, BadKey) as exc:
            error(str(exc))
            return EXIT_USAGE
    service = ScreenService(dict(os.environ), parser, ns.verbose)
    try:
        service.listener = Listener(service.env, service.handle)
    except AlreadyRunning as exc:
        error(f"{exc}; 'capdesk service --stop' stops it")
        return EXIT_SOME_FAILED
    except ServiceError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED
    stop = service.listener.stop
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop())
    try:
        service.warm()
        why = service.follow_key(ns.key)
        if why and ns.key:  # asked for on this command line: not running without it
            error(why)
            return EXIT_SOME_FAILED
        if why:
            print(f"capdesk: warning: {why}", file=sys.stderr, flush=True)
        if ns.verbose:
            print(f"capdesk: service ready at {service.listener.path}", file=sys.stderr, flush=True)
        service.listener.serve()
    finally:
        service.close()
    return EXIT_OK


class ScreenService:
    """Answers the requests: ``capdesk screen`` command lines, the grabbed key, ping and stop."""

    def __init__(self, env: dict[str, str], parser: Callable[[], argparse.ArgumentParser],
                 verbose: bool = False) -> None:
        from capdesk.screen import speechd

        self.env, self.parser, self.verbose = env, parser, verbose
        self.home = os.getcwd()
        self.umask = _current_umask()  # the key's pictures are saved as the service's own would be
        self.listener: Listener | None = None
        self._lock = threading.Lock()  # one request at a time: a request changes the folder and stdout
        self._engines: OrderedDict[tuple, tuple[Any, list[str]]] = OrderedDict()
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
                    status = cli_screen.run(ns, env, self._engine, self)
            finally:
                os.umask(old_mask)
                with contextlib.suppress(OSError):
                    os.chdir(self.home)
        threading.Timer(TRIM_AFTER_S, _give_back_memory).start()
        if self.verbose:
            print(f"capdesk: screen request answered in {1000 * (time.monotonic() - started):.0f} ms "
                  f"(exit status {status})", file=sys.__stderr__, flush=True)
        return {"status": status, "output": output}

    def _engine(self, ns: argparse.Namespace):
        """The describer for these options, kept loaded; its warnings said each time, as ``open_engine`` does."""
        from capdesk.model.bundle import looks_like_path, search_dirs
        from capdesk.session.services import SetupError, open_describer

        model = os.path.abspath(ns.model) if ns.model and looks_like_path(ns.model) else ns.model
        installed = tuple((str(d), _mtime(d)) for d, _ in search_dirs())  # a model installed since is seen
        options = describe_options(ns)
        key = (model, ns.provider, ns.beam, dataclasses.astuple(options), installed)
        hit = self._engines.get(key)
        if hit is None:
            try:
                hit = open_describer(ns.model, ns.provider, ns.beam, options)
            except SetupError as exc:
                error(str(exc))
                return None
            self._engines[key] = hit
            while len(self._engines) > MAX_ENGINES:
                self._engines.popitem(last=False)
        self._engines.move_to_end(key)
        describer, warnings = hit
        for w in warnings:
            print(f"capdesk: warning: {w}", file=sys.stderr)
        return describer

    # -- speech (cli_screen.Speech) ----------------------------------------------------------------
    def stop(self, env: dict[str, str]) -> None:
        from capdesk.screen import speechd

        speechd.stop_previous(env)  # a `capdesk screen --speak` that ran without the service
        self._speech.stop()
        if self._speaker is not None:
            self._speaker.cancel()

    def say(self, text: str, env: dict[str, str]) -> str | None:
        from capdesk.screen import speechd

        timeout = cli_screen.SPEECH_WAIT_S + len(text) / 15
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
            describer = self._engine(ns)
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
