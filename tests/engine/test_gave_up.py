"""What the core hears when a host gives up performing an effect: every answer
fails closed, and the task stops waiting (a run never hangs on a lost effect)."""

from __future__ import annotations

from app.core import events as ev
from app.core.assessment import Assessment
from app.core.effects import Assess, Integrate, JudgeGate, Salvage
from app.core.inputs import AssessmentFinished
from app.engine.perform import gave_up
from tests.core.runkit import AT, Run, of

ERROR = "GitHubError: 502 from GitHub"


def _failed_at_implement() -> tuple[Run, Assess]:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "implement")
    _, effects = run.finish("1.1.1", "no-marker")
    return run, of(Assess, effects)[0]


def test_an_assessment_nobody_could_make_adopts_nothing() -> None:
    run, assess = _failed_at_implement()
    answer = gave_up(assess, ERROR, AT)
    assert answer is not None
    events, _ = run.feed(answer)
    recorded = of(ev.AssessmentRecorded, events)[0].assessment
    assert recorded.classification == "continue-manual"
    assert recorded.evidence_error == ERROR and not recorded.validation
    t = run.state.task("1.1.1")
    assert t.awaiting is None and t.status == "failed"


def test_a_salvage_that_could_not_be_done_commits_nothing_and_says_why() -> None:
    run, assess = _failed_at_implement()
    partial = Assessment(classification="adopt-partial", task_scoped=True)
    _, effects = run.feed(AssessmentFinished(at=AT, task=assess.task, assessment=partial))
    [salvage] = of(Salvage, effects)
    answer = gave_up(salvage, ERROR, AT)
    assert answer is not None
    events, _ = run.feed(answer)
    kept = of(ev.SalvageRecorded, events)[0].salvage
    assert kept.skipped and not kept.committed and ERROR in kept.detail
    t = run.state.task("1.1.1")
    assert t.awaiting is None and t.status == "failed"


def test_a_stage_that_could_not_be_dispatched_is_an_infra_fault_not_a_failure() -> None:
    run = Run(maxParallel=1)
    dispatch = run.live("1.1.1")
    answer = gave_up(dispatch, ERROR, AT)
    assert answer is not None
    events, _ = run.feed(answer)
    fault = of(ev.FaultRecorded, events)[0]
    assert fault.kind == "infra" and ERROR in fault.detail
    t = run.state.task("1.1.1")
    assert t.status == "running"  # an infra fault is retried within its budget
    assert dispatch.token not in [a.token for a in t.live.values()]


def test_an_integration_nobody_could_do_is_an_infra_fault_never_retried() -> None:
    run = Run(maxParallel=1)
    run.drive_to("1.1.1", "review")
    _, effects = run.finish_stage("1.1.1")
    [integrate] = of(Integrate, effects)
    events, _ = run.feed(gave_up(integrate, ERROR, AT))
    fault = of(ev.FaultRecorded, events)[0]
    assert (fault.kind, fault.stage, fault.retried) == ("infra", "integrate", False)
    assert ERROR in fault.detail
    assert run.status("1.1.1") == "infra-fault"


def test_a_gate_nobody_could_judge_fails() -> None:
    run = Run(maxParallel=1, gateRetryBudget={"review": 0}, maxReviewRounds=10)
    run.drive_to("1.1.1", "review")
    run.finish_stage("1.1.1", "changes:missing tests")
    run.drive_to("1.1.1", "review")
    _, effects = run.finish_stage("1.1.1", "changes:missing tests")
    [judge] = of(JudgeGate, effects)
    answer = gave_up(judge, ERROR, AT)
    assert answer is not None
    events, _ = run.feed(answer)
    decided = of(ev.GateJudgeDecided, events)[0]
    assert decided.decision == "fail" and "could not be asked" in decided.by
    assert run.status("1.1.1") == "failed"
