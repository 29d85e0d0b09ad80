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
