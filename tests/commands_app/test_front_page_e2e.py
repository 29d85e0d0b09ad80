"""The run's front page and its commits, end to end (issue 28, items 5, 6 and 8):
`ODW · run` says what waits and what to type and lives on the base's current
head; task checks sit on branch heads only, never on `main`; `/odw status` and
`odw app status` say a stopped run is stopped; a task landed by push leaves
its pull request closed, ready (not a draft), and naming the commit."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from app.apphost.views import CONFIG_CHECK, RUN_CHECK
from tests.apphost.harness import CHAIN, ODW_YML, REPO, Service, wait_until
from tests.commands_app.test_commands_e2e import ODW, replies, task_status
from tests.conftest import RunOdw
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.graphql import PATH as GRAPHQL

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": CHAIN, "odw": ODW_YML}


def base_commits(repo: s.Repository) -> set[str]:
    return set(repo.git.git("rev-list", "refs/heads/main").split())


def on_base(fake: FakeGitHub, repo: s.Repository) -> list[s.CheckRun]:
    bases = base_commits(repo)
    return [c for c in fake.check_runs.values() if c.head_sha in bases]


def newest(fake: FakeGitHub, name: str) -> s.CheckRun | None:
    runs = [c for c in fake.check_runs.values() if c.name == name]
    return max(runs, key=lambda c: c.id, default=None)


def summary_of(run: s.CheckRun) -> str:
    return str(run.output.get("summary") or "")


def assert_base_carries_only_run_and_config(fake: FakeGitHub, repo: s.Repository) -> None:
    names = {c.name for c in on_base(fake, repo)}
    assert names <= {RUN_CHECK, CONFIG_CHECK}, names
    # ... and no task check run was ever created on a base commit.
    task_heads = {c.head_sha for c in fake.check_runs.values() if c.name.startswith("ODW · 1.")}
    assert not task_heads & base_commits(repo)


def test_a_landed_chain_leaves_ready_closed_pulls_and_the_run_check_on_mains_head(
    fake: FakeGitHub, service: Service, sample: s.Repository, actions: LocalActions
) -> None:
    service.run_app()
    store = service.store()
    try:
        wait_until(
            "both tasks to land",
            lambda: task_status(store, "1.1") == "landed" and task_status(store, "1.2") == "landed",
            timeout=300,
        )
    finally:
        store.close()
    head = sample.git.sha("refs/heads/main")

    def settled() -> bool:
        # The run check followed the base: the newest is on main's head, and
        # every older one is concluded where it was (the new one is created
        # first, so the old one's conclusion may follow a moment later).
        runs = [c for c in fake.check_runs.values() if c.name == RUN_CHECK]
        run = newest(fake, RUN_CHECK)
        pulls = [p for p in fake.pulls.values() if p.repo == REPO]
        closed = len(pulls) == 2 and all(p.state == "closed" for p in pulls)
        ended = all(c.status == "completed" for c in runs)
        return bool(
            run and run.head_sha == head and run.conclusion == "success" and closed and ended
        )

    wait_until(
        "the run check on main's head, every older one concluded, pulls closed", settled, timeout=60
    )
    runs = [c for c in fake.check_runs.values() if c.name == RUN_CHECK]
    assert len({c.head_sha for c in runs}) >= 2
    assert_base_carries_only_run_and_config(fake, sample)
    # No superseded task check was PATCHed to `cancelled`.
    cancels = [
        r
        for r in fake.requests
        if r["method"] == "PATCH"
        and "/check-runs/" in r["path"]
        and (r["body"] or {}).get("conclusion") == "cancelled"
    ]
    assert cancels == []
    # Each pull request is closed, not a draft, and its body names its squash commit.
    landed = sample.git.git("log", "--format=%H %B%x1e", "refs/heads/main")
    readied = [r for r in fake.requests if r["path"] == GRAPHQL]
    assert len(readied) == 2 and all(r["status"] == 200 for r in readied)
    for pull in (p for p in fake.pulls.values() if p.repo == REPO):
        assert not pull.draft and not pull.merged, pull
        sha = next(
            line.split()[0]
            for line in landed.split("\x1e")
            if f"ODW-Task: {pull.head.removeprefix('roadmap-').replace('-', '.')}" in line
        )
        assert f"/commit/{sha})" in pull.body and "closed, not merged" in pull.body


FAILING = """\
# Roadmap

- [ ] 1.1. Add a greeting
- [ ] 1.2. Add a farewell
  - Requires 1.1.
"""


@pytest.mark.parametrize("sample_spec", [{"roadmap": FAILING, "odw": ODW}], ids=["failing"])
def test_a_stopped_run_says_what_failed_and_what_to_type_everywhere(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    agent_script: Any,
    run_odw: RunOdw,
) -> None:
    # 1.1's implement stage fails for good; 1.2 waits on it.
    agent_script.write_text(json.dumps({"1.1": {"implement": ["exit:3"] * 20}}))
    fake.add_collaborator(REPO, "maintainer", "write")
    service.run_app()
    store = service.store()
    try:
        wait_until("1.1 to fail", lambda: task_status(store, "1.1") == "failed", timeout=240)
    finally:
        store.close()
    pull = wait_until(
        "1.1's pull request",
        lambda: next((p for p in fake.pulls.values() if p.head == "roadmap-1-1"), None),
    )

    def front() -> s.CheckRun | None:
        run = newest(fake, RUN_CHECK)
        return run if run and run.conclusion is not None and "`/odw " in summary_of(run) else None

    run = wait_until("the run check to say what to type", front, timeout=60)
    assert run.head_sha == sample.git.sha("refs/heads/main")
    assert "1 failed (1.1)" in str(run.output.get("title"))
    summary = summary_of(run)
    assert f"/pull/{pull.number})" in summary  # 1.1's pull request
    assert "/runs/" in summary  # 1.1's check run or its Actions job
    assert "`/odw " in summary.split("**Next:**")[1] and " 1.1" in summary.split("**Next:**")[1]
    assert_base_carries_only_run_and_config(fake, sample)

    # `/odw status` on an issue names the failed task and the command to type.
    issue = fake.open_issue(REPO)
    fake.comment_as("maintainer", REPO, issue, "/odw status")
    reply = wait_until("the status reply", lambda: replies(fake, issue), timeout=60)[0].body
    assert "**1.1**" in reply and "failed" in reply and "`/odw " in reply

    # `odw app status` shows the stopped run as halted, with its reason.
    env = {**os.environ, "ODW_DATABASE_URL": f"sqlite:///{service.data_dir / 'odw.sqlite3'}"}
    done = run_odw("app", "status", env=env)
    assert done.returncode == 0, done.stderr
    first, *rest = done.stdout.splitlines()
    assert first.endswith(" halted") and "running" not in first, done.stdout
    assert any(line.strip().startswith("halted: ") for line in rest), done.stdout
