"""A state snapshot read back and folded on is the state the whole log folds to.

The snapshot is a cache of the fold: every prefix of rehearsed runs (failures,
gates, tickets, assessments, salvage, survivors, operator moves) is written,
read back, folded to the end and compared with the fold from zero, task order
included (selection walks the tasks in order).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core import events as ev
from app.core.decide import run_over
from app.core.snapshot import SnapshotError, dump_state, load_state
from app.core.state import RunState, apply, fold, started_roadmap
from app.engine.scenario import Scenario, simulate

CHAIN = (
    "## Phase 1\n"
    "- [ ] 1.1.1. First\n"
    "- [ ] 1.1.2. Second. Requires 1.1.1.\n"
    "- [ ] 1.1.3. Third. Requires 1.1.2.\n"
    "- [x] 1.2.1. Independent\n"
    "- [ ] 1.2.1a. Its addendum\n"
    "- [ ] 1.3.1. Another\n"
)
COMPLETE = {
    "clean": True,
    "commits": 2,
    "taskScoped": True,
    "execplan": "Status: COMPLETE\n",
    "validation": ["make test passed at the head"],
}
SCENARIOS: dict[str, dict[str, Any]] = {
    "a failure that stops the run": {
        "config": {"maxParallel": 1},
        "outcomes": {"1.1.1": {"implement": ["no-marker"]}},
    },
    "failure, assessment and a retry": {
        "config": {"maxParallel": 1},
        "outcomes": {"1.1.1": {"implement": ["no-marker"]}},
        "commands": [{"after": 3, "move": "retry", "task": "1.1.1", "by": "ops"}],
    },
    "gates, tickets and infra retries": {
        "config": {"gateRetryBudget": 1},
        "outcomes": {
            "1.1.1": {"gates": ["gate:build:compile"], "implement": ["crash", "pass"]},
            "1.3.1": {"implement": ["gate:build:same"] * 5},
        },
    },
    "halt, rearm and resume": {
        "outcomes": {"1.1.2": {"implement": ["provider:429"]}},
        "commands": [
            {"after": 1, "move": "halt", "by": "ops", "reason": "look"},
            {"after": 2, "move": "resume", "by": "ops"},
            {"after": 4, "move": "rearm", "task": "1.1.2", "overrides": {"stageAttempts": 4}},
        ],
    },
    "a surviving branch resumed": {
        "config": {"resumePartialBranches": True, "resumeMode": "review"},
        "assessments": {"1.1.1": "adopt-complete"},
        "survivors": [{"branch": "roadmap-1-1-1", "evidence": COMPLETE}, {"branch": "wip"}],
    },
}


def _log(scenario: dict[str, Any]) -> list[ev.Event]:
    _, rows, _ = simulate(Scenario.model_validate({"roadmap": CHAIN, **scenario}))
    return [ev.event_from_json(r) for r in rows]


@pytest.mark.parametrize("scenario", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_a_snapshot_at_any_version_folds_on_to_the_state_of_the_whole_log(
    scenario: dict[str, Any],
) -> None:
    events = _log(scenario)
    whole = fold(events)
    assert isinstance(events[0], ev.RunStarted)
    roadmap = started_roadmap(events[0])
    for k in range(1, len(events) + 1):
        state = load_state(dump_state(fold(events[:k])), roadmap)
        assert state.version == k
        for e in events[k:]:
            apply(state, e)
        assert state == whole, f"snapshot at version {k}"
        assert list(state.tasks) == list(whole.tasks)


def test_the_snapshot_leaves_the_roadmap_out() -> None:
    state = fold(_log(SCENARIOS["failure, assessment and a retry"]))
    assert b"Independent" not in dump_state(state)


@pytest.mark.parametrize("data", [b"{", b'{"tasks": 3}', b"[]"], ids=["cut", "wrong", "list"])
def test_a_snapshot_that_does_not_read_back_is_refused(data: bytes) -> None:
    with pytest.raises(SnapshotError):
        load_state(data, fold(_log({})[:1]).roadmap)  # type: ignore[arg-type]


def test_a_stopped_run_is_over_only_where_nobody_can_resume_it() -> None:
    events = _log(SCENARIOS["a failure that stops the run"])
    ended = next(i for i, e in enumerate(events) if isinstance(e, ev.RunEnded))
    stopped = fold(events[:ended])  # failed, assessed, nothing left in flight
    assert stopped.stop is not None
    assert run_over(stopped, stopped_waits=False)
    assert not run_over(stopped, stopped_waits=True)
    assert not run_over(fold(events), stopped_waits=False)  # already ended
    assert not run_over(RunState(), stopped_waits=False)  # not started
    dispatched = next(i for i, e in enumerate(events) if isinstance(e, ev.StageDispatched))
    running = fold(events[: dispatched + 1])
    assert running.live_attempts() and not run_over(running, stopped_waits=False)
