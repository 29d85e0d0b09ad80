"""Fresh-launch recovery as the run result shows it: decisions, and what is unresolved.

A projection of `RunState.recovery` and the tasks; the decider records the
unresolved rows at the end of a run from the same function.
"""

from __future__ import annotations

from typing import Any

from app.core.state import RunState


def unresolved(s: RunState) -> list[dict[str, str | None]]:
    r = s.recovery
    skips = {k["id"]: k["reason"] for k in r.skipped if "id" in k}
    rows: list[dict[str, str | None]] = []
    for task_id, branch in r.held.items():
        t = s.task(task_id)
        if t.status == "landed":
            continue
        decision = r.decisions.get(task_id)
        classification = decision.classification if decision else None
        action = decision.action if decision else "hold"
        if t.assessment is not None:
            classification = t.assessment.classification
        if not r.enabled:
            reason = "resumePartialBranches is off: the branch was held, not assessed"
        elif task_id in skips:
            reason = skips[task_id]
        elif decision is None:
            reason = "no recovery decision was reached"
        elif task_id in r.queue:
            reason = "not resumed: the run stopped first"
        elif task_id in r.resumed:
            reason = f"resumed at {decision.stage}; {t.status} at {t.stage}: {t.detail}"
        else:
            reason = decision.reason or f"resumeMode {r.mode}: report only"
        rows.append(
            {
                "id": task_id,
                "branch": branch,
                "classification": classification,
                "action": action,
                "reason": reason,
            }
        )
    return rows


def recovery_json(s: RunState) -> dict[str, Any] | None:
    r = s.recovery
    if not r.planned:
        return None
    results = [
        {
            "id": task_id,
            "branch": dec.branch,
            "classification": dec.classification,
            "action": dec.action,
            **({"reason": dec.reason} if dec.reason else {}),
            **({"stage": dec.stage} if dec.stage else {}),
        }
        for task_id, dec in r.decisions.items()
    ]
    return {
        "enabled": r.enabled,
        "mode": r.mode,
        "candidates": len(r.candidates),
        "assessed": len(r.assessments),
        "resumed": len(r.resumed),
        "results": results,
        "skipped": list(r.skipped),
        "unresolved": list(r.unresolved) if s.ended else unresolved(s),
        "blocked": r.blocked,
    }
