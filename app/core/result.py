"""The run result: the seed's field names, derived from state alone."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from app.core.recovery_report import recovery_json
from app.core.roadmap import Roadmap
from app.core.state import RunState, TaskState


def run_result(s: RunState) -> dict[str, Any]:
    # The roadmap as the base reads now, built once: a run of many waiting
    # tasks would otherwise rebuild it for each of them.
    roadmap = functools.cache(s.effective_roadmap) if s.roadmap is not None else None
    results = [_task_result(s, t, roadmap) for t in s.tasks.values()]
    assessments = [
        {
            "id": t.id,
            "stage": t.stage,
            "status": t.status,
            "classification": t.assessment.classification,
        }
        for t in s.tasks.values()
        if t.assessment is not None
    ]
    salvages = [
        {"id": t.id, "branch": t.branch, **t.salvage.model_dump(mode="json")}
        for t in s.tasks.values()
        if t.salvage is not None
    ]
    halted = s.stop.reason if s.stop is not None else None
    if s.recovery.halt is not None:
        halted = s.recovery.halt + (f"; also halted: {halted}" if halted else "")
    recovery = recovery_json(s)
    return {
        "runId": s.run_id,
        "base": s.base,
        "dryRun": s.config.dry_run,
        "processed": list(s.landed),
        "results": results,
        "assessments": assessments,
        "salvages": salvages,
        "moves": list(s.moves),
        "remediation": s.remediation,
        "halted": halted,
        "faultMetrics": s.metrics.to_json(),
        "recovery": recovery,
        "summary": _summary(s, results, assessments, salvages, halted, recovery),
    }


def _task_result(
    s: RunState, t: TaskState, roadmap: Callable[[], Roadmap] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": t.id,
        "kind": t.unit,
        "branch": t.branch,
        "status": t.status,
        "stage": t.stage,
        "detail": t.detail or _waiting_detail(s, t, roadmap),
        "attempts": dict(t.attempts),
        "verdict": t.verdict,
    }
    if t.unit == "addendum":
        out["subtasks"] = list(t.subtasks)
    if t.forced:
        out["forced"] = True
    if t.landed_sha:
        out["sha"] = t.landed_sha
    if t.assessment is not None:
        out["assessment"] = t.assessment.model_dump(mode="json", by_alias=True)
    if t.salvage is not None:
        out["salvage"] = t.salvage.model_dump(mode="json")
    return out


def _waiting_detail(s: RunState, t: TaskState, effective: Callable[[], Roadmap] | None) -> str:
    if t.status != "pending" or effective is None:
        return ""
    if t.id in s.recovery.held:
        held = f"held: surviving branch {s.recovery.held[t.id]}"
        d = s.recovery.decisions.get(t.id)
        if d is None:
            return held
        return f"{held}; recovery reported {d.classification}" + (
            f" ({d.reason})" if d.reason else ""
        )
    if t.id in s.excluded:
        return "held: kept out of this run's selection by the launcher (for example `--task`)"
    roadmap = effective()
    task = roadmap.get(t.subtasks[0] if t.unit == "addendum" else t.id)
    missing = roadmap.missing(task) if task is not None else []
    if missing:
        return "waiting for " + ", ".join(missing)
    if s.config.dry_run:
        return "dry run: would start"
    if s.stop is not None:
        return "not started: the run stopped"
    return "not started"


def _summary(
    s: RunState,
    results: list[dict[str, Any]],
    assessments: list[dict[str, Any]],
    salvages: list[dict[str, Any]],
    halted: str | None,
    recovery: dict[str, Any] | None,
) -> str:
    parts = [
        f"{len(s.landed)} of {len(results)} task(s) landed "
        f"(maxParallel {s.config.max_parallel}): "
        + (", ".join(f"{r['id']}={r['status']}" for r in results) or "nothing to do")
    ]
    if assessments:
        parts.append(f"assessed {len(assessments)} failed branch(es)")
    committed = sum(1 for v in salvages if v["committed"])
    if committed:
        parts.append(f"salvaged artefacts on {committed} branch(es)")
    if recovery is not None:
        parts.append(
            f"recovery: {recovery['candidates']} candidate(s), {recovery['assessed']} assessed, "
            f"{recovery['resumed']} resumed, {len(recovery['unresolved'])} unresolved"
        )
    parts.append(f"halted: {halted}" if halted else "clean stop")
    return " | ".join(parts)
