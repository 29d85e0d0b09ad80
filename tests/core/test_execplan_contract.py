"""The ExecPlan contract the plan stage is judged by: sections and who sets `Status:`."""

from __future__ import annotations

import pytest

from app.core.execplan import REQUIRED_SECTIONS, missing_sections, plan_stage_problems

GOOD = "# ExecPlan 1.2\n\nStatus: DRAFT\n\n" + "".join(
    f"## {name}\n\nText.\n\n" for name in REQUIRED_SECTIONS
)


def test_a_plan_with_every_section_and_draft_holds() -> None:
    assert plan_stage_problems(GOOD) == []


def test_headings_match_by_prefix_any_level_and_case() -> None:
    text = GOOD.replace("## Purpose", "# Purpose / Big Picture").replace(
        "## Decision log", "### DECISION LOG"
    )
    assert missing_sections(text) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (GOOD.replace("## Risks\n", "Risks\n"), "missing sections: Risks"),
        ("Status: DRAFT\n", "missing sections: " + ", ".join(REQUIRED_SECTIONS)),
        (GOOD.replace("Status: DRAFT\n", ""), "no `Status:` line"),
        (GOOD.replace("DRAFT", "DONE"), "Status line 'Status: DONE' is not one of"),
        (GOOD.replace("DRAFT", "COMPLETE"), "Status is COMPLETE; the plan stage writes DRAFT"),
        (GOOD.replace("DRAFT", "APPROVED"), "Status is APPROVED; the plan stage writes DRAFT"),
    ],
    ids=["one-section", "no-sections", "no-status", "unknown-status", "complete", "approved"],
)
def test_each_breach_is_named(text: str, problem: str) -> None:
    assert any(p.startswith(problem) for p in plan_stage_problems(text)), plan_stage_problems(text)
