"""``capdesk models``: list, verify, import and remove model bundles."""

from __future__ import annotations

import argparse
import json
import sys

from capdesk.cli.common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, error


def cmd_models(ns: argparse.Namespace) -> int:
    from capdesk.model.bundle import BundleError, discover, resolve

    if ns.models_command == "import":
        from capdesk.model.install import install

        try:
            done = install(ns.path)
        except BundleError as exc:
            error(str(exc))
            return EXIT_SOME_FAILED
        print(done.message())
        return EXIT_OK
    if ns.models_command == "remove":
        return _remove(ns.name, ns.yes)
    if ns.models_command in (None, "list"):
        bundles, problems = discover()
        from capdesk.model.domain import automatic

        if getattr(ns, "json", False):
            print(json.dumps({"models": [{**b.summary(), "automatic": automatic(b.manifest)} for b in bundles],
                              "problems": problems}, indent=2))
        else:
            if not bundles:
                print("no model bundles installed")
            from capdesk.session.services import metrics_line

            for b in bundles:
                perf = metrics_line(b.manifest)
                only_named = "" if automatic(b.manifest) else "  (used only when named with --model)"
                print(f"{b.name}\t{b.source}\t{b.path}" + (f"  {perf}" if perf else "") + only_named)
            for p in problems:
                print(f"problem: {p}", file=sys.stderr)
        return EXIT_SOME_FAILED if problems else EXIT_OK
    # verify
    if ns.name:
        try:
            targets = [resolve(ns.name)]
        except BundleError as exc:
            error(str(exc))
            return EXIT_USAGE
        problems: list[str] = []
    else:
        targets, problems = discover()
    bad = bool(problems)
    for p in problems:
        print(f"FAILED\t{p}")
    for b in targets:
        errs = b.verify()
        if errs:
            bad = True
            for e in errs:
                print(f"FAILED\t{b.name}\t{e}")
        else:
            print(f"OK\t{b.name}\t{b.path}\t{len(b.manifest['files'])} files verified")
    return EXIT_SOME_FAILED if bad else EXIT_OK


def _remove(name: str, yes: bool) -> int:
    from capdesk.model.bundle import BundleError
    from capdesk.model.install import removable, remove

    try:
        where = removable(name)
    except BundleError as exc:
        error(str(exc))
        return EXIT_USAGE
    if not yes:
        if not sys.stdin.isatty():
            error(f"removing model {name!r} ({where}) asks first; give --yes to remove it without asking")
            return EXIT_USAGE
        try:
            answer = input(f"Remove model {name!r} ({where})? Alt text it already wrote is kept. [y/N] ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
            print()
        if answer.strip().lower() not in ("y", "yes"):
            print(f"model {name!r} kept")
            return EXIT_OK
    try:
        done = remove(name)
    except BundleError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED
    print(done.message())
    from capdesk.session.settings import Settings

    settings, _ = Settings.load()
    if settings.model == name:
        # The window would otherwise start on a model that is gone.
        settings.model = ""
        settings.save()
        print(f"the settings used {name!r}: CapDesk now picks the model for each picture (Automatic)")
    return EXIT_OK
