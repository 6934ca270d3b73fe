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
import os
import sys
from typing import TYPE_CHECKING

from capdesk.cli import screen as cli_screen
from capdesk.cli.common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, error, open_engine

if TYPE_CHECKING:
    from capdesk.session.screen_service import ScreenService

# The service itself (``capdesk.session.screen_service``: sockets, speech, the key grab) is imported when
# it starts, not whenever the parser of every command is built.


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
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
    p.set_defaults(run=cmd_service)


def cmd_service(ns: argparse.Namespace) -> int:
    """``ns.build_parser`` builds the ``capdesk`` command line's parser, which reads what the clients send."""
    from capdesk.screen.service import AlreadyRunning, Listener, ServiceError
    from capdesk.session.screen_service import DescriberCache, ScreenService

    if ns.status or ns.stop:
        return _ask_running(ns.stop)
    if ns.key and not _key_usable(ns):
        return EXIT_USAGE
    cache = DescriberCache()
    # Each request's describer said as the command alone says it (warnings, one-line errors).
    service = ScreenService(dict(os.environ), ns.build_parser, lambda opts: open_engine(opts, opener=cache.open),
                            cli_screen.run, ns.verbose)
    try:
        service.listener = Listener(service.env, service.handle)
    except AlreadyRunning as exc:
        error(f"{exc}; 'capdesk service --stop' stops it")
        return EXIT_SOME_FAILED
    except ServiceError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED
    return _serve(service, ns)


def _ask_running(stop: bool) -> int:
    """``--status`` or ``--stop``: the running service asked, and what it answers said."""
    from capdesk.screen import client

    reply = client.ask({"op": "stop" if stop else "ping"}, timeout=10)
    if reply is None:
        print("capdesk: no CapDesk service is running for you", file=sys.stderr)
        return EXIT_SOME_FAILED
    key = f", key {reply['key']}" if reply.get("key") else ""
    print(f"CapDesk service {'stopping' if stop else 'running'} (pid {reply.get('pid')}{key})")
    return EXIT_OK


def _key_usable(ns: argparse.Namespace) -> bool:
    """``--key`` in the Settings dialog's notation (Super+D is <Super>d there too); False once why not is said."""
    from capdesk.screen.keygrab import BadKey, parse_accelerator
    from capdesk.screen.shortcut import ShortcutError, normalize

    try:
        ns.key = normalize(ns.key)
        parse_accelerator(ns.key)
    except (ShortcutError, BadKey) as exc:
        error(str(exc))
        return False
    return True


def _serve(service: ScreenService, ns: argparse.Namespace) -> int:
    """Answer until stopped (SIGTERM, SIGINT, SIGHUP or ``--stop``); the key grabbed meanwhile."""
    service.stop_on_signals()
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
