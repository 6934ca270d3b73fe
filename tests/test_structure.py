"""The shape of the code (docs/architecture.md): the rooms of capdesk/ and what each may import, no
import circles anywhere (training/ included), no module past about 450 lines, Qt only in gui/, torch
only in training/, and the status words that reports and JSON have always carried. (That the session
and the CLI load with Qt unimportable is tested in test_session.py, and that the engine runs without
torch in test_cli.py.)"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Collection
from dataclasses import asdict
from pathlib import Path

from conftest import ROOT

from capdesk.status import Ownership, RowStatus, SaidAs, SidecarState, TextStatus, WriteStatus

PACKAGE = ROOT / "capdesk"
TRAINING = ROOT / "training"
MAX_LINES = 450
MAX_TOP_MODULES = 12

# The rooms in the order a picture travels, lowest first: a module may import its own room and the
# rooms below it, never one above. The root package and ``__main__`` are the entry and stand outside.
LAYERS = [
    ("vocabulary", ("capdesk.status", "capdesk.limits", "capdesk.imageio", "capdesk.safe_files",
                    "capdesk.speech", "capdesk.training_hint")),
    ("model", ("capdesk.model",)),
    ("describe", ("capdesk.describe",)),
    ("sidecars", ("capdesk.sidecars",)),
    ("folders", ("capdesk.folders",)),
    ("altfill", ("capdesk.altfill",)),
    ("screen", ("capdesk.screen",)),
    ("training", ("training",)),
    ("session", ("capdesk.session",)),
    ("gui", ("capdesk.gui",)),
    ("cli", ("capdesk.cli",)),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, package: str, modules: Collection[str] = ()) -> set[str]:
    """Every module name an import statement in the file names, relative imports made absolute.
    "from capdesk.describe import ocr" names the module capdesk.describe.ocr when it is one of ``modules``;
    "from x import f" names x."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports anywhere in its code (functions and TYPE_CHECKING blocks
    included: a circle hidden in a function still ties the two modules together). capdesk/ and training/."""
    modules = {module_name(p): p for root in (PACKAGE, TRAINING) for p in root.rglob("*.py")}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = imported_names(path, package, modules)
        found = {owner(t) for t in targets if t.split(".")[0] in ("capdesk", "training")}
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
    assert "capdesk.gui.app" in graph["capdesk.cli.main"]
    assert "capdesk.sidecars.writer" in graph["capdesk.folders.batch"]
    assert "capdesk.describe.ocr" in graph["capdesk.describe.describer"]
    assert "capdesk.model.bundle" in graph["training.export"]


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (length of the matching prefix, layer)
    for i, (_, prefixes) in enumerate(LAYERS):
        for pre in prefixes:
            if (module == pre or module.startswith(pre + ".")) and (best is None or len(pre) > best[0]):
                best = (len(pre), i)
    return None if best is None else best[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in graph.items():
        here = layer_of(mod)
        if here is None:
            continue
        for t in targets:
            there = layer_of(t)
            if there is not None and there > here:
                bad.append(f"{mod} ({LAYERS[here][0]}) imports {t} ({LAYERS[there][0]})")
    return sorted(bad)


def test_the_layer_check_sees_an_upward_import():
    assert upward_imports({"capdesk.model.engine": {"capdesk.session.core"}}) == [
        "capdesk.model.engine (model) imports capdesk.session.core (session)"]
    assert upward_imports({"capdesk.cli.main": {"capdesk.gui.app", "capdesk.status"}}) == []


def test_every_module_has_a_room():
    homeless = [m for m in import_graph() if layer_of(m) is None and m not in ("capdesk", "capdesk.__main__")]
    assert not homeless, f"add these to a room in LAYERS and docs/architecture.md: {homeless}"


def test_imports_only_go_downwards():
    bad = upward_imports(import_graph())
    assert not bad, "imports that run upwards:\n" + "\n".join(bad)


def test_capdesk_holds_a_dozen_modules_at_most_and_rooms_say_what_they_own():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    for pkg in sorted(p.parent for p in PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, f"{pkg.relative_to(ROOT)}/__init__.py: say what it owns and may import"


def test_qt_only_in_gui_and_torch_only_in_training():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
        top = {n.split(".")[0] for n in imported_names(path, package)}
        gui = path.is_relative_to(PACKAGE / "gui")
        offenders += [f"{path.relative_to(ROOT)}: {n}" for n in top & {"PySide6", "torch", "torchvision"}
                      if n != "PySide6" or not gui]
    assert not offenders, offenders


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
    from capdesk.folders.batch import Row

    row = Row("a.jpg", RowStatus.KEPT)
    assert json.loads(json.dumps(asdict(row)))["status"] == "kept"
    buf = io.StringIO()
    csv.writer(buf).writerow([row.status, SaidAs.WITHHELD])
    assert buf.getvalue().strip() == "kept,withheld"
    assert f"{row.status}" == str(row.status) == "kept" and row.status == "kept"
