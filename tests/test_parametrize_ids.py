"""Every parametrized test names its cases (`ids=`), so a failure reads as what broke."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT


def _unnamed(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        keywords = {k.arg for k in node.keywords}
        if node.func.attr == "parametrize" and "ids" not in keywords:
            values = node.args[1] if len(node.args) > 1 else None
            # Cases built by a helper carry their ids in pytest.param(..., id=...).
            if not isinstance(values, ast.Call):
                lines.append(node.lineno)
        if node.func.attr == "fixture" and "params" in keywords and "ids" not in keywords:
            lines.append(node.lineno)
    return lines


def test_every_parametrize_has_ids() -> None:
    missing = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
        for line in _unnamed(path)
    ]
    assert missing == [], "add ids= to: " + ", ".join(missing)
