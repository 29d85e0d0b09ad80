"""A gate that fails the same way until its budget is spent, end to end on the
fake GitHub: the failed task's check run offers `/odw recover 1.1` first (its
button is "Continue") and a rearm with the gate's budget raised; following the
first continues the kept work at the stage that failed instead of paying for a
new plan, and the reply says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.apphost.harness import REPO, Service, explain, wait_until
from tests.commands_app.test_commands_e2e import (
    ROADMAP,
    events_of,
    replies,
    run_state,
    task_status,
)
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


@pytest.fixture
def flag(tmp_path: Path) -> Path:
    """While this file exists the gate fails, always the same way."""
    path = tmp_path / "gate-fails"
    path.write_text("")
    return path


@pytest.fixture
def sample_spec(flag: Path) -> dict[str, Any]:
    odw = {
        "gates": [f"test ! -e {flag}"],
        "identity": {"name": "odw-runner", "email": "odw-runner@example.com"},
        "config": {"maxParallel": 1, "assessPartialBranches": False},
    }
    return {"roadmap": ROADMAP, "odw": odw}


def stages_after(store: Any, kind: str) -> list[str]:
    """The stages 1.1 dispatched after the first `kind` event, in order."""
    state = run_state(store)
    assert state is not None
    rows = store.events.load(state.run_id)
    at = next(i for i, e in enumerate(rows) if e["type"] == kind)
    return [e["stage"] for e in rows[at:] if e["type"] == "stage-dispatched" and e["task"] == "1.1"]


def test_following_the_suggested_command_continues_the_kept_work(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    flag: Path,
) -> None:
    fake.add_collaborator(REPO, "maintainer", "write")
    service.run_app()
    store = service.store()
    try:
        try:
            wait_until("1.1 to fail at gates", lambda: task_status(store, "1.1") == "failed", 240)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{explain(service, actions)}") from None
        state = run_state(store)
        t = state.tasks["1.1"]
        # The runner runs the gates after implement too: they fail there, the same
        # way each time, until the gate's budget is spent.
        assert t.stage == "implement" and "budget exhausted" in t.detail
        plans_before = t.attempts["plan"]

        def failed_check() -> s.CheckRun | None:
            runs = [c for c in fake.check_runs.values() if c.name == "ODW · 1.1"]
            last = runs[-1] if runs else None
            return last if last and last.conclusion == "failure" and last.actions else None

        check = wait_until("1.1's failed check run with buttons", failed_check)
        # The move that fits a product failure comes first: in the summary's
        # next moves and on the first button.
        summary = check.output.get("summary") or ""  # (the title is cut: another item's)
        assert "`/odw recover 1.1` — continue from the kept work on `roadmap-1-1`" in summary
        first = check.actions[0]
        assert (first["identifier"], first["label"]) == ("recover", "Continue")
        assert "`/odw rearm 1.1 gateRetryBudget.build=" in summary

        flag.unlink()  # the flake is gone (or someone fixed it on the branch)
        pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
        fake.comment_as("maintainer", REPO, pull.number, "/odw recover 1.1")
        wait_until("the answer", lambda: replies(fake, pull.number))
        answer = replies(fake, pull.number)[0].body
        assert (
            "continuing 1.1 from its kept work on `roadmap-1-1` at implement "
            "(its ExecPlan says `Status: COMPLETE`, but implement is where it failed)"
        ) in answer
        assert "Not done" not in answer and ".." not in answer

        try:
            wait_until("1.1 to land", lambda: task_status(store, "1.1") == "landed", 240)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{explain(service, actions)}") from None
        after = stages_after(store, "task-recovered")
        assert after[:2] == ["implement", "gates"], after
        assert "plan" not in after and "design-review" not in after, after
        assert run_state(store).tasks["1.1"].attempts["plan"] == plans_before
        assert events_of(store, "task-retried") == []
    finally:
        store.close()
