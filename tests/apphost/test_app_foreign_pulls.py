"""Pull requests ODW did not open never change a task (issue 25, item 2).

A fork's pull request whose head branch is named like a task branch, closed
by its author or merged by a maintainer, and a writer's pull request opened
from the task branch itself: the task, its run and its roadmap box stay as
ODW's own work leaves them, and ODW never adopts the writer's pull request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.apphost.api import MERGED
from app.apphost.runs import RunKey, find_open
from app.apphost.step import load_state
from app.core.roadmap_edit import is_ticked
from app.store import Store
from tests.apphost.harness import REPO, Service, explain, results, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ONE = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
FINAL = ("processed", "ignored", "failed", "rejected")


@pytest.fixture
def sample_spec(sample_spec: dict[str, Any]) -> dict[str, Any]:
    return {**sample_spec, "roadmap": ONE}


def hold(actions: LocalActions, stage: str) -> tuple[threading.Event, threading.Event]:
    """Hold task 1.1's `stage` run until released: (held, release)."""
    held, release = threading.Event(), threading.Event()

    def admit(run: s.WorkflowRun) -> bool:
        if run.inputs.get("task") == "1.1" and run.inputs.get("stage") == stage:
            held.set()
            release.wait(120)
        return True

    actions.admit = admit
    return held, release


def settled(store: Store, delivery: s.Delivery) -> Callable[[], bool]:
    def done() -> bool:
        row = store.inbox.get(delivery.id)
        return row is not None and row.status in FINAL

    return done


def closed_delivery(fake: FakeGitHub, number: int) -> s.Delivery:
    return next(
        d
        for d in fake.webhooks.deliveries
        if d.event == "pull_request" and d.action == "closed" and d.payload["number"] == number
    )


def roadmap(repo: s.Repository) -> str:
    return repo.git.git("show", "refs/heads/main:docs/roadmap.md")


def test_a_forks_pull_request_on_the_task_branch_closed_or_merged_changes_nothing(
    fake: FakeGitHub, service: Service, sample: s.Repository, actions: LocalActions
) -> None:
    held, release = hold(actions, "review")
    service.run_app()
    wait_until("1.1 in review", held.is_set, timeout=180)
    store = service.store()
    try:
        installation = store.installations.installation_for_repository(REPO)
        assert installation is not None
        run_id = find_open(store, RunKey(installation, REPO, "main"))
        assert run_id is not None
        # Mallory needs no permission to open a pull request from her fork, nor to
        # close her own; a maintainer merges another one.
        closed = fake.open_pull_as(
            "mallory", REPO, "roadmap-1-1", {"evil.sh": "echo pwned\n"}, from_fork="mallory/demo"
        )
        fake.close_pull_as("mallory", REPO, closed.number)
        merged = fake.open_pull_as(
            "mallory", REPO, "roadmap-1-1", {"evil2.sh": "echo pwned\n"}, from_fork="mallory/demo"
        )
        fake.merge_as("maintainer", REPO, merged.number)
        for number in (closed.number, merged.number):
            wait_until(
                f"#{number}'s close to be handled",
                settled(store, closed_delivery(fake, number)),
                timeout=60,
            )
        state = load_state(store, run_id)
        assert state.tasks["1.1"].status == "running", explain(service, actions)
        assert state.stop is None  # the run was not halted
        assert MERGED not in store.projections.tasks(run_id)
        assert not [e for e in store.outbox.list() if e.kind == "app-tick"]
        assert not is_ticked(roadmap(sample), "1.1")
        wait_until(
            "both pull requests to be logged as ignored",
            lambda: service.log().count("not task 1.1's own pull request") == 2,
            timeout=30,
        )
        assert "comes from mallory/demo, not from octo/demo" in service.log()
    finally:
        release.set()
        store.close()
    # ODW's own work still lands, through its own pull request and push.
    wait_until("1.1 to land", lambda: trailers(sample) == ["1.1"], timeout=240)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    row = results(service)["1.1"]
    assert row["status"] == "landed" and "merged by" not in (row.get("detail") or "")
    assert is_ticked(roadmap(sample), "1.1")


def test_a_writers_pull_request_from_the_task_branch_is_never_adopted(
    fake: FakeGitHub, service: Service, sample: s.Repository, actions: LocalActions
) -> None:
    held, release = hold(actions, "plan")
    service.run_app()
    wait_until("1.1's plan stage", held.is_set, timeout=180)
    fake.add_collaborator(REPO, "writer", "write")
    # A writer opens a pull request from ODW's task branch before ODW does.
    theirs = fake.open_pull_as("writer", REPO, "roadmap-1-1")
    release.set()
    wait_until("1.1 to land", lambda: trailers(sample) == ["1.1"], timeout=240)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    assert results(service)["1.1"]["status"] == "landed", explain(service, actions)
    # Never adopted: not recorded, never edited, commented on or closed by ODW.
    store = service.store()
    try:
        run_id = service.runs()[0]["run"]
        assert store.projections.tasks(run_id)["1.1"].get("pull") != theirs.number
    finally:
        store.close()
    pull = fake.pulls[(REPO, theirs.number)]
    assert (pull.state, pull.body, pull.title) == ("open", "", "writer's change")
    assert not [c for c in fake.comments.values() if c.number == theirs.number]
    assert not [
        r
        for r in fake.requests
        if r["method"] == "PATCH" and r["path"].endswith(f"/pulls/{theirs.number}")
    ]
    assert "was opened by writer, not odw[bot]" in service.log()
