"""``capdesk`` on the command line: one module a command, over the same services as the window.

``main`` (the table of commands, the parser built from it, dispatch, and ``capdesk gui``), ``caption``,
``screen`` and ``service``, ``folders`` (``batch``), ``watch``, ``altfill``, ``models``, ``train``, and
``common`` (exit statuses, shared options, opening the describer and the writer, lines beside a progress
bar). Each command module's ``register`` adds its parser and names the function that runs it; that
function parses and checks the options, calls a service of ``capdesk.session`` (or ``folders``,
``altfill``) and prints.

May import: everything in ``capdesk`` (``gui`` only to open the window for ``capdesk gui``).
Nothing imports cli/ but the entry points.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``capdesk`` command (the entry point named in pyproject.toml stays ``capdesk.cli:main``)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["screen"] and "-h" not in args and "--help" not in args:
        # A key press: a running ``capdesk service`` answers it with the model loaded. Asked before the
        # parser and the commands are imported, which a key press would otherwise wait for.
        from capdesk.screen.client import forward_screen

        status = forward_screen(args)
        if status is not None:
            return status
    from capdesk.cli.main import main as run

    return run(args)
