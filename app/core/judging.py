"""Judging one stage attempt from evidence: marker first, exit code beside it.

A stage passes only when the completion marker was seen for this attempt's
token and, for deciding stages, its report is present and schema-valid. The exit
code is recorded as a second check (passed, failed or skipped with a reason).
Faults the port reports (auth, provider, infra) are classified before evidence,
and so is an infrastructure fault the runner recorded on the verdict. An agent
that exits non-zero by itself without the marker is a product failure (`failed`,
not retried), never a fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.pipeline import spec
from app.core.telling import telling_line
from app.core.verdict import EXIT_CLEANUP_FAILED, EXIT_TIMEOUT, Check, Verdict

MARKER_CHECK = "completion_marker"
EXIT_CHECK = "exit_code"
REPORT_CHECK = "report_schema"
GATE_CHECK_PREFIX = "gate:"

FaultKind = Literal["infra", "provider", "auth"]
Outcome = Literal["passed", "changes", "gate", "failed", "infra", "provider", "auth"]


class Fault(BaseModel):
    """What a port reports when an attempt produced no judgeable evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: FaultKind
    detail: str
    status: int | None = None


@dataclass(frozen=True)
class Judgement:
    """The core's reading of one attempt."""

    outcome: Outcome
    checks: tuple[Check, ...]
    detail: str
    gate: str | None = None

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


def judge(stage: str, token: str, verdict: Verdict | None, fault: Fault | None) -> Judgement:
    if fault is not None:
        return _from_fault(fault)
    if verdict is None:
        return Judgement("infra", (), "attempt ended without a verdict")
    if verdict.token != token:
        # Evidence from another attempt proves nothing about this one.
        return Judgement(
            "infra", (), "verdict carries another attempt's token; ignored as evidence"
        )
    exit_check = verdict.check(EXIT_CHECK)
    code = exit_check.code if exit_check is not None else None
    if code in (EXIT_TIMEOUT, EXIT_CLEANUP_FAILED):
        what = "agent deadline exceeded" if code == EXIT_TIMEOUT else "cleanup after deadline"
        return Judgement("infra", _checks(False, code, None), f"{what} (exit {code})")
    if verdict.fault is not None:
        # The runner saw the attempt die (or fail to start, or to push): no
        # evidence about the branch either way, so an infra fault, retried.
        exit_note = f" (exit {code})" if code is not None else ""
        return Judgement(
            "infra",
            _checks(False, code, None),
            f"infrastructure fault: {verdict.fault}{exit_note}",
        )
    marker = verdict.check(MARKER_CHECK)
    seen = marker is not None and marker.status == "passed"
    if not spec(stage).agent and marker is not None and marker.status == "skipped":
        # No agent ran, so there is no marker: the runner finishing is the evidence.
        return _agentless(verdict, marker)
    if not seen:
        return _missing_marker(code)
    report_ok: bool | None = None
    if spec(stage).deciding:
        report_ok = verdict.report is not None
        if not report_ok:
            return Judgement(
                "infra",
                _checks(True, code, False),
                "report missing or not schema-valid (schema retries exhausted)",
                gate="schema",
            )
    checks = _checks(True, code, report_ok)
    gate = _first_gate_failure(verdict)
    if gate is not None:
        gate_id, reason = gate
        checks += (Check(name=GATE_CHECK_PREFIX + gate_id, status="failed", reason=reason),)
        return Judgement("gate", checks, reason, gate=gate_id)
    if verdict.report is not None and verdict.report.decision == "changes":
        reasons = [f.summary for f in verdict.report.findings] or ["changes requested"]
        return Judgement("changes", checks, "; ".join(reasons), gate="review")
    return Judgement("passed", checks, "completion marker seen")


def _agentless(verdict: Verdict, marker: Check) -> Judgement:
    checks: tuple[Check, ...] = (marker,)
    exit_check = verdict.check(EXIT_CHECK)
    if exit_check is not None:
        checks += (exit_check,)
    gate = _first_gate_failure(verdict)
    if gate is not None:
        gate_id, reason = gate
        checks += (Check(name=GATE_CHECK_PREFIX + gate_id, status="failed", reason=reason),)
        return Judgement("gate", checks, reason, gate=gate_id)
    return Judgement("passed", checks, marker.reason or "the runner finished the stage")


def _from_fault(fault: Fault) -> Judgement:
    detail = fault.detail
    if fault.kind == "provider" and fault.status is not None:
        detail = f"{detail} (HTTP {fault.status})"
    return Judgement(fault.kind, (), detail)


def _missing_marker(code: int | None) -> Judgement:
    if code == 0:
        why = "agent exited cleanly but did not emit the completion marker"
    elif code is None:
        why = "agent ended without the completion marker and no exit code"
    else:
        why = f"agent exited with code {code} without the completion marker"
    return Judgement("failed", _checks(False, code, None), why, gate="marker")


def _checks(seen: bool, code: int | None, report_ok: bool | None) -> tuple[Check, ...]:
    marker = Check(
        name=MARKER_CHECK,
        status="passed" if seen else "failed",
        reason="completion marker seen for this attempt's token"
        if seen
        else "agent exited before the completion marker was detected",
    )
    if seen:
        exit_check = Check(
            name=EXIT_CHECK,
            status="skipped",
            reason="marker decides; exit code recorded only",
            code=code,
        )
    elif code == 0:
        exit_check = Check(
            name=EXIT_CHECK, status="passed", reason="agent exited cleanly (code 0)", code=0
        )
    elif code is None:
        exit_check = Check(name=EXIT_CHECK, status="skipped", reason="no exit code recorded")
    else:
        exit_check = Check(
            name=EXIT_CHECK, status="failed", reason=f"agent exited with code {code}", code=code
        )
    out: tuple[Check, ...] = (marker, exit_check)
    if report_ok is not None:
        out += (
            Check(
                name=REPORT_CHECK,
                status="passed" if report_ok else "failed",
                reason="report is schema-valid" if report_ok else "report missing or invalid",
            ),
        )
    return out


def _first_gate_failure(verdict: Verdict) -> tuple[str, str] | None:
    for c in verdict.checks:
        if c.name.startswith(GATE_CHECK_PREFIX) and c.status == "failed":
            return c.name[len(GATE_CHECK_PREFIX) :], c.reason or "gate failed"
    for g in verdict.gates:
        if g.status == "failed":
            return "build", f"{g.command} exited {g.code}: {telling_line(g.tail)}".rstrip(": ")
    return None


def manual_checks(by: str, reason: str) -> tuple[Check, ...]:
    """A manual pass replaces every automatic check with one honest line."""
    return (
        Check(
            name="manual",
            status="passed",
            reason=f"marked complete by {by}: no verification was performed ({reason})",
        ),
    )
