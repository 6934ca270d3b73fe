"""``capdesk`` on the command line: one module a command, over the same services as the window.

``main`` (the parser and dispatch), ``caption``, ``screen`` and ``service``, ``folders`` (``batch`` and ``watch``),
``altfill``, ``models``, and ``common`` (exit statuses, opening the describer and the writer).

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
