"""The core stays pure: it imports no adapter library and reads no clock."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
FORBIDDEN = (
    "flask",
    "github",
    "git",
    "sqlalchemy",
    "psycopg",
    "requests",
    "subprocess",
    "socket",
    "random",
    "secrets",
    "time",
    "uuid",
    "app.engine",
    "app.cli",
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_module_imports_no_adapter_or_nondeterminism(path):
    bad = sorted(
        n for n in _imports(path) if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)
    )
    assert bad == [], f"{path.name} imports {bad}"


def test_core_reads_no_clock():
    for path in CORE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "datetime.now" not in text and ".utcnow(" not in text, path.name


def _core_imports(path: Path) -> tuple[set[str], list[int]]:
    """(app.core modules imported at module level, lines of imports inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested = [
        inner.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for inner in ast.walk(node)
        if isinstance(inner, ast.Import | ast.ImportFrom)
    ]
    targets: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app.core"):
            if node.module == "app.core":
                targets.update(f"app.core.{a.name}" for a in node.names)
            else:
                targets.add(node.module)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks hide cycles too
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.module or "").startswith(
                    "app.core"
                ):
                    targets.add(str(inner.module))
    return targets, nested


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_no_import_inside_a_function(path):
    _, nested = _core_imports(path)
    assert nested == [], f"{path.name} imports inside a function or class at lines {nested}"


def test_core_import_graph_has_no_cycle():
    graph = {f"app.core.{p.stem}": _core_imports(p)[0] for p in CORE.glob("*.py")}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycle = [*path[path.index(node) :], node]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if node in done:
            return
        for target in sorted(graph.get(node, ())):
            visit(target, [*path, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])
    assert "app.core.decide" in done and "app.core.handlers" in graph["app.core.decide"]
