"""Crashes and noise: kill -9 mid-run, duplicate deliveries, foreign workflow runs."""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

import pytest

from tests.apphost.harness import ODW_YML, Service, explain, results, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

TWO = """\
# Roadmap

- [ ] 1.1. Add a greeting
- [ ] 1.2. Add a changelog
"""


ONE = """\
# Roadmap

- [ ] 1.1. Add a greeting
"""


@pytest.fixture
def sample_spec(request: pytest.FixtureRequest) -> dict[str, Any]:
    # One task where the run must stand still while a review is held.
    one = "foreign" in request.node.name
    return {"roadmap": ONE if one else TWO, "odw": ODW_YML}


@pytest.fixture
def service_env_extra() -> dict[str, str]:
    # The reconciler runs at start and then every 2 s, so a lost webhook is found quickly.
    # An effect a killed executor held is taken over after 5 s.
    return {"ODW_RECONCILE_SECONDS": "2", "ODW_EFFECT_LEASE_SECONDS": "5"}


def judged_per_token(service: Service) -> Counter[str]:
    """How often each attempt token was judged in the run's event log."""
    store = service.store()
    try:
        (run,) = [v.run_id for v in store.projections.runs()]
        events = store.events.load(run)
    finally:
        store.close()
    tokens = {
        (e["task"], e["stage"], e["attempt"], e.get("lane") or ""): e["token"]
        for e in events
        if e["type"] == "stage-dispatched"
    }
    judged: Counter[str] = Counter()
    for e in events:
        if e["type"] == "attempt-judged":
            judged[tokens[(e["task"], e["stage"], e["attempt"], e.get("lane") or "")]] += 1
    return judged


def test_kill_9_mid_run_then_restart_ingests_each_stage_once_and_lands_each_task_once(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    gate = threading.Event()

    def hold(run: s.WorkflowRun) -> bool:
        # Stage runs wait until the service is dead, then finish unheard.
        gate.wait(120)
        return True

    actions.admit = hold
    service.run_app()
    wait_until("two stages dispatched", lambda: len(fake.runs) >= 2, timeout=60)
    service.kill()
    gate.set()
    wait_until(
        "the held stage runs to finish while the service is down",
        lambda: all(r.status == "completed" for r in fake.runs.values()),
        timeout=120,
    )
    lost = [d for d in fake.webhooks.deliveries if d.event == "workflow_run" and d.status == 0]
    assert lost, "the completions were sent while nobody listened"
    service.start()
    wait_until(
        "both tasks to land",
        lambda: set(trailers(sample)) == {"1.1", "1.2"},
        timeout=240,
    )
    assert Counter(trailers(sample)) == Counter({"1.1": 1, "1.2": 1}), explain(service, actions)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    dispatched = Counter(r.inputs["token"] for r in fake.runs.values())
    assert all(n == 1 for n in dispatched.values()), "an attempt was dispatched twice"
    judged = judged_per_token(service)
    assert set(judged) == set(dispatched), "every completed stage run was ingested"
    assert all(n == 1 for n in judged.values()), "a stage run was ingested twice"


def test_duplicate_deliveries_and_a_foreign_token_change_nothing(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    fake.webhooks.duplicate_next(10_000)  # every delivery from now on arrives twice
    release = threading.Event()

    def hold_reviews(run: s.WorkflowRun) -> bool:
        if run.inputs.get("stage") == "review" and run.inputs.get("task") == "1.1":
            release.wait(120)
        return True

    actions.admit = hold_reviews
    service.run_app()
    wait_until(
        "a review of 1.1 to be dispatched",
        lambda: any(
            r.inputs.get("task") == "1.1" and r.inputs.get("stage") == "review"
            for r in fake.runs.values()
        ),
        timeout=120,
    )
    version = _version(service)
    foreign = _foreign_completion(fake, sample, task="1.1", stage="review")
    wait_until(
        "the foreign run's webhook to be processed",
        lambda: "rejected: no live attempt recorded its id at dispatch" in service.log(),
        timeout=30,
    )
    service.wait_settled()
    assert _version(service) == version, "a foreign token changed the run"
    release.set()
    wait_until("the task to land", lambda: trailers(sample) == ["1.1"], timeout=240)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    assert trailers(sample) == ["1.1"], explain(service, actions)
    assert results(service)["1.1"]["status"] == "landed"
    judged = judged_per_token(service)
    assert foreign not in judged
    assert all(n == 1 for n in judged.values()), "a duplicate delivery was judged twice"
    assert len(judged) == len(fake.runs) - 1  # every real stage run, once; not the foreign one
    assert sum(1 for p in fake.pulls.values() if p.head == "roadmap-1-1") == 1
    (pull,) = [p for p in fake.pulls.values() if p.head == "roadmap-1-1"]
    assert len([c for c in fake.comments.values() if c.number == pull.number]) == 1


def _version(service: Service) -> int:
    store = service.store()
    try:
        (run,) = [v.run_id for v in store.projections.runs()]
        return store.events.version(run)
    finally:
        store.close()


def _foreign_completion(fake: FakeGitHub, repo: Repository, *, task: str, stage: str) -> str:
    """A completed odw-stage run on the task branch whose token ODW never issued, with a
    well-formed verdict artifact naming that token (someone dispatched it by hand)."""
    token = "f0reign" + "0" * 25
    branch = "roadmap-" + task.replace(".", "-")
    sha = repo.git.sha(f"refs/heads/{branch}") or ""
    run = s.WorkflowRun(
        fake.next_id(),
        repo.full_name,
        "odw-stage.yml",
        1,
        "odw-stage",
        f"odw {stage} {task} {token} (run someone-else)",
        branch,
        sha,
        {"stage": stage, "task": task, "token": token, "run-id": "someone-else"},
        "workflow_dispatch",
        fake.now(),
    )
    run.jobs.append(s.Job(fake.next_id(), "stage"))
    with fake.lock:
        fake.runs[run.id] = run
    verdict = json.dumps(
        {"stage": stage, "task": task, "token": token, "passed": True, "checks": []}
    )
    fake.upload_artifact(run.id, "odw-verdict", {"verdict.json": verdict})
    fake.complete_run(run.id, "success")
    return token
