"""Modules named like ODW's own (`app`, `concurrent`, `logging`), planted where
ODW starts Python processes: each records its import in a marker directory
and ends the process that imported it."""

from __future__ import annotations

from pathlib import Path

HOSTILE = {"app/__init__.py": "app", "concurrent.py": "concurrent", "logging.py": "logging"}


def module_text(markers: Path, name: str) -> str:
    """A module that leaves `markers/<name>` behind, then stops its importer."""
    marker = str(markers / name)
    return (
        f"open({marker!r}, 'w').close()\n"
        f"raise SystemExit('the module {name} of the working directory was imported')\n"
    )


def plant(root: Path, markers: Path) -> None:
    """Write every hostile module under `root`."""
    for path, name in HOSTILE.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(module_text(markers, name))
