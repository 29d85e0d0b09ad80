"""The core side of the auth preflight: missing permissions fail the run closed."""

from __future__ import annotations

from app.core.config import RunConfig
from app.core.decide import decide
from app.core.effects import DispatchStage
from app.core.inputs import EndRun, StartRun
from app.core.preflight import Missing, Preflight
from app.core.result import run_result
from app.core.state import RunState, apply
from tests.core.runkit import AT, CHAIN

PUSH = Missing(
    permission="contents", level="write", needed_for="push task branches", detail="HTTP 403"
)


def _start(preflight: Preflight | None) -> tuple[RunState, list[object]]:
    state = RunState()
    n = iter(range(1000))
    events, effects = decide(
        state,
        StartRun(at=AT, run_id="r", roadmap=CHAIN, config=RunConfig(), preflight=preflight),
        lambda: f"token-{next(n):06d}",
    )
    for e in events:
        apply(state, e)
    return state, list(effects)


def test_a_failed_auth_preflight_dispatches_nothing_and_reports_blocked() -> None:
    state, effects = _start(Preflight(checked=["read base", "push task branches"], missing=[PUSH]))
    assert not [e for e in effects if isinstance(e, DispatchStage)]
    assert state.recovery.blocked == "auth-preflight-failed: contents: write (push task branches)"
    assert state.stop is not None and state.stop.kind == "auth" and state.stop.hard
    events, effects = decide(state, EndRun(at=AT), lambda: "token-y")
    for e in events:
        apply(state, e)
    assert not [e for e in effects if isinstance(e, DispatchStage)]
    result = run_result(state)
    assert result["recovery"]["blocked"].startswith("auth-preflight-failed")
    assert "grant contents: write (push task branches)" in result["halted"]
    assert "HTTP 403" in result["halted"]


def test_a_passing_preflight_changes_nothing() -> None:
    passed, passed_effects = _start(Preflight(checked=["read base", "push task branches"]))
    _plain, plain_effects = _start(None)
    assert passed.recovery.blocked is None
    dispatched = [(e.task, e.stage) for e in passed_effects if isinstance(e, DispatchStage)]
    assert dispatched == [(e.task, e.stage) for e in plain_effects if isinstance(e, DispatchStage)]
    assert dispatched
