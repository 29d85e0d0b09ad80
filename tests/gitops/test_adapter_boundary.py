"""Adapters do not know each other: git work reaches GitHub only through ports it owns."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_gitops_imports_nothing_from_the_github_adapter() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in _imported(path)
            if name == "app.github" or name.startswith(("app.github.", "github"))
        )
        for path in sorted((ROOT / "app/gitops").rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}
