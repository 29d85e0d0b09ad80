"""The rooms of `app/` and the one direction their imports run.

Read from the source (every import, also those inside functions), so a new
arrow that points outward fails here before anyone has to find it by reading.
The layers, innermost first: the core; the engine that drives it; the adapters
(GitHub, git, the store); the hosts (local mode, the App, the commands); the
edges that serve them (web, service); the command line, which starts them all.
The leaf modules `app/*.py` (settings, logs, liveness, child processes) may be
used by any room.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"

LAYER = {
    "core": 0,
    "engine": 1,
    "github": 2,
    "gitops": 2,
    "store": 2,
    "local": 3,
    "apphost": 3,
    "commands": 3,
    "cli": 5,
    "web": 4,
    "service": 4,
}

# Arrows between rooms of one layer that are allowed, (from, to).
SIDEWAYS = {("apphost", "commands")}  # the App implements the commands' host port


def room_imports() -> list[tuple[str, str, str]]:
    """(file, from room, to room) for every `app.*` import between two rooms."""
    found = []
    for path in sorted(APP.rglob("*.py")):
        parts = path.relative_to(APP).parts
        if len(parts) < 2:
            continue
        room = parts[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                bits = name.split(".")
                if bits[0] == "app" and len(bits) > 1 and bits[1] != room:
                    found.append((str(path.relative_to(APP.parent)), room, bits[1]))
    return found


IMPORTS = room_imports()


def test_every_room_has_a_layer() -> None:
    rooms = {p.name for p in APP.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(LAYER)


def test_imports_point_inward() -> None:
    outward = [
        f"{f}: {a} -> {b}"
        for f, a, b in IMPORTS
        if b in LAYER and (LAYER[b] > LAYER[a] or (LAYER[b] == LAYER[a] and (a, b) not in SIDEWAYS))
    ]
    assert outward == []


def test_the_core_imports_no_other_room() -> None:
    assert [f for f, a, _ in IMPORTS if a == "core"] == []


@pytest.mark.parametrize("room", ["apphost", "commands", "service", "web"], ids=str)
def test_local_mode_is_reached_only_from_the_command_line(room: str) -> None:
    assert [f for f, a, b in IMPORTS if a == room and b == "local"] == []


def test_the_commands_do_not_know_the_app() -> None:
    assert [f for f, a, b in IMPORTS if a == "commands" and b == "apphost"] == []


def test_adapters_do_not_know_each_other() -> None:
    adapters = {"github", "gitops", "store"}
    assert [f for f, a, b in IMPORTS if a in adapters and b in adapters - {a}] == []


def test_pygithub_stays_inside_the_github_adapter() -> None:
    outside = []
    for path in sorted(APP.rglob("*.py")):
        if path.relative_to(APP).parts[0] == "github":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            outside += [str(path) for n in names if n == "github" or n.startswith("github.")]
    assert outside == []
