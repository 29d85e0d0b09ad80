"""docs/security-and-permissions.md cannot drift from the code: every test it
names exists, every control row names one, and its permission and event
tables are exactly the App manifest's."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from app.github.manifest import load

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "security-and-permissions.md"
# `tests/x.py`, `tests/x.py::test_y`, or `::test_y` (in the file named before it).
REFERENCE = re.compile(r"(tests/[\w/]+\.py)(?:::(\w+))?|::(test_\w+)")


@cache
def _tests_in(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text())
    return frozenset(
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    )


def references(text: str) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    current: str | None = None
    for m in REFERENCE.finditer(text):
        if m.group(1):
            current = m.group(1)
            found.append((current, m.group(2)))
        else:
            assert current is not None, f"::{m.group(3)} names no file before it"
            found.append((current, m.group(3)))
    return found


def test_every_test_the_security_document_names_exists() -> None:
    refs = references(DOC.read_text())
    assert len(refs) > 50
    missing = []
    for file, name in refs:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif name is not None and name not in _tests_in(path):
            missing.append(f"{file}::{name}")
    assert missing == []


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    tables, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = [c.strip() for c in lines[i].strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split(" | ")])
                i += 1
            tables.append((header, rows))
        else:
            i += 1
    return tables


def test_every_control_in_the_security_document_names_its_test() -> None:
    unproved = [
        row[0]
        for header, rows in _tables(DOC.read_text())
        if header[-1] == "proved by"
        for row in rows
        if not REFERENCE.search(row[-1])
    ]
    assert unproved == []


def test_the_documents_permissions_and_events_are_the_manifests() -> None:
    spec = load()
    tables = _tables(DOC.read_text())
    permissions = next(rows for header, rows in tables if header[:2] == ["permission", "level"])
    assert {r[0].strip("`"): r[1] for r in permissions} == spec["default_permissions"]
    events = next(rows for header, rows in tables if header == ["event", "why"])
    assert [r[0].strip("`") for r in events] == spec["default_events"]


def test_the_reference_reader_follows_files() -> None:
    text = "`tests/a.py::test_x`, `::test_y` and `tests/b.py`, `::test_z`"
    assert references(text) == [
        ("tests/a.py", "test_x"),
        ("tests/a.py", "test_y"),
        ("tests/b.py", None),
        ("tests/b.py", "test_z"),
    ]
