"""``capdesk screen``: describe what is on screen (the picture with the keyboard focus, the active window,
a region, the whole screen) and print or speak it.

Made to be bound to a key: with ``--speak`` every outcome, failures included, is said, since the user
who pressed the key may have no terminal to read. The captured pixels stay in this process's memory
unless ``--save`` is given; nothing is logged.

``run`` is the command itself, over a describer and a voice given to it: this process's own
(``cmd_screen``, speaking through ``capdesk.session.screen_speech``), or those that ``capdesk service``
keeps loaded, when it answers for the command (``capdesk.session.screen_service``; the pixels then stay
in the service's memory).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdesk.cli.common import (
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    describe_args,
    error,
    model_args,
    open_engine,
)

if TYPE_CHECKING:
    from capdesk.session.screen_speech import Speech

SCREEN_TEXT_UPSCALE = 1.0  # the text finder reads the captured pixels as they are, not enlarged


def region_type(value: str):
    from capdesk.screen.capture import parse_region

    try:
        return parse_region(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
    p = sub.add_parser(
        "screen", help="describe what is on screen: the focused picture, the active window, a region",
        description="Capture part of the screen (X11, or Wayland through the desktop portal's screenshot, whose file "
                    "is deleted as soon as it is read) and describe it: a region or "
                    "the focused picture as any picture is described, a window or the whole screen as a "
                    "screenshot of its program; every word on it is read (--ocr always by default). The pixels stay "
                    "in memory unless --save is given, and nothing is logged. Bind 'capdesk screen --focus "
                    "--speak' to a key (see the README). Where 'capdesk service' runs, it answers, with the model "
                    "already loaded (within half a second).")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--focus", action="store_true",
                      help="what the screen reader is on, found through the accessibility bus (AT-SPI): in a web "
                           "page the picture at its browse-mode caret, else the object with the keyboard focus; "
                           "the picture inside it when it is a link, button or cell holding one, scrolled into "
                           "view to be taken whole; a text link is said by its name. Said first: which object")
    what.add_argument("--window", action="store_true",
                      help="the active window (X11 only: a Wayland desktop tells no program where it is), said "
                           "as a screenshot of its program (a browser with the page it shows), each picture "
                           "in it described on its own, then every word in it, the page's first")
    what.add_argument("--region", type=region_type, metavar="X,Y,W,H", help="a rectangle in screen pixels")
    what.add_argument("--full", action="store_true", help="the whole screen, said as a screenshot as --window is")
    p.add_argument("--json", action="store_true",
                   help="one JSON object: the caption fields ('text': every word read), 'captured' (what: role, "
                        "name, rectangle), and for --window and --full 'screenshot' (the window, its page, "
                        "each picture's description)")
    _speech_args(p)
    p.add_argument("--save", metavar="DIR",
                   help="also write the captured picture (PNG) into DIR, with its alt-text sidecars (txt, xmp)")
    model_args(p)
    describe_args(p)
    # The words on screen are often all there is to say; they are drawn to be read at 1:1, so the text
    # finder looks at the captured pixels as they are (bench/bench_text_reading.py: more words read, less time).
    # Screen text is drawn upright: the reader's angle classifier only ever turned lines of it upside down.
    p.set_defaults(ocr="always", text_upscale=SCREEN_TEXT_UPSCALE, text_upright=True, run=cmd_screen)


def _speech_args(p: argparse.ArgumentParser) -> None:
    from capdesk.screen.wholetext import LONG_WORDS, START_WORDS

    p.add_argument("--speak", action="store_true",
                   help="say the description through speech-dispatcher (the screen reader's voice), else in "
                        "CapDesk's own voice; pressing the key again stops it. A text of more than "
                        f"{LONG_WORDS} words is said by its length and first {START_WORDS} words (printed whole)")
    p.add_argument("--all-text", action="store_true",
                   help="with --speak, say every word read, however long, instead of the summary of long text")


def cmd_screen(ns: argparse.Namespace) -> int:
    from capdesk.session.screen_speech import SpeakHere

    return run(ns, dict(os.environ), open_engine, SpeakHere())


def run(ns: argparse.Namespace, env: dict[str, str], engine: Callable[[argparse.Namespace], Any],
        speech: Speech) -> int:
    """``capdesk screen`` with these options, in the session ``env`` (its display, accessibility bus and
    speech), the describer from ``engine`` (None once it said why it cannot open one); the exit status."""
    if ns.speak:
        speech.stop(env)  # at once: the key was pressed again, the old description is done with
    status, text = _describe(ns, env, engine)
    if ns.speak and text:
        why = speech.say(text, env)
        if why:
            error(why)
            status = status or EXIT_SOME_FAILED
    return status


def _describe(ns: argparse.Namespace, env: dict[str, str], engine: Callable[[argparse.Namespace], Any]
              ) -> tuple[int, str]:
    """Capture, describe, print; the exit status and what to say."""
    cap = _captured(ns, env)
    if isinstance(cap, tuple):
        return cap
    if cap.image is None:  # said by its name (a text link): nothing to capture or describe
        print(json.dumps(cap.named_json(_what(ns)), ensure_ascii=False) if ns.json else cap.said(""), flush=True)
        return EXIT_OK, cap.said("")
    describer = engine(ns)
    if describer is None:
        return EXIT_USAGE, "CapDesk could not open its model."
    saved = _save_png(cap.image, Path(ns.save)) if ns.save else None
    if isinstance(saved, str):
        error(saved)
        return EXIT_SOME_FAILED, saved
    label = str(saved) if saved else f"screen:{_what(ns)}"
    from capdesk.screen import screenshot

    try:
        read = screenshot.describe(describer, cap.image, _what(ns), label, cap.rect, env, cap.title or cap.name,
                                   cap.program)
    except Exception as exc:  # the one picture failing is said, never a traceback
        error(f"model failed ({str(exc).splitlines()[0]})")
        return EXIT_SOME_FAILED, "CapDesk could not describe it."
    sidecars: list[str] = []
    status = EXIT_OK
    if saved:
        sidecars, problem = _write_sidecars(read.described)
        if problem:
            error(problem)
            status = EXIT_SOME_FAILED
    d = read.described
    printed = cap.said(d.description or "") if cap.target else d.description
    _print(ns, read, cap, saved, sidecars, printed)
    return status, read.spoken(printed, ns.all_text) or "CapDesk has nothing to say about this picture."


def _captured(ns: argparse.Namespace, env: dict[str, str]):
    """The capture, or (the exit status, what to say) where there is none."""
    from capdesk.screen.capture import CaptureError, NothingToTake, refusal

    why = refusal(env)
    if why:
        error(why)
        return EXIT_SOME_FAILED, f"CapDesk cannot see the screen: {why}"
    try:
        return _capture(ns, env)
    except NothingToTake as exc:  # an answer, not a failure: where the reader is, there is no picture
        print(json.dumps({"captured": {"what": _what(ns)}, "nothing_here": str(exc)}) if ns.json else f"{exc}.",
              flush=True)
        return EXIT_OK, f"{exc}."
    except CaptureError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED, f"CapDesk could not capture it: {exc}"


def _print(ns: argparse.Namespace, read, cap, saved: Path | None, sidecars: list[str], printed: str) -> None:
    """The description, every word read in it, on stdout (with what was captured, as JSON); why it needs
    review on stderr."""
    d = read.described
    if ns.json:
        rec = {**d.to_json(), **read.json_fields()}
        rec["captured"] = {"what": _what(ns), "role": cap.role, "name": cap.name, "rect": cap.rect.to_json(),
                           "holder": cap.holder, "saved": str(saved) if saved else None, "sidecars": sidecars}
        rec["target"] = cap.target_json()  # with --focus: what the screen reader is on, as it was taken
        print(json.dumps(rec, ensure_ascii=False), flush=True)
    else:
        print(printed, flush=True)
        if d.review:
            print(f"capdesk: needs review: {d.reason}", file=sys.stderr, flush=True)


def _what(ns: argparse.Namespace) -> str:
    return "focus" if ns.focus else "window" if ns.window else "region" if ns.region else "full"


def _capture(ns: argparse.Namespace, env: dict[str, str]):
    """From the X display, or under Wayland from the desktop portal's screenshot (``capture.take``)."""
    from capdesk.screen.capture import take

    return take(_what(ns), ns.region, env)


def _save_png(image, folder: Path) -> Path | str:
    """The new PNG written into ``folder`` (never over another file), or why it could not be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            path = folder / (f"screen-{stamp}.png" if n == 1 else f"screen-{stamp}-{n}.png")
            try:
                with open(path, "xb") as f:
                    image.save(f, format="PNG")
                return path
            except FileExistsError:
                continue
    except OSError as exc:
        return f"{folder}: cannot save the picture ({exc.strerror or exc})"
    return f"{folder}: too many pictures saved this second"


def _write_sidecars(d) -> tuple[list[str], str | None]:
    from capdesk.cli.common import open_writer
    from capdesk.folders.batch import write_described
    from capdesk.sidecars.writer import SidecarOptions

    writer = open_writer(SidecarOptions())
    if writer is None:
        return [], "the sidecars were not written"
    row = write_described(d, writer)
    return list(row.sidecars), row.error
