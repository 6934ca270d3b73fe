"""``capdesk`` on the command line: one module a command, over the same services as the window.

``main`` (the parser and dispatch), ``caption``, ``folders`` (``batch`` and ``watch``),
``altfill``, ``models``, and ``common`` (exit statuses, opening the describer and the writer).

May import: everything in ``capdesk`` (``gui`` only to open the window for ``capdesk gui``).
Nothing imports cli/ but the entry points.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``capdesk`` command (the entry point named in pyproject.toml stays ``capdesk.cli:main``)."""
    from capdesk.cli.main import main as run

    return run(argv)
