"""One-way imports: no cycle between the package's files or its top folders, and only the allowed directions.

Folders: `entry` (the root __init__.py and lodestar_plugin.py, the QGIS entry class that wires
processing and ui; nothing imports them), `plugin` (the QGIS-free core), `models` (back-ends),
`processing` and `ui` (the QGIS adapters). Allowed: ui -> processing -> plugin, models -> plugin, and
ui / processing -> models (adapters that call a back-end). The core never imports models/: an analysis is
given its back-ends (`plugin.reason.contract.Backends`). No exception. Imports under `if TYPE_CHECKING:` are
typing only, never run, and are left out.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = {"build", "dist", "tests", "scripts"}
ENTRY = {"__init__.py", "lodestar_plugin.py"}
ALLOWED = {
    ("entry", "plugin"), ("entry", "models"), ("entry", "processing"), ("entry", "ui"),
    ("ui", "processing"), ("ui", "models"), ("ui", "plugin"),
    ("processing", "models"), ("processing", "plugin"),
    ("models", "plugin"),
}


def package_files() -> list[Path]:
    return sorted(path for path in ROOT.rglob("*.py")
                  if not (path.relative_to(ROOT).parts[0] in SKIPPED or path.relative_to(ROOT).parts[0][0] == "."))


def module_file(parts: list[str]) -> str | None:
    """The file of a module given by its parts below the package root ([] is the root __init__.py)."""
    base = ROOT.joinpath(*parts)
    if parts and base.with_suffix(".py").is_file():
        return base.with_suffix(".py").relative_to(ROOT).as_posix()
    if (base / "__init__.py").is_file():
        return (base / "__init__.py").relative_to(ROOT).as_posix()
    return None


class _Imports(ast.NodeVisitor):
    """Relative imports of one file as (module parts, imported names, inside a function)."""

    def __init__(self):
        self.found: list[tuple[int, str | None, list[str], bool]] = []
        self._depth = 0

    def _function(self, node) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function  # noqa: N815 (ast visitor names)

    def visit_If(self, node: ast.If) -> None:  # noqa: N802 (ast visitor name)
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
                (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802 (ast visitor name)
        if node.level:  # the package imports itself relatively only; absolute imports are outside it
            self.found.append((node.level, node.module, [a.name for a in node.names], self._depth > 0))


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """(file imported, whether inside a function) for each import of a package file by `path`."""
    relative = path.relative_to(ROOT)
    package = list(relative.parts[:-1])
    visitor = _Imports()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    found = []
    for level, module, names, lazy in visitor.found:
        assert level - 1 <= len(package), f"{relative}: a relative import reaches above the package root"
        parts = package[:len(package) - (level - 1)] + (module.split(".") if module else [])
        for name in names:  # `from . import toolbox` imports a module; `from .loop import Engine` a name
            target = module_file(parts + [name]) or module_file(parts)
            assert target is not None, f"{relative}: cannot resolve the import of {'.'.join(parts) or '.'}"
            found.append((target, lazy))
    return found


def folder_of(file: str) -> str:
    return "entry" if file in ENTRY else file.split("/", 1)[0]


def file_graph() -> dict[str, dict[str, bool]]:
    """file -> {imported file: True when every import of it sits inside a function}."""
    graph: dict[str, dict[str, bool]] = {}
    for path in package_files():
        source = path.relative_to(ROOT).as_posix()
        edges = graph.setdefault(source, {})
        for target, lazy in imports_of(path):
            if target != source:
                edges[target] = edges.get(target, True) and lazy
    return graph


def find_cycle(graph: dict) -> list | None:
    """One cycle of a directed graph as its nodes (the first repeated at the end), or None."""
    state: dict = {}
    stack: list = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def folder_graph(graph: dict) -> dict[str, dict[str, list[str]]]:
    """folder -> {imported folder: the file imports behind the edge}."""
    folders: dict = {}
    for source, edges in graph.items():
        for target in edges:
            if folder_of(source) == folder_of(target):
                continue
            folders.setdefault(folder_of(source), {}).setdefault(folder_of(target), []).append(f"{source} -> {target}")
    return folders


def test_the_walk_sees_the_package():
    graph = file_graph()
    assert {"plugin/runs/run.py", "plugin/reason/contract.py", "models/__init__.py", "processing/provider.py",
            "ui/dock.py", "__init__.py", "lodestar_plugin.py"} <= set(graph)
    assert graph["plugin/reason/loop.py"]["plugin/reason/toolbox.py"] is False  # `from . import toolbox`
    assert graph["__init__.py"] == {"lodestar_plugin.py": True}  # classFactory imports it lazily
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle_between_files():
    cycle = find_cycle(file_graph())
    assert cycle is None, "import cycle between files: " + " -> ".join(cycle)


def test_no_import_cycle_between_folders():
    cycle = find_cycle(folder_graph(file_graph()))
    assert cycle is None, "import cycle between folders: " + " -> ".join(cycle)


def test_imports_run_one_way():
    wrong = [line for source, targets in folder_graph(file_graph()).items() for target, lines in targets.items()
             if (source, target) not in ALLOWED for line in lines]
    assert not wrong, "imports against the allowed directions (ui -> processing -> plugin, models -> plugin):\n" \
                      + "\n".join(wrong)


def test_nothing_imports_the_entry():
    importers = [f"{source} -> {target}" for source, edges in file_graph().items() for target in edges
                 if target in ENTRY and source not in ENTRY]
    assert not importers, "the QGIS entry is imported by: " + ", ".join(importers)


def test_the_adapters_load_the_back_ends_only_when_a_run_asks():
    """QGIS loads ui/ and processing/ at start-up; the back-ends (torch for SAM, the model-server client) load
    only inside the functions that run an analysis or refine zones."""
    eager = sorted(f"{source} -> {target}" for source, edges in file_graph().items() for target, lazy in edges.items()
                   if folder_of(source) in ("ui", "processing") and folder_of(target) == "models" and not lazy)
    assert not eager, "ui/ or processing/ import models/ at module level: " + ", ".join(eager)


def test_the_core_never_imports_a_back_end():
    graph = file_graph()
    into_models = sorted(f"{source} -> {target}" for source, edges in graph.items() for target in edges
                         if folder_of(source) == "plugin" and folder_of(target) == "models")
    assert not into_models, "the core imports models/ (pass back-ends in instead): " + ", ".join(into_models)


CORE_LAYERS = ("runs", "request", "report", "map", "judge", "load", "reason", "favourability", "tools")
"""The core's sub-packages, each importing only those after it. A run passes the stages request -> load -> reason
-> map -> judge -> report (docs/development.md); `runs` chains them (and runs batches, keeps the history). The
imports follow what each stage uses, not the order a run passes them: the request reads a run record back and
names the deposit models and questions (reason), the report draws the map and the judged targets, the map stage
tabulates its targets with the judge's verdicts, loading measures layers into the reasoner's workspace. Below the
stages, the libraries: the surface models (favourability), the executor's tools, and plugin/'s top-level modules,
shared by all and importing none of the sub-packages."""


def _layer(file: str):
    parts = file.split("/")
    if parts[0] != "plugin":
        return None
    if len(parts) == 2:
        return len(CORE_LAYERS)  # plugin/'s top level: below every sub-package
    return CORE_LAYERS.index(parts[1]) if parts[1] in CORE_LAYERS else None


def test_the_cores_sub_packages_import_one_way():
    assert {p.name for p in (ROOT / "plugin").iterdir() if (p / "__init__.py").is_file()} == set(CORE_LAYERS)
    back = [f"{source} -> {target}" for source, edges in file_graph().items() for target in edges
            if _layer(source) is not None and _layer(target) is not None and _layer(target) < _layer(source)]
    assert not back, "imports back up inside plugin/ (" + " -> ".join(CORE_LAYERS) + " -> plugin/*.py):\n" \
                     + "\n".join(back)


def test_the_layer_check_sees_an_import_back_up():
    assert _layer("plugin/zones.py") > _layer("plugin/tools/categorical.py") > _layer("plugin/runs/run.py")
    assert _layer("plugin/runs/run.py") < _layer("plugin/report/report.py") < _layer("plugin/reason/loop.py")
    assert _layer("models/offline/scene.py") is None
