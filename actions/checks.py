"""Turn what the runner observed into the verdict's checks and fault class.

A stage passes on its marker (invariant 2); the exit code is recorded beside
it: skipped when the marker was seen, judged only when it was not (seed 003).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from pydantic import ValidationError

from actions.proctree import ProcessResult
from actions.stream import MarkerScanner
from app.core.verdict import (
    AssessmentReport,
    Check,
    InfraFault,
    ReviewReport,
)

MAX_REPORT_BYTES = 1 << 20


def marker_check(scanner: MarkerScanner, result: ProcessResult, deadline: float) -> Check:
    if scanner.seen:
        return Check(
            name="completion_marker",
            status="passed",
            reason="the completion marker for this attempt's token was detected",
        )
    if scanner.foreign:
        reason = (
            "the agent printed a completion marker for another token ("
            + ", ".join(scanner.foreign)
            + "), not for this attempt's"
        )
    elif result.timed_out:
        reason = f"the deadline of {deadline:g}s expired before the completion marker"
    elif result.spawn_error:
        reason = f"the agent could not be started: {result.spawn_error}"
    else:
        reason = "the agent exited before ODW detected the completion marker"
    return Check(name="completion_marker", status="failed", reason=reason)


def _ended(result: ProcessResult, deadline: float) -> str:
    if result.timed_out:
        return f"deadline of {deadline:g}s expired; the process tree was sent " + " then ".join(
            result.signals_sent
        )
    if result.signal is not None:
        return f"the agent was killed by {signal.Signals(result.signal).name}"
    if result.exit_code == 0:
        return "the agent exited cleanly (code 0)"
    return f"the agent exited with code {result.exit_code}"


def exit_check(result: ProcessResult, deadline: float, *, marker_seen: bool) -> Check:
    reason = _ended(result, deadline)
    if result.stragglers:
        reason += f"; {result.stragglers} leftover process(es) were terminated"
    if result.cleanup_failed:
        return Check(
            name="exit_code",
            status="failed",
            code=result.exit_code,
            reason=f"{reason}; cleanup failed, still alive: "
            + (
                ", ".join(str(p) for p in result.survivors)
                or "processes in the attempt's cgroup (it could not be removed)"
            ),
        )
    if marker_seen:
        return Check(
            name="exit_code",
            status="skipped",
            code=result.exit_code,
            reason=f"completion marker detected; exit code recorded but not consulted: {reason}",
        )
    if result.spawn_error:
        reason = result.spawn_error
    return Check(
        name="exit_code",
        status="passed" if result.exit_code == 0 else "failed",
        code=result.exit_code,
        reason=reason,
    )


SIGNAL_EXIT = 128  # a shell reports death by signal N as 128 + N


def fault_of(result: ProcessResult, *, marker_seen: bool) -> InfraFault | None:
    """Infra faults carry no evidence about the branch; the core retries them in place."""
    if result.cleanup_failed:
        return "cleanup-failed"
    if marker_seen:
        return None
    if result.timed_out:
        return "timeout"
    if result.spawn_error or result.exit_code in (126, 127):
        return "spawn-failed"
    if result.signal is not None or result.exit_code > SIGNAL_EXIT:
        return "crash"  # the process died; exiting non-zero by itself is a product failure
    return None


def read_report(
    path: Path, stage: str
) -> tuple[Check, ReviewReport | None, AssessmentReport | None]:
    """Validate what a deciding stage wrote to ODW_REPORT_FILE (the schema gate)."""

    def failed(reason: str) -> tuple[Check, None, None]:
        return Check(name="report_schema", status="failed", reason=reason), None, None

    try:
        if path.is_symlink() or not path.is_file():
            return failed("no report was written to ODW_REPORT_FILE")
        if path.stat().st_size > MAX_REPORT_BYTES:
            return failed(f"the report is larger than {MAX_REPORT_BYTES} bytes")
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return failed(f"the report is not valid JSON: {exc}")
    try:
        if stage == "assess":
            assessment = AssessmentReport.model_validate(data)
            ok = Check(
                name="report_schema",
                status="passed",
                reason=f"assessment: {assessment.classification}",
            )
            return ok, None, assessment
        review = ReviewReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "report"
        return failed(f"the report does not match the schema: {where}: {first['msg']}")
    ok = Check(
        name="report_schema",
        status="passed",
        reason=f"decision: {review.decision}, {len(review.findings)} finding(s)",
    )
    return ok, review, None
