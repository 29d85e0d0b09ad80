"""CLI texts as a maintainer reads them, pinned by golden files.

Regenerate after an intended change with `ODW_UPDATE_GOLDEN=1 pytest tests/cli`
and review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.golden import assert_matches_golden

GOLDEN = Path(__file__).parent / "golden"

CASES = [
    ("next-text", ["next", "mixed.md"], 2),
    ("next-json", ["next", "mixed.md", "--json"], 2),
    ("roadmap-json", ["roadmap", "mixed.md", "--json"], 2),
    ("next-with-taken-and-held", ["next", "mixed.md", "--taken", "1.1.3"], 2),
]


@pytest.mark.parametrize(("name", "args", "code"), CASES, ids=[c[0] for c in CASES])
def test_cli_text_matches_golden(run_odw, name: str, args: list[str], code: int) -> None:
    res = run_odw(*args, cwd=GOLDEN)
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr
    path = GOLDEN / f"{name}.out"
    assert_matches_golden(path, res.stdout)


HELP_CASES = [("help", ["--help"]), ("integrate-help", ["integrate", "--help"])]


@pytest.mark.parametrize(("name", "args"), HELP_CASES, ids=[c[0] for c in HELP_CASES])
def test_help_text_matches_golden(run_odw, name: str, args: list[str]) -> None:
    """argparse wraps help at the terminal's width (here COLUMNS=80) as it always did."""
    res = run_odw(*args, env={**os.environ, "COLUMNS": "80"})
    assert res.returncode == 0, res.stderr
    path = GOLDEN / f"{name}.out"
    assert_matches_golden(path, res.stdout)


@pytest.mark.parametrize("columns", [50, 120], ids=["narrow", "wide"])
def test_help_follows_the_terminal_width(run_odw, columns: int) -> None:
    lines = run_odw("integrate", "--help", env={**os.environ, "COLUMNS": str(columns)})
    widths = [len(line) for line in lines.stdout.splitlines()]
    assert max(widths) <= columns - 2  # argparse keeps two columns free
    assert max(widths) > columns - 20  # and uses the rest
