"""No import circle among the app's own modules (studio/), counting imports made inside a
function: such an import only hides a circle from the interpreter, not from a reader."""
from __future__ import annotations

import ast

from tests.apphelp import ROOT

STUDIO = ROOT / "studio"


def imports_of(path) -> set[str]:
    """The studio modules a file imports, at any depth of its code."""
    names = {p.stem for p in STUDIO.glob("*.py")}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and not module or module == "studio":
                found |= {a.name for a in node.names}
            elif node.level == 1 or module.startswith("studio."):
                found.add(module.removeprefix("studio.").split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("studio.")}
    return found & names


def test_no_module_of_studio_reaches_itself_through_its_imports():
    graph = {p.stem: imports_of(p) for p in STUDIO.glob("*.py")}
    for start in graph:
        reached, todo = set(), list(graph[start])
        while todo:
            name = todo.pop()
            if name not in reached:
                reached.add(name)
                todo.extend(graph[name])
        assert start not in reached, f"studio/{start}.py imports itself through {sorted(reached)}"
