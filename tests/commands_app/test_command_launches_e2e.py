"""Commands that launch a run, end to end through `odw serve` and the fake GitHub:
a retry after the task's run ended continues the task's branch in a new run,
and a dry run writes nothing on GitHub but ODW's answer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.apphost import api
from app.apphost.runs import RunKey, find_open
from app.apphost.step import load_state
from app.core.inputs import EndRun
from app.store import Store
from tests.apphost.harness import REPO, Service, wait_until
from tests.commands_app.test_commands_e2e import (
    ODW,
    ROADMAP,
    installation_of,
    replies,
    run_id_of,
    task_status,
)

# `failed`: the fixture of a run whose task 1.1 failed with its branch and pull request.
from tests.commands_app.test_commands_e2e import failed as failed
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW}


def runs_of(store: Store) -> list[str]:
    """Every run the App recorded for the repository, oldest first."""
    key = RunKey(installation_of(store), REPO, "main").to_json()
    views = [v for v in store.projections.runs() if v.data.get("key") == key]
    return [v.run_id for v in sorted(views, key=lambda v: v.run_id)]


def _started(store: Store, run_id: str) -> Any:
    state = load_state(store, run_id)
    return state if state.started else None


def _run_check(fake: FakeGitHub) -> s.CheckRun | None:
    return next((c for c in fake.check_runs.values() if c.name == "ODW · run"), None)


def outbox_settled(store: Store) -> bool:
    return all(e.status in ("done", "dead") for e in store.outbox.list())


def test_a_retry_after_the_run_ended_continues_the_tasks_branch_in_a_new_run(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    failed: Store,
) -> None:
    store = failed
    first = run_id_of(store)
    assert first is not None
    pull = wait_until(
        "1.1's pull request",
        lambda: next((p for p in fake.pulls.values() if p.head == "roadmap-1-1"), None),
    )
    branch_head = sample.git.refs()["refs/heads/roadmap-1-1"]
    # The failed run is closed (the engine's end of a run) with 1.1 failed and
    # its branch kept: a command now finds no open run.
    wait_until("the failure to settle", lambda: outbox_settled(store))
    step = api.submit(store, first, EndRun(at=datetime.now(UTC)))
    assert step.refused is None and any(e["type"] == "run-ended" for e in step.events)
    key = RunKey(installation_of(store), REPO, "main")
    assert find_open(store, key) is None

    fake.comment_as("maintainer", REPO, pull.number, "/odw retry 1.1")
    wait_until("the answer", lambda: replies(fake, pull.number))
    answer = replies(fake, pull.number)[0].body
    assert "> `/odw retry 1.1`" in answer and "the run had ended" in answer, answer

    second = wait_until("a new run", lambda: next((r for r in runs_of(store) if r != first), None))
    state = wait_until("the new run to start", lambda: _started(store, second))
    assert state.config.resume_mode == "continue"
    assert state.config.resume_task_id == "1.1"
    # The new run continued 1.1 from its surviving branch: its first commit is
    # the failed run's branch head, and the task lands (then 1.2 after it).
    survivor = state.recovery.survivors.get("roadmap-1-1")
    assert survivor is not None and survivor.head == branch_head, state.recovery.survivors
    wait_until(
        "1.1 and 1.2 to land in the new run",
        lambda: (
            {t: load_state(store, second).tasks[t].status for t in ("1.1", "1.2")}
            == {"1.1": "landed", "1.2": "landed"}
        ),
        timeout=240,
    )
    decision = load_state(store, second).recovery.decisions.get("1.1")
    assert decision is not None and decision.branch == "roadmap-1-1", decision
    assert decision.action == "resume", decision
    assert task_status(store, "1.1") == "failed"  # the first run's record is unchanged


def test_an_app_dry_run_writes_nothing_but_odws_answer(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
) -> None:
    fake.add_collaborator(REPO, "maintainer", "write")
    refs = sample.git.refs()
    number = fake.open_issue(REPO)
    before = len(fake.requests)
    asked = fake.comment_as("maintainer", REPO, number, "/odw run --dry-run")
    store = service.store()
    try:
        wait_until("the answer", lambda: replies(fake, number))
        run_id = wait_until("the dry run", lambda: next(iter(runs_of(store)), None))
        wait_until("the dry run to end", lambda: load_state(store, run_id).ended)
        wait_until("its views", lambda: outbox_settled(store))
        state = load_state(store, run_id)
    finally:
        store.close()
    assert state.config.dry_run
    answer = replies(fake, number)[0].body
    assert "> `/odw run --dry-run`" in answer and "a dry run" in answer, answer
    assert (fake.bot_login, "eyes") in asked.reactions

    # Nothing on GitHub but the answer: no branch, no pull request, no dispatch,
    # no task check run, no other comment.
    assert sample.git.refs() == refs
    assert [p for p in fake.pulls.values() if p.repo == REPO] == []
    assert fake.runs == {}
    assert {c.name for c in fake.check_runs.values()} <= {"ODW · run"}
    # The run check reports what a real run would start: 1.1 (1.2 waits for it).
    run_check = wait_until("the run check", lambda: _run_check(fake))
    assert run_check.output["title"].startswith("dry run: would start 1.1 ·"), run_check.output
    assert "a run now would start 1.1 (" in run_check.output["summary"]
    assert [c.id for c in fake.comments.values() if c.user == fake.bot_login] == [
        replies(fake, number)[0].id
    ]
    writes = [
        (r["method"], r["path"])
        for r in fake.requests[before:]
        if r["method"] not in ("GET", "HEAD") and not r["path"].endswith("/access_tokens")
    ]
    allowed = (
        f"/repos/{REPO}/issues/comments/{asked.id}/reactions",  # eyes (and rocket)
        f"/repos/{REPO}/issues/{number}/comments",  # the reply
        f"/repos/{REPO}/check-runs",  # the run check
    )
    unexpected = [w for w in writes if not w[1].startswith(allowed)]
    assert unexpected == [], unexpected
    assert any(w[1].endswith(f"/issues/{number}/comments") for w in writes)
