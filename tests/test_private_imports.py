"""No module imports another module's private names (issue "typed stages"): what one module shares with others is a
public name with a docstring that says its contract (the evidence readers' `evidence_layers.vector_features`, not
`evidence._vector`), so a private name can change without reading the whole package for its users."""
from __future__ import annotations

import ast

from test_imports import ROOT, package_files


def _private_imports(tree: ast.AST) -> list[str]:
    """`from <module> import _name` of a package module (relative, or absolute from lodestar) as 'line: module._name';
    dunder names (__version__) are not private."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("lodestar")):
            continue
        module = "." * node.level + (node.module or "")
        found += [f"{node.lineno}: {module}.{alias.name}" for alias in node.names
                  if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_module_imports_a_private_name_of_another():
    found = {}
    for path in package_files():
        lines = _private_imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if lines:
            found[path.relative_to(ROOT).as_posix()] = lines
    assert not found, "private names imported across modules (make them public, with their contract):\n" + \
        "\n".join(f"{file}:{line}" for file, lines in found.items() for line in lines)


def test_the_check_sees_a_private_import():
    tree = ast.parse("from .evidence import EvidenceSpec, _vector\nfrom ..tools import _x as y\n"
                     "from lodestar.plugin.labels import _words\nfrom numpy import _core\nfrom . import __version__\n")
    assert _private_imports(tree) == ["1: .evidence._vector", "2: ..tools._x", "3: lodestar.plugin.labels._words"]
