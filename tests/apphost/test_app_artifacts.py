"""A hostile `odw-verdict` artifact, end to end: the real service ingests what a
stage run uploaded to the fake GitHub, and each refusal ends that attempt as
an infrastructure fault (the core's rule for a run without a usable verdict),
said on the task's check run, never a task left `running`."""

from __future__ import annotations

import stat
import zipfile
from typing import Any

import pytest

from app.apphost import api
from tests.apphost.harness import ODW_YML, Service, explain, wait_until
from tests.fakegithub import FakeGitHub, routes_actions
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository
from tests.github.zips import bomb, lying, one_entry

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ONE_TASK = "# Roadmap\n\n- [ ] 1.1. Add a greeting\n"
VERDICT = b'{"stage": "plan", "task": "1.1", "token": "t", "passed": true, "checks": []}'
# What each attempt's run uploads, and the reason its refusal must give. The
# first is the issue's: kilobytes whose headers understate 64 MiB (the cap is 8 MiB).
HOSTILE = [
    (bomb(64 << 20, declared=100), "unpacks to more than the 8388608-byte cap"),
    (
        lying(one_entry("verdict.json", VERDICT, method=zipfile.ZIP_DEFLATED), crc=0),
        "is corrupt (Bad CRC-32",
    ),
    (one_entry("/verdict.json", VERDICT), "has an absolute path"),
    (one_entry("../verdict.json", VERDICT), "escapes the artifact"),
    (one_entry("verdict.json", b"/etc/passwd", stat.S_IFLNK | 0o777), "is not a regular file"),
]


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    # One attempt per hostile artifact: the fifth infra fault ends the task.
    config = {**ODW_YML["config"], "stageAttempts": len(HOSTILE)}
    return {"roadmap": ONE_TASK, "odw": {**ODW_YML, "config": config}}


def test_each_hostile_artifact_ends_its_attempt_as_an_infra_fault_shown_on_the_run_check(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    uploads = list(HOSTILE)

    def hostile(run: s.WorkflowRun) -> bool:
        """The run's job uploads the next hostile artifact in place of its verdict."""
        if not uploads:
            return True
        archive, _ = uploads.pop(0)
        fake.start_run(run.id)
        routes_actions.upload_artifact(fake, run.id, "odw-verdict", archive)
        fake.complete_run(run.id, "success")
        return False

    actions.admit = hostile
    service.run_app()
    wait_until(
        "task 1.1 to stop (or an ingestion to fail)",
        lambda: _failed_ingests(service) or _status(service) not in (None, "running", "pending"),
        timeout=180,
    )
    assert _failed_ingests(service) == [], "a refusal must settle its ingestion at once"
    assert _status(service) == "infra-fault", explain(service, actions)
    assert not uploads and len(fake.runs) == len(HOSTILE)
    faults = [e for e in _events(service) if e["type"] == "fault-recorded"]
    assert [(e["task"], e["kind"]) for e in faults] == [("1.1", "infra")] * len(HOSTILE)
    for fault, (_, reason) in zip(faults, HOSTILE, strict=True):
        assert "the odw-verdict artifact was refused: " in fault["detail"], fault
        assert reason in fault["detail"], fault
    # Nothing was ever committed on 1.1's branch: no task check (it would sit on
    # the base commit); the run check, on main's head, shows the fault instead.
    check = wait_until(
        "the run check to show the fault",
        lambda: [
            c
            for c in _checks(fake, "ODW · run")
            if c.conclusion is not None and "infra-fault" in c.output["summary"]
        ],
        timeout=30,
    )[-1]
    assert _checks(fake, "ODW · 1.1") == []
    assert check.head_sha == sample.git.sha("refs/heads/main")
    summary = check.output["summary"]
    assert "the odw-verdict artifact was refused" in summary, summary
    assert HOSTILE[-1][1] in summary, summary


def _status(service: Service) -> str | None:
    """Task 1.1's status, once the run has started."""
    runs = service.runs()
    rows = (runs[0].get("result") or {}).get("results", []) if runs else []
    return next((t["status"] for t in rows if t["id"] == "1.1"), None)


def _failed_ingests(service: Service) -> list[str]:
    store = service.store()
    try:
        return [
            f"{e.key}: {e.last_error}"
            for e in store.outbox.list()
            if e.kind == api.INGEST and e.last_error
        ]
    finally:
        store.close()


def _events(service: Service) -> list[dict[str, Any]]:
    store = service.store()
    try:
        (run,) = [v.run_id for v in store.projections.runs()]
        return store.events.load(run)
    finally:
        store.close()


def _checks(fake: FakeGitHub, name: str) -> list[Any]:
    return sorted((c for c in fake.check_runs.values() if c.name == name), key=lambda c: c.id)
