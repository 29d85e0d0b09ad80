"""A landed pull request closed in one GraphQL request, against the fake GitHub,
which parses every document with graphql-core and validates it against GitHub's
published schema (`@octokit/graphql-schema`, installed by `make oracles`)."""

from __future__ import annotations

import requests

from app.github.client import RepositoryClient
from app.github.errors import GitHubError
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import GRAPHQL_SCHEMA, require_oracle
from tests.fakegithub.state import Installation
from tests.github.conftest import REPO

UNKNOWN_INPUT = (
    "mutation { x: updatePullRequest(input: {pullRequestId: 1, bogus: 2})"
    " { pullRequest { state } } }"
)


def _draft_pull_with_comment(fake: FakeGitHub, client: RepositoryClient) -> tuple[int, str, str]:
    git = fake.repos[REPO].git
    git.commit_files("roadmap-1-1", {"a.txt": "a\n"}, "work", git.sha("refs/heads/main"))
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1", "running", draft=True)
    comment = client.comments.create_comment(pull.number, "status: running")
    return pull.number, pull.node_id, comment.node_id


def test_one_request_edits_the_comment_marks_ready_and_closes(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    require_oracle(GRAPHQL_SCHEMA)
    number, node, comment = _draft_pull_with_comment(fake, client)
    before = len(fake.requests)
    client.pulls.close_landed(node, "landed as abc", ready=True, comment=(comment, "landed"))
    sent = fake.requests[before:]
    assert [(r["method"], r["path"]) for r in sent if "access_tokens" not in r["path"]] == [
        ("POST", "/api/graphql")
    ]
    pull = next(p for p in fake.pulls.values() if p.number == number)
    assert (pull.state, pull.draft, pull.body) == ("closed", False, "landed as abc")
    [said] = [c for c in fake.comments.values() if c.number == number]
    assert said.body == "landed" and said.edits == 1
    assert not fake.violations


def test_a_refused_part_is_raised_after_the_others_ran(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    number, node, _ = _draft_pull_with_comment(fake, client)
    try:
        client.pulls.close_landed(node, "landed", ready=True, comment=("IC_999999", "x"))
    except GitHubError:
        pass
    else:
        raise AssertionError("an unknown comment id must be refused")
    pull = next(p for p in fake.pulls.values() if p.number == number)
    assert pull.state == "closed"  # the mutations after the refused one still ran


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
