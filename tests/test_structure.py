"""The shape of the code: no import circles in capdesk/, no module past about 450 lines, and the
status words that reports and JSON have always carried. (That nothing outside capdesk/gui imports
PySide6 is tested in test_session.py, and that the engine never imports torch in test_cli.py.)"""

from __future__ import annotations

import ast
import csv
import io
import json
from dataclasses import asdict
from pathlib import Path

from conftest import ROOT

from capdesk.status import Ownership, RowStatus, SaidAs, SidecarState, TextStatus, WriteStatus

PACKAGE = ROOT / "capdesk"
MAX_LINES = 450


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the capdesk modules it imports anywhere in its code (functions and TYPE_CHECKING blocks
    included: a circle hidden in a function still ties the two modules together)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                # "from capdesk import ocr" imports the module capdesk.ocr; "from x import f" imports x.
                targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        found = {owner(t) for t in targets if t.split(".")[0] == "capdesk"}
        graph[name] = {m for m in found if m and m != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path that comes back to its start, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_graph_reader_sees_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    graph = import_graph()
    # Imports inside functions count: the CLI reaches the window only from inside main().
    assert "capdesk.gui.app" in graph["capdesk.cli"]
    assert "capdesk.sidecars" in graph["capdesk.batch"] and "capdesk.ocr" in graph["capdesk.describe"]


def test_no_import_circles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_no_module_grows_past_its_limit():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these (over {MAX_LINES} lines): {long}"


def test_status_words_are_the_ones_reports_always_had():
    assert [s.value for s in RowStatus] == ["captioned", "skipped", "kept", "failed"]
    assert [s.value for s in WriteStatus] == ["written", "unchanged", "kept", "failed"]
    assert [s.value for s in Ownership] == ["absent", "ours", "foreign", "blocked"]
    assert [s.value for s in SidecarState] == ["none", "generated", "edited"]
    assert [s.value for s in SaidAs] == ["fact", "probably", "withheld", "none"]
    assert [s.value for s in TextStatus] == ["read", "none", "skipped", "unavailable"]
    from capdesk.batch import Row

    row = Row("a.jpg", RowStatus.KEPT)
    assert json.loads(json.dumps(asdict(row)))["status"] == "kept"
    buf = io.StringIO()
    csv.writer(buf).writerow([row.status, SaidAs.WITHHELD])
    assert buf.getvalue().strip() == "kept,withheld"
    assert f"{row.status}" == str(row.status) == "kept" and row.status == "kept"
