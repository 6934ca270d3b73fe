"""``capdesk models``: list, verify, import and remove model bundles."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from capdesk.cli.common import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, error, shown


def register(sub) -> None:
    """Add the command and its actions to the main parser's subcommands."""
    p = sub.add_parser("models", help="list, verify, import or remove model bundles",
                       description="List installed model bundles, verify their files, import one or remove one.")
    p.set_defaults(run=cmd_list)  # 'capdesk models' alone lists them
    msub = p.add_subparsers(dest="models_command", metavar="ACTION", parser_class=type(p))
    ml = msub.add_parser("list", help="installed bundles and where they are",
                         description="List the installed model bundles: name, where it was found (user, shipped, "
                                     "CAPDESK_MODELS) and its folder.")
    ml.add_argument("--json", action="store_true",
                    help="one JSON object: 'models' (each bundle's name, source, path, domain, metrics ...) "
                         "and 'problems' (bundles that cannot be used, one line each)")
    mv = msub.add_parser("verify", help="check every file of a bundle against its sha256")
    mv.add_argument("name", nargs="?", help="model name or folder (default: all installed)")
    mv.set_defaults(run=cmd_verify)
    mi = msub.add_parser("import", help="check a bundle folder or zip and install it in your model folder",
                         description="Check a model bundle (folder or .zip) against its manifest and install it "
                                     "in the user model folder; a bundle that fails any check installs nothing.")
    mi.add_argument("path", metavar="PATH", help="bundle folder or .zip")
    mi.set_defaults(run=cmd_import)
    mr = msub.add_parser("remove", help="take a model you installed or taught out of your model folder",
                         description="Remove a model from your model folder (one you imported or taught). Shipped "
                                     "models cannot be removed. Alt text already written next to pictures is kept; "
                                     "if the settings use this model, they fall back to Automatic.")
    mr.add_argument("name", metavar="NAME", help="the model's name (capdesk models list)")
    mr.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts; without a terminal, "
                                                           "removing needs it)")
    mr.set_defaults(run=cmd_remove)


def cmd_list(ns: argparse.Namespace) -> int:
    from capdesk.model.bundle import discover
    from capdesk.model.domain import automatic

    bundles, problems = discover()
    if getattr(ns, "json", False):
        print(json.dumps({"models": [{**b.summary(), "automatic": automatic(b.manifest)} for b in bundles],
                          "problems": problems}, indent=2))
        return EXIT_SOME_FAILED if problems else EXIT_OK
    if not bundles:
        print("no model bundles installed")
    for b in bundles:
        perf = figures_line(b.manifest)
        only_named = "" if automatic(b.manifest) else "  (used only when named with --model)"
        perf = f"  {shown(perf)}" if perf else ""
        print(f"{shown(b.name)}\t{b.source}\t{shown(b.path)}{perf}{only_named}")
    for p in problems:
        print(f"problem: {shown(p)}", file=sys.stderr)
    return EXIT_SOME_FAILED if problems else EXIT_OK


def figures_line(manifest: dict) -> str:
    """The test figures the README gives (``session.services.metrics_line``, which the window shows too)."""
    from capdesk.session.services import metrics_line

    return metrics_line(manifest)


def cmd_verify(ns: argparse.Namespace) -> int:
    from capdesk.model.bundle import BundleError, discover, resolve

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
        print(f"FAILED\t{shown(p)}")
    for b in targets:
        errs = b.verify()
        if errs:
            bad = True
            for e in errs:
                print(f"FAILED\t{shown(b.name)}\t{shown(e)}")
        else:
            print(f"OK\t{shown(b.name)}\t{shown(b.path)}\t{len(b.manifest['files'])} files verified")
    if ns.name is None:  # everything installed: the object detector every model uses too
        bad = _verify_detector() or bad
    return EXIT_SOME_FAILED if bad else EXIT_OK


def _verify_detector() -> bool:
    """The detector's files against their sha256, said as the models' are; True when something is wrong."""
    from capdesk.describe.detector import DetectorError, find_folder, verify

    errs = verify()
    for e in errs:
        print(f"FAILED\tdetector\t{shown(e)}")
    if not errs:
        with contextlib.suppress(DetectorError):
            print(f"OK\tdetector\t{shown(find_folder())}")
    return bool(errs)


def cmd_import(ns: argparse.Namespace) -> int:
    from capdesk.model.bundle import BundleError
    from capdesk.session.model_import import import_model

    try:
        done = import_model(ns.path)
    except BundleError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED
    print(done.message())
    return EXIT_OK


def cmd_remove(ns: argparse.Namespace) -> int:
    from capdesk.model.bundle import BundleError
    from capdesk.model.install import removable
    from capdesk.session.model_removal import remove_model

    name = ns.name
    try:
        where = removable(name)
    except BundleError as exc:
        error(str(exc))
        return EXIT_USAGE
    refused = None if ns.yes else _ask(name, where)
    if refused is not None:
        return refused
    try:
        done = remove_model(name)
    except BundleError as exc:
        error(str(exc))
        return EXIT_SOME_FAILED
    print(done.message)
    if done.fell_back:  # the window would otherwise start on a model that is gone
        print(f"the settings used {name!r}: CapDesk now picks the model for each picture (Automatic)")
    return EXIT_OK


def _ask(name: str, where: Path) -> int | None:
    """None when the person said yes; else the exit status, once why nothing is removed is said
    (without a terminal nobody can be asked)."""
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
    return None
