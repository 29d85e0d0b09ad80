"""What an operator watches, from a real run: `/metrics` scraped over HTTP
from `odw serve` (three gunicorn HTTP processes, the intake and the delivery
worker each counting in their own process), the JSON log lines of the same
service, and `odw status` against its store."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.apphost.harness import CHAIN, ODW_YML, Service, explain, trailers, wait_until
from tests.fakegithub import FakeGitHub, faults
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository
from tests.service.live import request

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ADMIN = "metrics-admin-token"
TASKS = ("1.1", "1.2")
FAMILIES = (
    "odw_webhook_deliveries",
    "odw_deliveries_handled",
    "odw_delivery_processing_seconds",
    "odw_inbox_depth",
    "odw_inbox_oldest_age_seconds",
    "odw_outbox_depth",
    "odw_outbox_dead",
    "odw_outbox_oldest_age_seconds",
    "odw_effects",
    "odw_github_requests",
    "odw_github_rate_limit_waits",
    "odw_github_rate_limit_wait_seconds",
    "odw_stage_duration_seconds",
    "odw_landings",
    "odw_integration_attempts",
    "odw_leases_adopted",
    "odw_claims_reclaimed",
)
FINAL = ("processed", "ignored", "rejected", "failed")


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": CHAIN, "odw": ODW_YML}


@pytest.fixture
def service_env_extra() -> dict[str, str]:
    return {"ODW_HTTP_PROCESSES": "3", "ODW_ADMIN_TOKEN": ADMIN}


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(service: Service) -> tuple[set[str], Samples]:
    """The families and samples of `/metrics`, read by prometheus_client's parser."""
    status, body = request(
        service.port, "GET", "/metrics", headers={"Authorization": f"Bearer {ADMIN}"}
    )
    assert status == 200, body
    families = list(text_string_to_metric_families(body.decode()))
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples
    }
    return {f.name for f in families}, samples


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def test_metrics_logs_and_status_reflect_a_real_run(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    # GitHub asks for one 1-second wait on the first check run ODW creates.
    fake.inject("POST", "/repos/{owner}/{repo}/check-runs", faults.secondary_limit(retry_after=1))
    print(service.run_app())
    wait_until("every task to land", lambda: set(trailers(sample)) == set(TASKS), timeout=300)
    wait_until("the run to finish", lambda: all(r["status"] == "finished" for r in service.runs()))
    fake.webhooks.flush()
    service.wait_settled()
    assert request(service.port, "GET", "/metrics")[0] == 401  # still the admin token's

    names, samples = scrape(service)
    assert set(FAMILIES) <= names, sorted(set(FAMILIES) - names)

    # Deliveries as the fake sent them, counted by whichever HTTP process answered.
    sent: Counter[tuple[str, str]] = Counter()
    for d in fake.webhooks.deliveries:
        for answer in d.answers:
            sent[(d.event, json.loads(answer).get("status", "refused"))] += 1
    assert sent[("workflow_run", "received")] >= len(TASKS)
    counted = {
        (dict(ls)["event"], dict(ls)["outcome"]): v
        for (n, ls), v in samples.items()
        if n == "odw_webhook_deliveries_total"
    }
    assert counted == sent

    # Deliveries as the delivery worker finished them, and what each effect became.
    store = service.store()
    try:
        inbox = {k: n for k, n in store.inbox.counts().items() if k[1] in FINAL}
        effects = store.outbox.list()
        installation = str(store.installations.installation_for_repository(sample.full_name))
        rows = [store.inbox.get(d.id) for d in fake.webhooks.deliveries]
        processed_ids = {r.id for r in rows if r is not None and r.status == "processed"}
    finally:
        store.close()
    handled = {
        (dict(ls)["event"], dict(ls)["outcome"]): v
        for (n, ls), v in samples.items()
        if n == "odw_deliveries_handled_total" and dict(ls)["outcome"] != "retrying"
    }
    assert handled == inbox
    assert total(samples, "odw_delivery_processing_seconds_count") == sum(inbox.values())
    done = Counter(e.kind for e in effects if e.status == "done")
    for kind, n in done.items():
        assert total(samples, "odw_effects_total", kind=kind, outcome="done") == n, kind
    assert total(samples, "odw_effects_total", outcome="dead") == 0

    # Queues are read from the database: nothing waits once the run settled.
    assert total(samples, "odw_inbox_depth") == 0
    assert total(samples, "odw_outbox_depth") == 0
    assert samples[("odw_outbox_oldest_age_seconds", ())] == 0

    # Every verdict read is one stage duration; every landing one integration.
    ingested = Counter(
        e.result["stage"]
        for e in effects
        if e.status == "done" and isinstance(e.result, dict) and "events" in e.result
    )
    assert ingested["implement"] == len(TASKS), explain(service, actions)
    for stage, n in ingested.items():
        assert total(samples, "odw_stage_duration_seconds_count", stage=stage) == n, stage
    assert total(samples, "odw_landings_total", outcome="landed") == len(TASKS)
    assert total(samples, "odw_landings_total") == len(TASKS)
    assert total(samples, "odw_integration_attempts_count") == len(TASKS)
    assert total(samples, "odw_integration_attempts_sum") >= len(TASKS)

    assert total(samples, "odw_github_requests_total", installation=installation) > 0
    waits = {"installation": installation, "limit": "secondary"}
    assert total(samples, "odw_github_rate_limit_waits_total", **waits) == 1
    assert total(samples, "odw_github_rate_limit_wait_seconds_total", **waits) == 1

    # The log: each line in the handling of a delivery or an effect says which.
    lines = [json.loads(line) for line in service.log().splitlines() if line.startswith("{")]
    run_id = service.runs()[0]["run"]
    for task in TASKS:
        landed = [x for x in lines if f"task {task} landed as " in x["msg"]]
        assert landed, task
        assert all((x.get("run"), x.get("task")) == (run_id, task) for x in landed), landed
    processed = [
        x for x in lines if x["logger"] == "odw.worker" and x["msg"].startswith("processed ")
    ]
    assert {x.get("delivery") for x in processed} == processed_ids

    # `odw status`: the run, its task counts, and per task its stage, attempts,
    # verdict, landed commit and pull request.
    proc = service.odw("status", sample.full_name)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == [f"{sample.full_name}@main  {run_id}  finished", "  tasks: 2 of 2 landed"]
    log = sample.git.git(
        "log", "--format=%H %(trailers:key=ODW-Task,valueonly,separator=)", "refs/heads/main"
    )
    landed = {task: sha for sha, _, task in (x.partition(" ") for x in log.splitlines()) if task}
    for task in TASKS:
        pull = next(p for p in fake.pulls.values() if p.head == f"roadmap-{task.replace('.', '-')}")
        (head,) = [line for line in lines if line.startswith(f"  {task}  ")]
        assert head.split()[1:3] == ["landed", "integrate"], head
        assert "implement=1" in head, head
        block = [x.strip() for x in lines[lines.index(head) + 1 : lines.index(head) + 5]]
        assert f"landed as {landed[task][:12]}" in block, block
        assert f"pull request {fake.host_url}/{sample.full_name}/pull/{pull.number}" in block
        assert any(x.startswith("verdict ") for x in block), block
    assert service.odw("status").stdout == proc.stdout  # the only repository
    assert service.odw("app", "status").stdout == proc.stdout  # one renderer for both
    other = service.odw("status", "octo/other")
    assert (other.returncode, other.stdout) == (0, "odw: no runs of octo/other yet\n")
    bad = service.odw("status", "not-a-repository")
    assert bad.returncode == 2 and "OWNER/REPO" in bad.stderr and "Traceback" not in bad.stderr
    (shown,) = json.loads(service.odw("status", "--json").stdout)
    assert (shown["run_id"], shown["status"], shown["tasks_by_status"]) == (
        run_id,
        "finished",
        {"landed": 2},
    )
