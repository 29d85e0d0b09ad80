"""Scripted ports for rehearsals: outcomes consumed in order, everything else passes.

Deterministic by construction: attempts complete first-started, first-finished,
tokens and time come from counters.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from app.core.assessment import Assessment, Classification, SalvageResult
from app.core.effects import Assess, DispatchStage, Integrate, Salvage
from app.core.integration import IntegrationReport
from app.core.judging import EXIT_CHECK, GATE_CHECK_PREFIX, MARKER_CHECK, Fault
from app.core.naming import execplan_path
from app.core.pipeline import spec
from app.core.verdict import EXIT_TIMEOUT, Check, Finding, ReviewReport, Verdict
from app.engine.ports import LiveAttempt, PortFault, StageCompletion

OUTCOME = re.compile(
    r"^(?:pass|approve|no-marker|crash|timeout|schema-invalid|auth|conflict"
    r"|exit:-?\d+|provider:\d{3}|gate:(?:marker|schema|build|contract|static|review):.+"
    r"|changes:.+)$",
    re.S,
)
Script = dict[str, dict[str, list[str]]]


class Counter:
    """Tokens and time from counters: the same scenario always yields the same log."""

    def __init__(self, start: datetime | None = None) -> None:
        self._n = 0
        self._t = 0
        self._start = start or datetime(2024, 1, 1, tzinfo=UTC)

    def token(self) -> str:
        self._n += 1
        return f"sim-token-{self._n:06d}"

    def now(self) -> datetime:
        self._t += 1
        return self._start + timedelta(seconds=self._t)


class ScriptedStages:
    """Stage attempts whose outcomes are read from a script when they start."""

    def __init__(self, script: Script) -> None:
        self._script = {t: {s: deque(ws) for s, ws in st.items()} for t, st in script.items()}
        self._running: deque[StageCompletion] = deque()
        self.started: list[DispatchStage] = []

    def _next(self, task: str, stage: str) -> str:
        words = self._script.get(task, {}).get(stage)
        return words.popleft() if words else "pass"

    def start(self, dispatch: DispatchStage) -> None:
        self.started.append(dispatch)
        word = self._next(dispatch.task, dispatch.stage)
        self._running.append(completion(dispatch, word))

    def wait(self, timeout: float | None) -> list[StageCompletion]:
        if not self._running:
            raise RuntimeError("wait() with no attempt in flight")
        return [self._running.popleft()]

    def recover(self, attempts: Sequence[LiveAttempt]) -> list[StageCompletion]:
        """A fresh rehearsal process knows no attempt: each one's runner was lost."""
        return [
            StageCompletion(
                a.task,
                a.stage,
                a.token,
                fault=Fault(kind="infra", detail="runner lost: the attempt never completed"),
            )
            for a in attempts
        ]


def completion(d: DispatchStage, word: str) -> StageCompletion:
    """The evidence an attempt would leave for one outcome word."""
    if word == "crash":
        return StageCompletion(
            d.task, d.stage, d.token, fault=Fault(kind="infra", detail="agent process crashed")
        )
    if word == "auth":
        return StageCompletion(
            d.task, d.stage, d.token, fault=Fault(kind="auth", detail="authentication failed")
        )
    if word.startswith("provider:"):
        status = int(word.split(":", 1)[1])
        return StageCompletion(
            d.task,
            d.stage,
            d.token,
            fault=Fault(kind="provider", detail="provider outage", status=status),
        )
    deciding = spec(d.stage).deciding
    if word == "schema-invalid" and not deciding:
        return StageCompletion(
            d.task,
            d.stage,
            d.token,
            fault=Fault(
                kind="infra", detail="stage output did not satisfy the schema after retries"
            ),
        )
    seen, code, gate = True, 0, None
    report: ReviewReport | None = ReviewReport(decision="approve")
    if word == "no-marker":
        seen = False
    elif word.startswith("exit:"):
        seen, code = False, int(word.split(":", 1)[1])
    elif word == "timeout":
        seen, code = False, EXIT_TIMEOUT
    elif word == "schema-invalid":
        report = None
    elif word.startswith("changes:"):
        reason = word.split(":", 1)[1]
        report = ReviewReport(decision="changes", findings=[Finding(summary=reason)])
    elif word.startswith("gate:"):
        _, gate_id, reason = word.split(":", 2)
        gate = Check(name=GATE_CHECK_PREFIX + gate_id, status="failed", reason=reason)
    checks = [
        Check(name=MARKER_CHECK, status="passed" if seen else "failed"),
        Check(name=EXIT_CHECK, status="passed" if code == 0 else "failed", code=code),
    ]
    if gate is not None:
        checks.append(gate)
    verdict = Verdict(
        stage=d.stage,  # type: ignore[arg-type]
        task=d.task,
        token=d.token,
        passed=seen and gate is None,
        checks=checks,
        branch=d.branch,
        report=report if deciding else None,
    )
    return StageCompletion(d.task, d.stage, d.token, verdict=verdict)


class ScriptedIntegrator:
    """Integration outcomes from the script's `integrate` lists: pass, conflict, crash."""

    def __init__(self, script: Script) -> None:
        self._words = {t: deque(st.get("integrate", [])) for t, st in script.items()}
        self.requests: list[Integrate] = []

    def integrate(self, request: Integrate) -> IntegrationReport:
        self.requests.append(request)
        words = self._words.get(request.task)
        word = words.popleft() if words else "pass"
        if word == "crash":
            raise PortFault("infra", "integrator process crashed")
        if word == "conflict":
            return IntegrationReport(
                ok=False,
                rebased=False,
                attempts=1,
                conflicts=f"rebase of {request.branch} onto {request.base} stopped on conflicts",
            )
        sha = hashlib.sha1(request.key.encode(), usedforsecurity=False).hexdigest()
        return IntegrationReport.landed(sha=sha, attempts=1)

    def inspect(self, request: Integrate) -> IntegrationReport | None:
        return None


class ScriptedAssessor:
    """Classifications from the scenario's `assessments` map; continue-manual otherwise."""

    def __init__(self, classifications: dict[str, Classification]) -> None:
        self._by_task = classifications

    def assess(self, request: Assess) -> Assessment:
        cls = self._by_task.get(request.task, "continue-manual")
        if request.stage == "recovery":
            # A surviving branch: the script vouches for scope and validation only
            # when it says adopt-complete; the risk note reaches the reviewers.
            complete = cls == "adopt-complete"
            return Assessment(
                classification=cls,
                task_scoped=complete,
                validation=["scripted gates passed"] if complete else [],
                residual_risk=["scripted assessment: no agent read the branch"],
                rationale=f"scripted assessment of surviving branch {request.branch}",
            )
        return Assessment(
            classification=cls,
            rationale=f"scripted assessment after {request.stage}: {request.detail}",
            worktree=f"worktrees/{request.branch}",
        )


class ScriptedSalvager:
    """Reports the task's ExecPlan as committed under a deterministic sha."""

    def salvage(self, request: Salvage) -> SalvageResult:
        sha = hashlib.sha1(request.key.encode(), usedforsecurity=False).hexdigest()
        return SalvageResult(
            classification=request.classification,
            committed=[execplan_path(request.task)],
            sha=sha,
            detail="committed dirty ExecPlan artefacts on the task branch",
        )
