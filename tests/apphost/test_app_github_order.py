"""GitHub's timing, end to end: webhooks that arrive out of order (`completed`
before `in_progress`, a check run's `completed` before its `created`) and an
artifact list still empty when the run's `completed` arrives. The real
service must land the task all the same, with no infrastructure fault."""

from __future__ import annotations

from typing import Any

import pytest

from app.github import artifacts as artifact_listing
from tests.apphost.harness import ODW_YML, Service, explain, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ONE_TASK = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
LATE = [
    ("workflow_run", "in_progress"),
    ("workflow_job", "in_progress"),
    ("check_run", "created"),
]


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ONE_TASK, "odw": ODW_YML}


def test_a_task_lands_though_webhooks_arrive_out_of_order_and_artifacts_are_listed_late(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    for event, action in LATE:
        fake.webhooks.deliver_late(event, action, n=1000)
    # Listed a few seconds after upload: the first reads after `completed` find none.
    fake.artifact_listing_delay = artifact_listing.LISTING_PAUSE * 1.5
    service.run_app()
    wait_until(
        "task 1.1 to land (or the run to stop)",
        lambda: "1.1" in trailers(sample) or _status(service) not in (None, "running", "pending"),
        timeout=240,
    )
    assert trailers(sample) == ["1.1"], explain(service, actions)
    faults = [e for e in _events(service) if e["type"] == "fault-recorded"]
    assert faults == [], faults
    order = [(d.event, d.action) for d in fake.webhooks.delivered]
    for event, action in (("workflow_run", "in_progress"), ("workflow_job", "in_progress")):
        early = order.index((event, "completed"))
        assert order.index((event, action)) > early, order

    def created_after_completed() -> bool:
        # Check runs are written by the views after the landing, so wait for them.
        seen = [(d.event, d.action) for d in fake.webhooks.delivered]
        done = ("check_run", "completed")
        return done in seen and ("check_run", "created") in seen[seen.index(done) :]

    wait_until("a held check_run created delivered after a completed", created_after_completed)
    late_reads = [
        r for r in fake.requests if r["path"].endswith("/artifacts") and r["method"] == "GET"
    ]
    assert len(late_reads) > len(fake.runs), "every run's artifact was listed at the first read"


def _status(service: Service) -> str | None:
    runs = service.runs()
    rows = (runs[0].get("result") or {}).get("results", []) if runs else []
    return next((t["status"] for t in rows if t["id"] == "1.1"), None)


def _events(service: Service) -> list[dict[str, Any]]:
    store = service.store()
    try:
        (run,) = [v.run_id for v in store.projections.runs()]
        return store.events.load(run)
    finally:
        store.close()


@pytest.mark.parametrize(
    "sample_spec",
    [
        {
            "roadmap": ONE_TASK,
            "odw": {**ODW_YML, "config": {**ODW_YML["config"], "stageAttempts": 1}},
        }
    ],
    ids=["one-attempt"],
)
def test_an_artifact_expired_before_odw_reads_it_is_an_infra_fault_saying_so(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    def expired(run: s.WorkflowRun) -> bool:
        """The run uploads its verdict, which expires before the App reads it."""
        fake.start_run(run.id)
        fake.upload_artifact(run.id, "odw-verdict", {"verdict.json": "{}"})
        fake.expire_artifacts(run.id)
        fake.complete_run(run.id, "success")
        return False

    actions.admit = expired
    service.run_app()
    wait_until(
        "task 1.1 to stop",
        lambda: _status(service) not in (None, "running", "pending"),
        timeout=180,
    )
    assert _status(service) == "infra-fault", explain(service, actions)
    (fault,) = [e for e in _events(service) if e["type"] == "fault-recorded"]
    assert fault["kind"] == "infra"
    assert "its odw-verdict artifact expired before ODW read it" in fault["detail"], fault


# Over the 1 MB that "Get repository content" returns inline (`encoding: "none"`).
HUGE_ROADMAP = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n\n" + "<!-- padding -->\n" * 70_000


@pytest.mark.parametrize(
    "sample_spec", [{"roadmap": HUGE_ROADMAP, "odw": ODW_YML}], ids=["roadmap-over-1MB"]
)
def test_a_roadmap_over_one_megabyte_is_said_on_the_config_check_and_nothing_runs(
    fake: FakeGitHub, service: Service, sample: Repository
) -> None:
    assert len(HUGE_ROADMAP.encode()) > 1024 * 1024
    service.run_app()
    check = wait_until(
        "the config check",
        lambda: [c for c in fake.check_runs.values() if c.name == "ODW · config"],
        timeout=60,
    )[-1]
    assert check.conclusion == "failure"
    summary = check.output["summary"]
    assert "docs/roadmap.md" in summary and "over the 1 MB" in summary, summary
    service.wait_settled()
    assert not fake.runs
