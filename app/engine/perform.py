"""Performing one effect through the ports: the one place both hosts do it.

Local mode's `Engine` and the App's outbox executor call `perform` with their
own ports; the answer is the input the effect's result becomes (None for a
dispatch, whose completion arrives later). An
integration that may already have run (`again=True`: a resumed driver, an
outbox entry claimed a second time) is never repeated blindly: the base is
re-read first and a visible landing is the answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, assert_never

from app.core.assessment import SalvageResult, unassessable
from app.core.effects import Assess, DispatchStage, Effect, Integrate, JudgeGate, Salvage
from app.core.inputs import (
    AssessmentFinished,
    GateJudged,
    Input,
    IntegrationFinished,
    SalvageFinished,
    StageFinished,
)
from app.core.judging import Fault
from app.engine.ports import (
    AssessPort,
    Clock,
    GateJudgePort,
    IntegratePort,
    PortFault,
    SalvagePort,
    StagePort,
)


class EffectPorts(Protocol):
    """The ports an effect needs (the engine's `Ports` has them all)."""

    @property
    def stages(self) -> StagePort: ...
    @property
    def integrator(self) -> IntegratePort: ...
    @property
    def assessor(self) -> AssessPort: ...
    @property
    def salvager(self) -> SalvagePort: ...
    @property
    def judge(self) -> GateJudgePort: ...
    @property
    def clock(self) -> Clock: ...


def perform(effect: Effect, ports: EffectPorts, *, again: bool = False) -> Input | None:
    """Do `effect`; return the input its result is, or None when there is none yet."""
    at = ports.clock
    if isinstance(effect, DispatchStage):
        ports.stages.start(effect)
        return None
    if isinstance(effect, Integrate):
        if again:
            found = ports.integrator.inspect(effect)
            if found is not None:
                return IntegrationFinished(at=at(), task=effect.task, report=found)
        try:
            report = ports.integrator.integrate(effect)
        except PortFault as f:
            return IntegrationFinished(at=at(), task=effect.task, fault=f.fault.detail)
        return IntegrationFinished(at=at(), task=effect.task, report=report)
    if isinstance(effect, Assess):
        return AssessmentFinished(
            at=at(), task=effect.task, assessment=ports.assessor.assess(effect)
        )
    if isinstance(effect, Salvage):
        return SalvageFinished(at=at(), task=effect.task, salvage=ports.salvager.salvage(effect))
    if isinstance(effect, JudgeGate):
        return GateJudged(
            at=at(),
            task=effect.task,
            stage=effect.stage,
            gate=effect.gate,
            decision=ports.judge.judge(effect),
        )
    assert_never(effect)


def gave_up(effect: Effect, error: str, at: datetime) -> Input:
    """The input that tells the core a host gave up performing `effect`.

    Without it the task would wait for an answer that never comes and the run
    would hang with no reason shown. Each answer fails closed: a stage or an
    integration that could not be done is an infrastructure fault (the branch
    is kept, a retry is offered), evidence that could not be read adopts
    nothing, and a gate nobody could judge fails.
    """
    if isinstance(effect, DispatchStage):
        fault = Fault(kind="infra", detail=f"dispatch failed: {error}")
        return StageFinished(
            at=at, task=effect.task, stage=effect.stage, token=effect.token, fault=fault
        )
    if isinstance(effect, Integrate):
        return IntegrationFinished(at=at, task=effect.task, fault=f"integration failed: {error}")
    if isinstance(effect, Assess):
        risk = ["not assessed: the host gave up collecting evidence"]
        return AssessmentFinished(
            at=at, task=effect.task, assessment=unassessable(effect.branch, error, risk)
        )
    if isinstance(effect, Salvage):
        salvage = SalvageResult(
            classification=effect.classification, skipped=True, detail=f"salvage failed: {error}"
        )
        return SalvageFinished(at=at, task=effect.task, salvage=salvage)
    if isinstance(effect, JudgeGate):
        return GateJudged(
            at=at, task=effect.task, stage=effect.stage, gate=effect.gate, decision="fail",
            by="host (the judge could not be asked)",
        )  # fmt: skip
    assert_never(effect)
