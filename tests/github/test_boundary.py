"""PyGithub stays inside app/github; the pure core never sees the adapter."""

from __future__ import annotations

import ast
from pathlib import Path

from app.service_settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _sources() -> list[Path]:
    found = []
    for top in ("app", "actions", "webhooks", "bench"):
        found += sorted((ROOT / top).rglob("*.py"))
    return found


def test_only_app_github_imports_pygithub() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in _sources()
        if not path.is_relative_to(ROOT / "app/github")
        and any(name == "github" or name.startswith("github.") for name in _imports(path))
    ]
    assert offenders == []


def test_the_core_does_not_import_the_github_adapter() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "app/core").rglob("*.py"))
        if any(name.startswith("app.github") for name in _imports(path))
    ]
    assert offenders == []


def test_the_api_url_defaults_to_github_and_can_point_at_enterprise_server() -> None:
    assert load_settings().github_api_url == "https://api.github.com"
    settings = load_settings(github_api_url="https://ghe.example.com/api/v3")
    assert settings.github_api_url == "https://ghe.example.com/api/v3"
