"""Narrow ports the driver executes the core's effects through.

Each port is owned by the driver and says only what the driver needs. Stage
execution is asynchronous: `start` returns at once and completions arrive later
through `wait`, in any order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from app.core.assessment import Assessment, SalvageResult
from app.core.effects import Assess, DispatchStage, Integrate, JudgeGate, Salvage
from app.core.integration import IntegrationReport
from app.core.judging import Fault
from app.core.verdict import Verdict

TokenSource = Callable[[], str]
Clock = Callable[[], datetime]
JudgeDecision = Literal["continue", "recover", "fail"]


class PortFault(Exception):
    """An adapter could not produce evidence (process died, runner lost, 429...)."""

    def __init__(
        self, kind: Literal["infra", "provider", "auth"], detail: str, status: int | None = None
    ):
        super().__init__(detail)
        self.fault = Fault(kind=kind, detail=detail, status=status)


class ConcurrencyError(RuntimeError):
    """The log moved on since it was read: another writer appended first.

    The one such error: the in-memory log and the store's log both raise it.
    `actual` is the version found, None when a racing insert was refused.
    """

    def __init__(self, expected: int, actual: int | None, *, run_id: str | None = None) -> None:
        self.run_id = run_id
        self.expected = expected
        self.actual = actual
        found = "a concurrent append" if actual is None else f"version {actual}"
        where = f"run {run_id}: " if run_id else ""
        super().__init__(f"{where}expected version {expected}, found {found}")


@dataclass(frozen=True)
class StageCompletion:
    """One attempt ended: a verdict, or a fault when no verdict exists."""

    task: str
    stage: str
    token: str
    verdict: Verdict | None = None
    fault: Fault | None = None


@dataclass(frozen=True)
class LiveAttempt:
    """An attempt the log says was dispatched and has not been judged."""

    key: str
    task: str
    stage: str
    lane: str
    attempt: int
    token: str


class StagePort(Protocol):
    def start(self, dispatch: DispatchStage) -> None:
        """Begin one attempt; must return without waiting for it."""

    def wait(self, timeout: float | None) -> list[StageCompletion]:
        """Block until at least one attempt ends or `timeout` passes."""

    def recover(self, attempts: Sequence[LiveAttempt]) -> list[StageCompletion]:
        """After a restart: re-adopt what still runs, report the rest.

        An attempt whose process is gone comes back as an infra fault; one still
        running is adopted and later reported through `wait`.
        """


class IntegratePort(Protocol):
    def integrate(self, request: Integrate) -> IntegrationReport:
        """Land the branch; raise PortFault when the integrator itself died."""

    def inspect(self, request: Integrate) -> IntegrationReport | None:
        """After a crash: re-read the base; a report only if the task visibly landed."""


class AssessPort(Protocol):
    def assess(self, request: Assess) -> Assessment: ...


class SalvagePort(Protocol):
    def salvage(self, request: Salvage) -> SalvageResult: ...


class GateJudgePort(Protocol):
    def judge(self, request: JudgeGate) -> JudgeDecision: ...


class EventLog(Protocol):
    def load(self) -> list[dict[str, Any]]:
        """Every stored event as plain JSON, in order."""

    def append(self, events: Sequence[dict[str, Any]], expected_version: int) -> int:
        """Append after exactly `expected_version` events; return the new version.

        Raises ConcurrencyError when the log holds a different number of events.
        """


class AllowOneReset:
    """The default gate judge: CONTINUE (one reset); a second exhaustion is terminal."""

    def judge(self, request: JudgeGate) -> JudgeDecision:
        return "continue"
