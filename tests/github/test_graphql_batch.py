"""A landing's writes in one GraphQL request (`app/github/landing_writes.py`),
against the fake GitHub, which parses every document with graphql-core and
validates it against GitHub's published schema (`@octokit/graphql-schema`,
installed by `make oracles`)."""

from __future__ import annotations

import requests

from app.github.client import RepositoryClient
from app.github.landing_writes import LandingWrites
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import GRAPHQL_SCHEMA, require_oracle
from tests.fakegithub.state import Installation
from tests.github.conftest import REPO

UNKNOWN_INPUT = (
    "mutation { x: updatePullRequest(input: {pullRequestId: 1, bogus: 2})"
    " { pullRequest { state } } }"
)


def _landing(fake: FakeGitHub, client: RepositoryClient) -> tuple[int, str, str, int, str]:
    """A draft pull request with a status comment and an in-progress check run."""
    git = fake.repos[REPO].git
    head = git.commit_files("roadmap-1-1", {"a.txt": "a\n"}, "work", git.sha("refs/heads/main"))
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1", "running", draft=True)
    comment = client.comments.create_comment(pull.number, "status: running")
    check = client.checks.create_check_run(
        "ODW · 1.1", head, CheckRunFields(status="in_progress", title="running", summary="s")
    )
    return pull.number, pull.node_id, comment.node_id, check.id, check.node_id


def _writes(
    client: RepositoryClient, pull_node: str, comment_node: str, check_node: str, number: int
) -> tuple[LandingWrites, list[str]]:
    again: list[str] = []
    writes = LandingWrites()
    writes.edit_comment(comment_node, "landed", lambda: again.append("comment"))
    writes.mark_ready(pull_node, lambda: again.append("ready"))
    writes.close_pull(pull_node, "landed as abc", lambda: again.append("close"))
    done = CheckRunFields(status="completed", conclusion="success", title="landed", summary="ok")
    repo_node = client.pulls.get_pull(number).base_repo_node
    writes.update_check(repo_node, check_node, done, lambda: again.append("check"))
    return writes, again


def test_one_request_edits_the_comment_closes_the_pull_and_concludes_the_check(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    require_oracle(GRAPHQL_SCHEMA)
    number, pull_node, comment_node, check_id, check_node = _landing(fake, client)
    writes, again = _writes(client, pull_node, comment_node, check_node, number)
    before = len(fake.requests)
    assert client.land_views(writes) == 0
    sent = [(r["method"], r["path"]) for r in fake.requests[before:]]
    assert [w for w in sent if "access_tokens" not in w[1]] == [("POST", "/api/graphql")]
    assert again == []
    pull = next(p for p in fake.pulls.values() if p.number == number)
    assert (pull.state, pull.draft, pull.body) == ("closed", False, "landed as abc")
    [said] = [c for c in fake.comments.values() if c.number == number]
    assert said.body == "landed" and said.edits == 1
    check = fake.check_runs[check_id]
    assert (check.status, check.conclusion, check.output["title"]) == (
        "completed",
        "success",
        "landed",
    )


def test_a_refused_part_is_done_again_its_rest_way_after_the_others_ran(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    number, pull_node, _, check_id, check_node = _landing(fake, client)
    writes, again = _writes(client, pull_node, "IC_999999", check_node, number)
    assert client.land_views(writes) == 1
    assert again == ["comment"]  # only the refused part
    pull = next(p for p in fake.pulls.values() if p.number == number)
    assert pull.state == "closed" and fake.check_runs[check_id].conclusion == "success"


def test_a_completed_check_is_not_reopened_through_graphql_either(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    number, pull_node, comment_node, check_id, check_node = _landing(fake, client)
    writes, _ = _writes(client, pull_node, comment_node, check_node, number)
    client.land_views(writes)
    reopen, again = LandingWrites(), []
    repo_node = client.pulls.get_pull(number).base_repo_node
    reopen.update_check(
        repo_node, check_node, CheckRunFields(status="in_progress"), lambda: again.append(1)
    )
    assert client.land_views(reopen) == 1
    assert fake.check_runs[check_id].status == "completed"


def test_a_document_github_would_refuse_is_a_violation(
    fake: FakeGitHub, installation: Installation
) -> None:
    require_oracle(GRAPHQL_SCHEMA)
    token = fake.mint_token(installation, [REPO], {"pull_requests": "write"}).token
    answer = requests.post(
        fake.api_url.removesuffix("/v3") + "/graphql",
        json={"query": UNKNOWN_INPUT},
        headers={"Authorization": f"token {token}"},
        timeout=10,
    )
    assert answer.status_code == 200 and answer.json()["errors"]
    assert any("bogus" in v for v in fake.violations)
    fake.violations.clear()
