"""Functions a reader takes in at once (issue 59): no product function over 80 lines, at most 5 over 60 (from `def`
to the end of its body; decorators left out). Before, 6 ran over 80 and 17 over 60."""
from __future__ import annotations

import ast

from test_imports import ROOT, package_files

LONGEST = 80
LONG = 60
MOST_LONG = 5


def function_lengths() -> list[tuple[int, str]]:
    """(lines, 'file:line name') of every function and method of the product, longest first."""
    rows = []
    for path in package_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}"
                rows.append((node.end_lineno - node.lineno + 1, where))
    return sorted(rows, reverse=True)


def test_function_lengths_counts_a_function_from_def_to_its_last_line(tmp_path):
    tree = ast.parse("def f():\n    x = 1\n\n    return x\n")
    node = tree.body[0]
    assert node.end_lineno - node.lineno + 1 == 4
    assert len(function_lengths()) > 1000  # the product is read, not an empty folder


def test_no_function_over_80_lines_and_at_most_5_over_60():
    rows = function_lengths()
    assert [where for lines, where in rows if lines > LONGEST] == []
    long = [f"{where} ({lines})" for lines, where in rows if lines > LONG]
    assert len(long) <= MOST_LONG, long
