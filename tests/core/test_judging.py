"""Judging an attempt: table-driven over the evidence a runner can leave."""

from __future__ import annotations

import pytest

from app.core.judging import Fault, judge
from app.core.verdict import Check, GateResult, ReviewReport, Verdict

TOKEN = "attempt-token-1"


def _verdict(
    stage="implement", marker="passed", code=0, report=None, checks=(), gates=(), token=TOKEN
):
    base = [
        Check(name="completion_marker", status=marker),
        Check(name="exit_code", status="passed", code=code),
    ]
    return Verdict(
        stage=stage,
        task="1.1.1",
        token=token,
        passed=marker == "passed",
        checks=base + list(checks),
        gates=list(gates),
        report=report,
    )


CASES = [
    ("marker", _verdict(), None, "passed", None),
    ("clean-exit-no-marker", _verdict(marker="failed"), None, "failed", "marker"),
    ("nonzero-no-marker", _verdict(marker="failed", code=2), None, "failed", "marker"),
    ("timeout", _verdict(marker="failed", code=124), None, "infra", None),
    ("cleanup-failed", _verdict(marker="passed", code=125), None, "infra", None),
    ("other-token", _verdict(token="other-token-9"), None, "infra", None),
    ("no-verdict", None, None, "infra", None),
    ("crash", None, Fault(kind="infra", detail="runner lost"), "infra", None),
    ("provider", None, Fault(kind="provider", detail="overloaded", status=529), "provider", None),
    ("auth", None, Fault(kind="auth", detail="401"), "auth", None),
    (
        "gate-check",
        _verdict(checks=[Check(name="gate:contract", status="failed", reason="x")]),
        None,
        "gate",
        "contract",
    ),
    (
        "gate-command",
        _verdict(
            gates=[GateResult(command="make test", code=1, status="failed", tail="E   1 failed")]
        ),
        None,
        "gate",
        "build",
    ),
    ("review-no-report", _verdict(stage="review"), None, "infra", "schema"),
    (
        "review-approve",
        _verdict(stage="review", report=ReviewReport(decision="approve")),
        None,
        "passed",
        None,
    ),
    (
        "review-changes",
        _verdict(stage="review", report=ReviewReport(decision="changes")),
        None,
        "changes",
        "review",
    ),
]


@pytest.mark.parametrize(
    ("verdict", "fault", "outcome", "gate"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_judge(verdict, fault, outcome, gate):
    stage = verdict.stage if verdict is not None else "implement"
    j = judge(stage, TOKEN, verdict, fault)
    assert (j.outcome, j.gate) == (outcome, gate)
    assert j.detail


def test_fault_outranks_evidence():
    assert judge("implement", TOKEN, _verdict(), Fault(kind="auth", detail="x")).outcome == "auth"


def _gates_verdict(marker: str, gates: list[GateResult]) -> Verdict:
    return Verdict(
        stage="gates",
        task="1.1.1",
        token="tok-gates-1",
        passed=all(g.status == "passed" for g in gates),
        checks=[
            Check(name="completion_marker", status=marker, reason="no agent at this stage"),
            Check(name="exit_code", status="skipped", reason="no agent process"),
        ],
        gates=gates,
    )


@pytest.mark.parametrize(
    ("gates", "outcome"),
    [
        ([GateResult(command="make test", code=0, status="passed")], "passed"),
        ([GateResult(command="make test", code=2, status="failed", tail="boom")], "gate"),
    ],
    ids=["gates-pass", "gate-fails"],
)
def test_agentless_gates_stage_is_judged_by_its_gates(gates, outcome) -> None:
    j = judge("gates", "tok-gates-1", _gates_verdict("skipped", gates), None)
    assert j.outcome == outcome
    assert j.checks[0].status == "skipped"


def test_a_skipped_marker_does_not_pass_an_agent_stage() -> None:
    v = _gates_verdict("skipped", []).model_copy(update={"stage": "implement"})
    assert judge("implement", "tok-gates-1", v, None).outcome == "failed"
