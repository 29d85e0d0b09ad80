"""The arrows between the outer rooms point one way: `app.commands` owns the
`CommandHost` port and never reaches into the App host that implements it,
and nothing the service runs reaches local mode. Imports inside functions count."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def _offenders(rooms: tuple[str, ...], forbidden: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for room in rooms
        for path in sorted((ROOT / room).rglob("*.py"))
        for name in sorted(_imports(path))
        if name == forbidden or name.startswith(forbidden + ".")
    ]


@pytest.mark.parametrize(
    ("rooms", "forbidden"),
    [
        (("app/commands",), "app.apphost"),
        (("app/apphost", "app/commands", "app/service", "app/web"), "app.local"),
    ],
    ids=["commands-never-import-the-app-host", "the-service-never-imports-local-mode"],
)
def test_no_import_runs_back_up(rooms: tuple[str, ...], forbidden: str) -> None:
    assert _offenders(rooms, forbidden) == []
