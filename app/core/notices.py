"""Texts for people: a failure, remediation, the prompt extras, recovery's advice.

Kept beside each other and away from the rules, so wording can change without
touching a decision, and every rule reads the same words.
"""

from __future__ import annotations

from app.core.config import OVERRIDE_TEXT
from app.core.state import RunState, TaskState

RESUME_HINT = 'relaunch with resumePartialBranches=true and resumeMode="continue"'
ADVISORY_OPEN = (
    "----- BEGIN ADVISORY: residual risk from the recovery assessment (non-blocking) -----"
)
ADVISORY_CLOSE = "----- END ADVISORY -----"
RELAUNCH = (
    "inspect each branch on origin and delete it or finish it by hand, or relaunch with "
    'resumePartialBranches=true and resumeMode="review" or "continue"'
)


def failure_notice(t: TaskState) -> str:
    """What failed, where, and that the work is kept (the views add the way back)."""
    return f"Task {t.id} {t.status} at {t.stage}: {t.detail}. The branch {t.branch} is kept."


REMEDIATION_SUPPRESSED = (
    "remediation suppressed: a provider, infrastructure or auth fault explains the failures"
)


def remediation_notice(failed: tuple[str, ...]) -> str:
    """The failed tasks no fault explains, left for a person when the run ended."""
    return f"needs remediation: {', '.join(failed)} failed with no fault to explain it"


def prompt_extras(s: RunState, t: TaskState) -> dict[str, str]:
    """What the next attempt's prompt adds: overrides, feedback, the ticket, residual risk."""
    extras = {k: str(v) for k, v in t.overrides.items() if k in OVERRIDE_TEXT}
    if t.feedback:
        extras["feedback"] = t.feedback
    if t.ticket is not None:
        extras["ticket"] = f"{t.ticket.category} from {t.ticket.origin}: {t.ticket.reason}"
    if t.assessment is not None and t.assessment.residual_risk:
        extras["residualRisk"] = "\n".join(t.assessment.residual_risk)
    elif (section := advisory(s, t)) is not None:
        extras["residualRisk"] = section
    return extras


def advisory(s: RunState, t: TaskState) -> str | None:
    """The recovery assessment's residual risk as a clearly delimited advisory section."""
    a = s.recovery.assessments.get(t.id)
    if a is None or not a.residual_risk or t.id not in s.recovery.resumed:
        return None
    body = "\n".join(f"- {line}" for line in a.residual_risk)
    return f"{ADVISORY_OPEN}\n{body}\n{ADVISORY_CLOSE}"


def halt_reason(rows: list[dict[str, str | None]]) -> str:
    """Why unresolved survivors halt the run, and what an operator can do."""
    named = ", ".join(f"{r['id']} ({r['branch']}: {r['reason']})" for r in rows)
    return (
        f"needs-operator-recovery: {len(rows)} surviving branch(es) unresolved: {named}; "
        + RELAUNCH
    )
