"""The ExecPlan contract: the sections a plan must have and who sets its `Status:`.

`Status:` is the durable resume pointer (`recovery.continue_mode` reads it), so
the plan stage may only leave `DRAFT`: a planner that wrote `COMPLETE` would
send a resumed task straight to review. One definition for the prompt that asks
for the plan and the check that judges it.
"""

from __future__ import annotations

import re

from app.core.recovery import PlanStatus, plan_status

# In this order in the plan prompt; a heading of any level whose text starts
# with the name counts ("Purpose / Big Picture" is the Purpose section).
REQUIRED_SECTIONS: tuple[str, ...] = (
    "Purpose",
    "Constraints",
    "Risks",
    "Progress",
    "Decision log",
    "Context and orientation",
    "Plan of work",
    "Concrete steps",
    "Validation and acceptance",
    "Idempotence and recovery",
)
# Who writes each status: the plan stage DRAFT; the host APPROVED (reserved for
# its approval after a passing design review, never an agent's); implement and
# fix IN PROGRESS, then COMPLETE, or BLOCKED when a person must decide.
PLAN_STAGE_STATUS: PlanStatus = "draft"
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<title>.+?)[ \t#]*$", re.MULTILINE)


def missing_sections(text: str) -> list[str]:
    """The required sections without a heading, in contract order."""
    titles = [" ".join(m.group("title").lower().split()) for m in _HEADING.finditer(text)]
    return [s for s in REQUIRED_SECTIONS if not any(t.startswith(s.lower()) for t in titles)]


def plan_stage_problems(text: str) -> list[str]:
    """Why a freshly planned ExecPlan breaks the contract; empty when it holds."""
    problems = []
    missing = missing_sections(text)
    if missing:
        problems.append("missing sections: " + ", ".join(missing))
    status = plan_status(text)
    if status == "unknown":
        found = next((line.strip() for line in text.splitlines() if "status:" in line.lower()), "")
        problems.append(
            f"Status line {found!r} is not one of DRAFT, APPROVED, IN PROGRESS, COMPLETE, BLOCKED"
            if found
            else "no `Status:` line (the plan stage writes `Status: DRAFT`)"
        )
    elif status != PLAN_STAGE_STATUS:
        problems.append(
            f"Status is {status.upper()}; the plan stage writes DRAFT "
            "(APPROVED is the host's, the others belong to implementation)"
        )
    return problems
