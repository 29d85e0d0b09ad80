"""What a maintainer sees on GitHub when a task fails, or the settings are wrong."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.apphost.performers.base import HostConfig, HostContext
from app.apphost.runs import RunKey, run_meta
from app.apphost.unpacked import unpack_judged
from app.core.pipeline import STAGES
from app.github import GitHubApp
from app.github.auth import AppCredentials
from app.gitops.evidence.assess import stage_verdicts
from tests.apphost.harness import CHAIN, ODW_YML, Service, explain, results, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


@pytest.fixture
def sample_spec(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.node.name.startswith("test_an_invalid"):
        return {"roadmap": CHAIN, "odw": {**ODW_YML, "config": {"maxParallel": "many"}}}
    return {"roadmap": CHAIN, "odw": ODW_YML}


def test_a_stage_without_its_marker_fails_the_task_and_shows_assessment_and_salvage(
    fake: FakeGitHub,
    service: Service,
    sample: Repository,
    actions: LocalActions,
    agent_script: Path,
    tmp_path: Path,
) -> None:
    agent_script.write_text(json.dumps({"1.1": {"implement": ["no-marker"] * 10}}))
    service.run_app()
    wait_until(
        "task 1.1 to fail",
        lambda: results(service).get("1.1", {}).get("status") == "failed",
        timeout=180,
    )
    wait_until("the assessment check", lambda: _checks(fake, "ODW · 1.1 · assessment"))
    rows = results(service)
    assert rows["1.2"]["status"] == "blocked", explain(service, actions)
    assert "1.1" in rows["1.2"]["detail"]
    dispatched = len(fake.runs)
    # The assessment and salvage are shown: the check run and the status comment.
    assessment = _checks(fake, "ODW · 1.1 · assessment")[-1]
    assert assessment.conclusion == "action_required"
    summary = assessment.output["summary"]
    assert "**Assessment:**" in summary and "**Salvage:**" in summary
    assert "/odw retry 1.1" in summary
    pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
    wait_until(
        "the status comment to show the salvage",
        lambda: "**Salvage:**" in _comment(fake, pull.number),
        timeout=30,
    )
    body = _comment(fake, pull.number)
    assert "**Assessment:**" in body and "| evidence | value |" in body
    assert "docs/execplans/1-1.md" in body  # the salvaged ExecPlan, committed on the branch
    salvaged = sample.git.show("refs/heads/roadmap-1-1", "docs/execplans/1-1.md") or b""
    assert b"Status: COMPLETE" in salvaged
    task_check = _checks(fake, "ODW · 1.1")[-1]
    assert task_check.conclusion == "failure"
    assert "completion_marker" in task_check.output["summary"]
    run_check = _checks(fake, "ODW · run")[-1]
    assert run_check.conclusion == "action_required"
    # Nothing is dispatched after the halt: not 1.2, not another attempt of 1.1.
    service.wait_settled()
    assert len(fake.runs) == dispatched
    assert not [r for r in fake.runs.values() if r.inputs.get("task") == "1.2"]
    # `odw status` says the same in the terminal: why the run stopped, what failed.
    (run,) = service.runs()
    proc = service.odw("status", sample.full_name)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    halted = run["result"]["halted"]
    assert halted and lines[:3] == [
        f"{sample.full_name}@main  {run['run']}  halted",
        f"  halted: {halted}",
        "  tasks: 0 of 2 landed · 1 blocked · 1 failed",
    ]
    failed = lines.index(next(x for x in lines if x.startswith("  1.1  ")))
    assert lines[failed].split()[1:3] == ["failed", "implement"]
    block = [
        x.strip()
        for x in lines[failed + 1 : lines.index(next(x for x in lines if x.startswith("  1.2  ")))]
    ]
    assert any(x.startswith("verdict implement attempt ") for x in block), block
    assert f"assessment {rows['1.1']['assessment']['classification']}" in block
    assert f"pull request {fake.host_url}/{sample.full_name}/pull/{pull.number}" in block
    # Another process (its own data directory) assessing this task reads the
    # same evidence: each judged attempt's artifact comes again from its run.
    elsewhere = tmp_path / "elsewhere"
    store = service.store()
    try:
        other = HostContext(
            store,
            GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url),
            HostConfig(data_dir=elsewhere),
            clock=lambda: datetime.now(UTC),
        )
        key = RunKey.from_json(run_meta(store, run["run"])["key"])
        came = unpack_judged(other, other.client(key), run["run"], "1.1")
        judged = [e for e in store.events.load(run["run"]) if e["type"] == "attempt-judged"]
    finally:
        store.close()
    here = stage_verdicts(other.run_dir(run["run"]), "1.1", set(STAGES))
    assert came == len(here) == len([e for e in judged if e["task"] == "1.1"]) > 0
    assert any(v.salvage.files for v, _ in here)  # the bundle salvage commits


def test_an_invalid_odw_yml_gives_a_failing_config_check_and_dispatches_nothing(
    fake: FakeGitHub, service: Service, sample: Repository
) -> None:
    service.run_app()
    check = wait_until("the config check", lambda: _checks(fake, "ODW · config"), timeout=60)[-1]
    assert check.conclusion == "failure"
    assert check.head_sha == sample.git.sha("refs/heads/main")
    summary = check.output["summary"]
    assert ".github/odw.yml" in summary
    assert "config.maxParallel" in summary
    assert "**line:** 7" in summary  # where `maxParallel: many` is in the file
    service.wait_settled()
    assert not fake.runs
    assert service.runs() == []


def _checks(fake: FakeGitHub, name: str) -> list[Any]:
    return sorted((c for c in fake.check_runs.values() if c.name == name), key=lambda c: c.id)


def _comment(fake: FakeGitHub, number: int) -> str:
    # The status comment; a stop that needs a person adds a separate notice.
    mine = [c for c in fake.comments.values() if c.number == number and "odw:status" in c.body]
    assert len(mine) <= 1, "one status comment per pull request"
    return mine[0].body if mine else ""
