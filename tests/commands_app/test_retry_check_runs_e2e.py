"""A retry end to end, by the buttons of check runs: each new attempt of the
task, and the run it resumes, gets a new check run; the completed ones stay as
they ended, since GitHub never reopens a completed check run (the fake refuses
it: `tests/fakegithub/checkruns.py`); the buttons of the newest work."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.apphost.views import RUN_CHECK
from tests.apphost.harness import REPO, Service, explain, wait_until
from tests.commands_app.test_commands_e2e import (
    ODW,
    ROADMAP,
    RUNS,
    events_of,
    task_status,
)
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.checkruns import reopening_patches

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

TASK_CHECK = "ODW · 1.1"


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW}


def named(fake: FakeGitHub, name: str) -> list[s.CheckRun]:
    return sorted((c for c in fake.check_runs.values() if c.name == name), key=lambda c: c.id)


def failed_check(fake: FakeGitHub, after: int = 0) -> s.CheckRun | None:
    """1.1's newest check run, once one newer than `after` failed and shows its buttons."""
    runs = named(fake, TASK_CHECK)
    last = runs[-1] if runs and runs[-1].id > after else None
    return last if last and last.conclusion == "failure" and last.actions else None


def test_each_retry_gets_a_new_check_run_whose_buttons_work(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    agent_script: Any,
) -> None:
    # 1.1's implement stage exits 3 twice: failed, retried, failed again, retried, landed.
    agent_script.write_text(json.dumps({"1.1": {"implement": ["exit:3", "exit:3"]}}))
    fake.add_collaborator(REPO, "maintainer", "write")
    service.run_app()
    store = service.store()
    RUNS.pop(id(store), None)
    try:
        first = wait_until("1.1's first failed check", lambda: failed_check(fake), timeout=180)
        fake.click_check_run_action(first.id, "retry", "maintainer")
        second = wait_until("a newer check run that failed", lambda: failed_check(fake, first.id))
        assert (first.status, first.conclusion) == ("completed", "failure")
        # A retry starts over on a fresh branch head; the click's check holds on it.
        assert second.external_id == first.external_id and second.head_sha != first.head_sha
        # The newest check run's button is the one that works now.
        fake.click_check_run_action(second.id, "retry", "maintainer")
        try:
            wait_until("1.1 to land", lambda: task_status(store, "1.1") == "landed", timeout=240)
            wait_until("the views", lambda: named(fake, TASK_CHECK)[-1].conclusion == "success")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{explain(service, actions)}") from None
        assert [e["by"] for e in events_of(store, "task-retried")] == ["maintainer"] * 2
    finally:
        store.close()

    checks = named(fake, TASK_CHECK)
    # Each attempt's check runs stay as they ended: the two failures, and the
    # newest, which landed. Those left behind on an older branch head are not
    # shown on the pull request any more and are not PATCHed to `cancelled`.
    newest_head = checks[-1].head_sha
    assert all(c.status == "completed" for c in checks if c.head_sha == newest_head)
    assert not [c for c in checks if c.conclusion == "cancelled"]
    assert (first.status, first.conclusion) == ("completed", "failure")
    assert (second.status, second.conclusion) == ("completed", "failure")
    assert checks[-1].conclusion == "success" and checks[-1].id > second.id
    assert len({c.external_id for c in checks}) == 1
    # The run check stopped (action required) twice and resumed each time: new ones.
    conclusions = [c.conclusion for c in named(fake, RUN_CHECK)]
    assert len(conclusions) >= 3, conclusions
    assert conclusions[:2] == ["action_required", "action_required"], conclusions
    # No request ever sent a status or conclusion to a completed check run.
    assert reopening_patches(fake.check_runs.values()) == []
    # The pull request's status comment links the newest task check run.
    pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
    comment = next(
        c for c in fake.comments.values() if c.number == pull.number and "odw:status" in c.body
    )
    assert f"/runs/{checks[-1].id})" in comment.body
