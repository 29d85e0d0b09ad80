"""GitHub Enterprise Server (no `return_run_details`), and a person merging a task PR."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.apphost.harness import CHAIN, ODW_YML, Service, explain, results, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


@pytest.fixture
def ghes(request: pytest.FixtureRequest) -> bool:
    return "ghes" in request.node.name


@pytest.fixture
def sample_spec(request: pytest.FixtureRequest) -> dict[str, Any]:
    roadmap = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n" if "ghes" in request.node.name else CHAIN
    return {"roadmap": roadmap, "odw": ODW_YML}


def test_ghes_without_return_run_details_completes_the_same_run(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    service.run_app()
    wait_until("the task to land", lambda: trailers(sample) == ["1.1"], timeout=180)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    assert results(service)["1.1"]["status"] == "landed", explain(service, actions)
    dispatches = [
        r for r in fake.requests if r["method"] == "POST" and r["path"].endswith("/dispatches")
    ]
    # Each stage: refused with return_run_details (422), sent again without it (204).
    refused = [r for r in dispatches if r["status"] == 422]
    sent = [r for r in dispatches if r["status"] == 204]
    assert len(refused) == len(sent) == len(fake.runs) == len(dispatches) // 2
    assert all((r["body"] or {}).get("return_run_details") for r in refused)
    assert all("return_run_details" not in (r["body"] or {}) for r in sent)


def test_a_task_pr_merged_by_a_person_counts_as_landed(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    held = threading.Event()
    release = threading.Event()

    def hold_reviews(run: s.WorkflowRun) -> bool:
        if run.inputs.get("task") == "1.1" and run.inputs.get("stage") == "review":
            held.set()
            release.wait(120)
        return True

    actions.admit = hold_reviews
    service.run_app()
    wait_until("1.1 in review", held.is_set, timeout=180)
    pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
    fake.merge_as("maintainer", sample.full_name, pull.number)
    wait_until(
        "1.1 to count as landed",
        lambda: results(service)["1.1"]["status"] == "landed",
        timeout=60,
    )
    release.set()
    wait_until("1.2 to land", lambda: "1.2" in trailers(sample), timeout=240)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    rows = results(service)
    assert rows["1.1"]["status"] == rows["1.2"]["status"] == "landed", explain(service, actions)
    assert "merged by maintainer" in rows["1.1"]["detail"]
    assert trailers(sample) == ["1.2"]  # ODW never landed 1.1 itself: the person's merge did
    assert fake.pulls[(sample.full_name, pull.number)].merged
    run_check = [c for c in fake.check_runs.values() if c.name == "ODW · run"][-1]
    assert run_check.conclusion == "success"
