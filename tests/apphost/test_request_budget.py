"""What the App's happy path costs in REST requests, counted on the fake GitHub.

Each test pins one waste removed (issue 28, item 9): a status comment is not
edited only because its task's check run moved to a new head, a task branch is
created without a 404 probe first, the base the run pinned is not read again
for each new branch, a pull request is opened without a search first, a
completed workflow run is not read again, and a landing's writes are one
GraphQL request.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.apphost import views
from tests.apphost.harness import REPO, Service, explain, trailers, wait_until
from tests.core.runkit import Run
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

TASKS = ("1.1", "1.2", "1.3", "1.4")
CHAIN = "# R\n\n- [ ] 1.1. Greet\n- [ ] 1.2. Wave\n  - Requires 1.1.\n"
PULL = "https://github.example/octo/demo/pull/7"


def test_a_running_tasks_comment_does_not_change_when_its_check_run_moves_heads() -> None:
    run = Run(CHAIN, maxParallel=1)
    run.drive_to("1.1", "implement")
    t = run.state.task("1.1")

    def body(check: str) -> str:
        links = views.Links(pulls={"1.1": PULL}, checks={"1.1": check})
        return views.status_comment(run.state, t, links, None, landed_note=False)

    plan_head = body("https://github.example/octo/demo/runs/41")
    implement_head = body("https://github.example/octo/demo/runs/42")
    assert plan_head == implement_head  # no edit is owed
    assert f"[check run]({PULL}/checks)" in plan_head  # the head's checks, always current


def _requests(fake: FakeGitHub, method: str, prefix: str) -> list[dict[str, Any]]:
    path = f"/repos/{REPO}/{prefix}"
    return [r for r in fake.requests if r["method"] == method and r["path"].startswith(path)]


@pytest.mark.slow
@pytest.mark.xdist_group("apphost")
def test_the_happy_path_spends_no_probe_no_reread_no_search_and_one_comment_edit_per_task(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    before = len(fake.requests)
    service.run_app()
    wait_until(
        "every task to land",
        lambda: set(trailers(sample)) == set(TASKS),
        timeout=300,
    )
    wait_until("the run to finish", lambda: all(r["status"] == "finished" for r in service.runs()))
    assert len(trailers(sample)) == len(TASKS), explain(service, actions)
    made = fake.requests[before:]
    reads = [r for r in made if r["method"] == "GET" and "/git/ref/heads/" in r["path"]]
    # No 404 probe before a branch is created; the base is read once, when the
    # run pins it, never again per new branch.
    assert not [r for r in reads if r["status"] == 404], reads
    assert len([r for r in reads if r["path"].endswith("/heads/main")]) <= 1, reads
    created = [r["body"]["ref"] for r in _requests(fake, "POST", "git/refs")]
    assert sorted(created) == sorted(f"refs/heads/roadmap-{t.replace('.', '-')}" for t in TASKS)
    # A dependent task's branch starts from its dependency's squash on the base.
    start = {r["body"]["ref"]: r["body"]["sha"] for r in _requests(fake, "POST", "git/refs")}
    for task, needs in (("1.2", "1.1"), ("1.3", "1.2")):
        sha = start[f"refs/heads/roadmap-{task.replace('.', '-')}"]
        seen = sample.git.git("log", "--format=%B", sha)
        assert f"ODW-Task: {needs}" in seen, (task, sha)
    # Each pull request is opened without a search first (no crash to recover from).
    assert not _requests(fake, "GET", "pulls?") and not [
        r for r in made if r["method"] == "GET" and r["path"] == f"/repos/{REPO}/pulls"
    ]
    # One status comment per pull request, edited once: when its task landed, in
    # the landing's one GraphQL request (with the PR closed and its check
    # concluded), never by REST.
    assert not _requests(fake, "PATCH", "issues/comments/")
    assert not _requests(fake, "PATCH", "pulls/")
    landings = [r for r in made if r["method"] == "POST" and r["path"].endswith("/graphql")]
    assert len(landings) == len(TASKS), [r["body"]["query"][:200] for r in landings]
    for r in landings:
        query, values = r["body"]["query"], r["body"]["variables"]
        for part in ("updateIssueComment", "markPullRequestReadyForReview", "updatePullRequest"):
            assert query.count(part) == 1, query
        said = [v for k, v in values.items() if k.endswith("_body") and "**Status:**" in str(v)]
        assert len(said) == 1 and "**Status:** landed as " in said[0]
    # A completed run is judged from its delivery, and its job link came from
    # `workflow_job`: no run or job list is read again.
    assert not [r for r in made if r["method"] == "GET" and "/actions/runs/" in r["path"]
                and not r["path"].endswith("/artifacts")]  # fmt: skip
