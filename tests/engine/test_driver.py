"""The driver: one loop for every mode; persists before acting; resumes from its log."""

from __future__ import annotations

import pytest

from app.core.config import RunConfig
from app.core.effects import DispatchStage
from app.core.inputs import StartRun
from app.engine.driver import Engine, EngineError, Ports, ScheduledMove, replay
from app.engine.memory import MemoryEventLog
from app.engine.ports import ConcurrencyError, StageCompletion
from app.engine.scripted import (
    Counter,
    ScriptedAssessor,
    ScriptedIntegrator,
    ScriptedSalvager,
    ScriptedStages,
    completion,
)

ROADMAP = (
    "## Phase 1\n- [ ] 1.1.1. A\n- [ ] 1.1.2. B. Requires 1.1.1.\n- [ ] 1.2.1. C\n- [ ] 1.2.2. D\n"
)


def _ports(log, stages, counter, script=None) -> Ports:
    script = script or {}
    return Ports(
        log=log,
        stages=stages,
        integrator=ScriptedIntegrator(script),
        assessor=ScriptedAssessor({}),
        salvager=ScriptedSalvager(),
        tokens=counter.token,
        clock=counter.now,
    )


def _start(counter, **config) -> StartRun:
    return StartRun(at=counter.now(), run_id="run-1", roadmap=ROADMAP, config=RunConfig(**config))


class LastInFirstOut(ScriptedStages):
    """Completes the most recently started attempt first: out of order on purpose."""

    def __init__(self) -> None:
        super().__init__({})
        self._stack: list[StageCompletion] = []

    def start(self, dispatch: DispatchStage) -> None:
        self.started.append(dispatch)
        self._stack.append(completion(dispatch, "pass"))

    def wait(self, timeout):
        return [self._stack.pop()]


class Hanging(ScriptedStages):
    """Starts attempts and never finishes them: the process running the run dies."""

    def wait(self, timeout):
        raise KeyboardInterrupt


def test_out_of_order_completions_land_everything():
    counter = Counter()
    log = MemoryEventLog()
    engine = Engine(_ports(log, LastInFirstOut(), counter))
    engine.open(_start(counter, maxParallel=3))
    result = engine.run()
    assert sorted(result["processed"]) == ["1.1.1", "1.1.2", "1.2.1", "1.2.2"]
    assert result["halted"] is None
    assert replay(log.load()) == engine.state


def test_same_scenario_gives_the_same_log():
    def once():
        counter = Counter()
        log = MemoryEventLog()
        engine = Engine(_ports(log, ScriptedStages({"1.2.1": {"plan": ["crash"]}}), counter))
        engine.open(_start(counter, maxParallel=2))
        engine.run()
        return log.load()

    assert once() == once()


def test_resume_replays_the_log_reports_lost_attempts_and_does_not_rerun_landed_work():
    counter = Counter()
    log = MemoryEventLog()
    first = Engine(_ports(log, ScriptedStages({}), counter))
    first.open(_start(counter, maxParallel=1))
    # run until 1.1.1 lands and 1.1.2 is mid-flight, then "crash" the process
    while "1.1.1" not in first.state.landed or not first.state.live_attempts():
        assert first.step()
    stored = len(log)
    lost = {(t.id, a.stage) for t, a in first.state.live_attempts()}
    assert lost

    stages = ScriptedStages({})
    second = Engine(_ports(log, stages, counter))
    state = second.open()
    assert len(log) == stored and state.landed == ["1.1.1"]
    result = second.run()
    assert not any(d.task == "1.1.1" for d in stages.started), "landed work is not re-run"
    assert result["faultMetrics"]["infraRetries"] == len(lost)
    assert sorted(result["processed"]) == ["1.1.1", "1.1.2", "1.2.1", "1.2.2"]
    assert replay(log.load()) == second.state


def _interrupt_first_integration(counter: Counter, log: MemoryEventLog) -> None:
    from app.core.effects import Integrate

    class Refuse(ScriptedIntegrator):
        def integrate(self, request: Integrate):
            raise KeyboardInterrupt

    first = Engine(_ports(log, ScriptedStages({}), counter))
    first.open(_start(counter, maxParallel=1))
    first.ports.integrator = Refuse({})
    with pytest.raises(KeyboardInterrupt):
        first.run()


def test_interrupted_integration_reinspects_the_base_then_integrates_again():
    counter = Counter()
    log = MemoryEventLog()
    _interrupt_first_integration(counter, log)

    class Watching(ScriptedIntegrator):
        def __init__(self) -> None:
            super().__init__({})
            self.order: list[str] = []

        def inspect(self, request):
            self.order.append(f"inspect {request.task}")
            return super().inspect(request)

        def integrate(self, request):
            self.order.append(f"integrate {request.task}")
            return super().integrate(request)

    integrator = Watching()
    second = Engine(_ports(log, ScriptedStages({}), counter))
    second.ports.integrator = integrator
    second.open()
    result = second.run()
    assert integrator.order[:2] == ["inspect 1.1.1", "integrate 1.1.1"], "base re-read first"
    first_result = next(r for r in result["results"] if r["id"] == "1.1.1")
    assert first_result["status"] == "landed"


def test_interrupted_integration_found_on_the_base_is_not_repeated():
    from app.core.integration import IntegrationReport

    counter = Counter()
    log = MemoryEventLog()
    _interrupt_first_integration(counter, log)

    class AlreadyThere(ScriptedIntegrator):
        def inspect(self, request):
            return IntegrationReport.landed(sha="abc1234", attempts=0, summary="found")

    integrator = AlreadyThere({})
    second = Engine(_ports(log, ScriptedStages({}), counter))
    second.ports.integrator = integrator
    second.open()
    result = second.run()
    assert all(r.task != "1.1.1" for r in integrator.requests), "landed: never integrated again"
    first_result = next(r for r in result["results"] if r["id"] == "1.1.1")
    assert first_result["status"] == "landed"


def test_log_append_checks_the_expected_version():
    log = MemoryEventLog()
    log.append([{"type": "x"}], 0)
    with pytest.raises(ConcurrencyError):
        log.append([{"type": "y"}], 0)


def test_open_needs_a_start_for_an_empty_log():
    counter = Counter()
    with pytest.raises(EngineError):
        Engine(_ports(MemoryEventLog(), ScriptedStages({}), counter)).open()


def test_scheduled_moves_apply_when_due_or_when_idle():
    counter = Counter()
    log = MemoryEventLog()
    engine = Engine(_ports(log, ScriptedStages({"1.1.1": {"implement": ["no-marker"]}}), counter))
    engine.open(_start(counter, maxParallel=1))
    result = engine.run(
        [ScheduledMove(after=1000, move="retry", task="1.1.1", by="ops", reason="flake")]
    )
    assert result["halted"] is None
    assert result["moves"][0] == {"move": "retry", "task": "1.1.1", "by": "ops", "reason": "flake"}
    assert sorted(result["processed"]) == ["1.1.1", "1.1.2", "1.2.1", "1.2.2"]
