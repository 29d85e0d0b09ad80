"""A renamed or transferred repository: GitHub redirects its old name (301 for
reads, 307 for writes, tests/fakegithub/moves.py), and a write the old name
answers with a redirect is an error naming the new name, never a success."""

from __future__ import annotations

import pytest
import requests

from app.github.client import RepositoryClient
from app.github.errors import RepositoryMoved
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Installation, Repository
from tests.github.conftest import REPO

NEW = "octo/renamed"


def test_the_old_name_answers_301_to_reads_and_307_to_writes_as_github_does(
    fake: FakeGitHub, repo: Repository, installation: Installation, client: RepositoryClient
) -> None:
    token = client.git_token()
    fake.rename_repository(REPO, NEW)
    headers = {"Authorization": f"token {token}"}
    base = f"{fake.api_url}/repos/{REPO}"
    read = requests.get(
        f"{base}/git/ref/heads/main", headers=headers, allow_redirects=False, timeout=10
    )
    write = requests.patch(
        f"{base}/git/refs/heads/main", json={"sha": "0" * 40}, headers=headers,
        allow_redirects=False, timeout=10,
    )  # fmt: skip
    where = f"{fake.api_url}/repositories/{repo.id}/git"
    assert (read.status_code, read.headers["Location"]) == (301, f"{where}/ref/heads/main")
    assert (write.status_code, write.headers["Location"]) == (307, f"{where}/refs/heads/main")
    assert write.json()["message"] == "Moved Permanently"
    assert write.json()["url"] == write.headers["Location"]
    # The repository's id serves it under its new name, with the same token.
    followed = requests.get(read.headers["Location"], headers=headers, timeout=10)
    assert followed.status_code == 200
    assert followed.json()["object"]["sha"] == repo.git.sha("refs/heads/main")


def test_reads_on_the_old_name_follow_the_redirect(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient
) -> None:
    main = repo.git.sha("refs/heads/main")
    client.authorise({"contents": "read"})  # a token made before the rename
    fake.rename_repository(REPO, NEW)
    assert client.contents.branch_sha("main") == main
    assert client.contents.default_branch() == "main"


def test_a_token_asked_for_by_the_old_name_says_where_the_repository_went(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient
) -> None:
    # Tokens are narrowed by repository name, and GitHub knows only the new one.
    fake.rename_repository(REPO, NEW)
    with pytest.raises(RepositoryMoved) as raised:
        client.contents.default_branch()
    assert raised.value.moved_to == NEW
    assert f"the repository moved to {NEW}" in str(raised.value)


def test_a_branch_move_on_the_old_name_is_an_error_naming_the_new_name(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient
) -> None:
    main = repo.git.sha("refs/heads/main")
    client.refs.create_branch("roadmap-1-1", main)
    moved_to = repo.git.commit_files("roadmap-1-1", {"a.txt": "a\n"}, "a", main)
    repo.git.git("update-ref", "refs/heads/roadmap-1-1", main)
    fake.rename_repository(REPO, NEW)
    with pytest.raises(RepositoryMoved) as raised:
        client.refs.move_branch("roadmap-1-1", moved_to, force=True)
    assert raised.value.moved_to == NEW and raised.value.status == 307
    assert f"the repository moved to {NEW}" in str(raised.value)
    assert repo.git.sha("refs/heads/roadmap-1-1") == main  # nothing was written
    patches = [r for r in fake.requests if r["method"] == "PATCH"]
    assert [r["status"] for r in patches] == [307]  # asked once: a redirect is not retried


def test_a_check_run_and_a_dispatch_on_the_old_name_are_errors_too(
    fake: FakeGitHub, repo: Repository, client: RepositoryClient
) -> None:
    main = repo.git.sha("refs/heads/main")
    client.authorise({"checks": "write"})
    client.authorise({"actions": "write"})
    fake.rename_repository(REPO, NEW)
    with pytest.raises(RepositoryMoved, match=f"moved to {NEW}"):
        client.checks.create_check_run("ODW · run", main, CheckRunFields(title="t", summary="s"))
    with pytest.raises(RepositoryMoved, match=f"moved to {NEW}"):
        client.dispatch.dispatch("odw-stage.yml", "main", {"stage": "plan", "task": "1.1",
                                                          "token": "t"})  # fmt: skip
    assert not fake.check_runs and not fake.runs
