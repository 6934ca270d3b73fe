"""``capdesk caption``: describe pictures and print (or speak) each description."""

from __future__ import annotations

import argparse
import json
import sys

from capdesk.cli.common import EXIT_INTERRUPTED, EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, error


def cmd_caption(ns: argparse.Namespace) -> int:
    from capdesk.cli.common import open_engine, speaker_or_say
    from capdesk.model.engine import expand_paths
    from capdesk.model.providers import short_name

    engine = open_engine(ns)
    if engine is None:
        return EXIT_USAGE
    provider = short_name(engine.provider)
    spoken: list[str] = []
    speaker = None
    speech_failed: list[str] = []  # the first reason is said once; speech failing makes the exit status 1
    if ns.speak and not ns.wav:
        speaker, why = speaker_or_say("error: cannot speak")
        if why:
            speech_failed.append(why)
        else:
            speaker.on_error = speech_failed.append
    failed = 0
    listed = list(expand_paths(ns.paths, ns.recursive))
    errors = {p: e for p, e in listed if e}
    todo = [p for p, e in listed if not e]
    if not listed:
        error("no images found in the given paths")
        return EXIT_SOME_FAILED

    def emit(d) -> None:
        nonlocal failed
        failed += d.error is not None
        if ns.json:
            rec = d.to_json()
            rec["provider"] = provider
            print(json.dumps(rec, ensure_ascii=False), flush=True)
        elif d.error:
            print(f"{d.path}\tERROR: {d.error}", flush=True)
            print(f"capdesk: {d.path}: {d.error}", file=sys.stderr)
        else:
            print(f"{d.path}\t{d.description}", flush=True)
            if d.review:  # stdout keeps one line per picture; why it needs a look goes beside it
                print(f"capdesk: {d.path}: needs review: {d.reason}", file=sys.stderr, flush=True)
        if d.ok and (ns.wav or speaker):
            spoken.append(d.description)
            if speaker and not speech_failed:
                from capdesk.speech import Priority

                speaker.say(d.description, Priority.NORMAL)  # one after another, none cut short

    from capdesk.describe.describer import Described

    for p, e in errors.items():
        emit(Described(p, model=engine.name, error=e))
    try:
        for d in engine.describe_paths(todo, batch_size=max(1, ns.batch_size)):
            emit(d)
    except KeyboardInterrupt:
        print("capdesk: interrupted", file=sys.stderr)
        if speaker:
            speaker.close()
        return EXIT_INTERRUPTED
    if speaker:
        # Let it say everything (espeak-ng speaks about 15 characters a second), then stop.
        speaker.wait_idle(30 + sum(len(t) for t in spoken) / 5)
        speaker.close()
        if speech_failed:
            error(speech_failed[0])
    if ns.wav and spoken:
        from capdesk.speech import SpeechError, save_wav

        try:
            save_wav(" ".join(spoken), ns.wav)
        except SpeechError as exc:
            error(str(exc))
            return EXIT_SOME_FAILED
    return EXIT_SOME_FAILED if failed or speech_failed else EXIT_OK
