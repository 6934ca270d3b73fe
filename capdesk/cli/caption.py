"""``capdesk caption``: describe pictures and print (or speak) each description."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from capdesk.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_USAGE,
    beam_type,
    describe_args,
    error,
    shown,
)

if TYPE_CHECKING:
    from capdesk.describe.describer import Described
    from capdesk.speech import Speaker


def register(sub) -> None:
    """Add the command to the main parser's subcommands."""
    p = sub.add_parser("caption", help="caption images and print the captions",
                       description="Caption image files (folders are expanded to their images).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--beam", type=beam_type, default=None, help="beam width (1 = greedy; default: the model's)")
    p.add_argument("--model", default=None, help="installed model name, or a bundle folder or zip")
    p.add_argument("--provider", default=None,
                   help="ONNX Runtime execution provider (cpu, cuda, directml, coreml; default: best available)")
    p.add_argument("--recursive", "-r", action="store_true", help="look into sub-folders too")
    p.add_argument("--batch-size", type=int, default=8, help="images per encoder batch")
    p.add_argument("--speak", action="store_true", help="speak each caption aloud")
    p.add_argument("--wav", metavar="FILE", help="write the spoken captions to this WAV file instead")
    describe_args(p)
    p.set_defaults(run=cmd_caption)


def cmd_caption(ns: argparse.Namespace) -> int:
    from capdesk.cli.common import open_engine
    from capdesk.describe.describer import Described
    from capdesk.folders.reading import describe_paths, expand_paths

    engine = open_engine(ns)
    if engine is None:
        return EXIT_USAGE
    out = _Captions(ns, engine.provider)
    listed = list(expand_paths(ns.paths, ns.recursive))
    out.several = len(listed) > 1
    errors = {p: e for p, e in listed if e}
    todo = [p for p, e in listed if not e]
    if not listed:
        error("no images found in the given paths")
        return EXIT_SOME_FAILED
    for p, e in errors.items():
        out.emit(Described(p, model=engine.name, error=e))
    try:
        for d in describe_paths(engine, todo, batch_size=max(1, ns.batch_size)):
            out.emit(d)
    except KeyboardInterrupt:
        print("capdesk: interrupted", file=sys.stderr)
        if out.speaker:
            out.speaker.close()
        return EXIT_INTERRUPTED
    return out.finish()


class _Captions:
    """Each description as it comes: printed (a line, or JSON), spoken or kept for the WAV file."""

    def __init__(self, ns: argparse.Namespace, provider: str) -> None:
        from capdesk.cli.common import speaker_or_say
        from capdesk.model.providers import short_name

        self.json, self.wav, self.provider = ns.json, ns.wav, short_name(provider)
        self.failed = 0
        self.several = False  # more than one picture: each spoken description starts with its file name
        self.spoken: list[str] = []
        self.speaker: Speaker | None = None
        self.speech_failed: list[str] = []  # the first reason is said once; speech failing makes the exit status 1
        if ns.speak and not ns.wav:
            self.speaker, why = speaker_or_say("error: cannot speak")
            if why:
                self.speech_failed.append(why)
            else:
                self.speaker.on_error = self.speech_failed.append

    def emit(self, d: Described) -> None:
        self.failed += d.error is not None
        if self.json:
            rec = d.to_json()
            rec["provider"] = self.provider
            print(json.dumps(rec, ensure_ascii=False), flush=True)
        elif d.error:
            print(f"{shown(d.path)}\tERROR: {shown(d.error)}", flush=True)
            print(f"capdesk: {shown(d.path)}: {shown(d.error)}", file=sys.stderr)
        else:
            print(f"{shown(d.path)}\t{shown(d.description)}", flush=True)
            if d.review:  # stdout keeps one line per picture; why it needs a look goes beside it
                print(f"capdesk: {shown(d.path)}: needs review: {shown(d.reason)}", file=sys.stderr, flush=True)
        if d.ok and (self.wav or self.speaker):
            from pathlib import Path

            from capdesk.session.messages import for_the_ear

            said = for_the_ear(Path(d.path).name, d.description, d.reason, bool(d.review), self.several)
            self.spoken.append(said)
            if self.speaker and not self.speech_failed:
                from capdesk.speech import Priority

                self.speaker.say(said, Priority.NORMAL)  # one after another, none cut short

    def finish(self) -> int:
        """Let the voice say everything, write the WAV file; the exit status."""
        if self.speaker:
            # Let it say everything (espeak-ng speaks about 15 characters a second), then stop.
            self.speaker.wait_idle(30 + sum(len(t) for t in self.spoken) / 5)
            self.speaker.close()
            if self.speech_failed:
                error(self.speech_failed[0])
        if self.wav and self.spoken:
            from capdesk.speech import SpeechError, save_wav

            try:
                save_wav(" ".join(self.spoken), self.wav)
            except SpeechError as exc:
                error(str(exc))
                return EXIT_SOME_FAILED
        return EXIT_SOME_FAILED if self.failed or self.speech_failed else EXIT_OK
