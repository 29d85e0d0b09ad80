"""The stage summary says each exit code once, without nested parentheses."""

from __future__ import annotations

import pytest

from actions.checks import exit_check
from actions.proctree import ProcessResult
from actions.summary import render_summary
from app.core.verdict import Verdict

CLEAN = "exit code recorded but not consulted: the agent exited cleanly (code 0) |"
CASES = [
    ("marker seen, clean exit", 0, True, CLEAN),
    ("no marker, exit 3", 3, False, "the agent exited with code 3 |"),
]


@pytest.mark.parametrize(
    ("code", "seen", "row_end"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_exit_code_row_names_the_code_once(code: int, seen: bool, row_end: str) -> None:
    check = exit_check(ProcessResult(exit_code=code), 60.0, marker_seen=seen)
    verdict = Verdict(stage="implement", task="1.1", token="t", passed=False, checks=[check])
    row = next(ln for ln in render_summary(verdict).splitlines() if ln.startswith("| exit_code"))
    assert row.endswith(row_end)
    assert row.count(f"code {code}") == 1
