"""No installation token in an exception, log line, URL, request log or git config.

Every test using the `fake` fixture is also scanned at teardown (logs captured
at DEBUG, PyGithub's and urllib3's included; request URLs; .git/config files)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from app.github import GitHubError
from app.github.client import RepositoryClient
from app.github.protocols import CheckRunFields
from tests.fakegithub import FakeGitHub, faults
from tests.fakegithub.state import Repository
from tests.github.conftest import leaked_tokens


def test_errors_and_the_request_log_never_carry_a_token(
    client: RepositoryClient,
    fake: FakeGitHub,
    repo: Repository,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("ODW_FAKE_GITHUB_REQUEST_LOG", str(log))
    sha = repo.git.sha("refs/heads/main") or ""
    errors: list[GitHubError] = []
    fake.inject("GET", "/repos/{owner}/{repo}/git/ref/{ref}", faults.server_error(503), times=6)
    fake.inject(
        "POST", "/repos/{owner}/{repo}/check-runs", faults.Fault(422, body={"message": "bad"})
    )
    attempts = [
        lambda: client.contents.branch_sha("main"),
        lambda: client.checks.create_check_run("x", sha, CheckRunFields(status="queued")),
        lambda: client.pulls.get_pull(99),
        lambda: client.comments.edit_comment(12345, "x"),
    ]
    for attempt in attempts:
        try:
            attempt()
        except GitHubError as exc:
            errors.append(exc)
    fake.tokens.clear()  # revoked: the next call is refused with 401
    with pytest.raises(GitHubError) as caught:
        client.pulls.get_pull(1)
    errors.append(caught.value)
    assert [e.status for e in errors] == [503, 422, 404, 404, 401]
    texts = {f"error {i}": f"{e!s} {e!r} {e.__dict__}" for i, e in enumerate(errors)}
    texts["the request log"] = log.read_text()
    texts["a log line"] = caplog.text
    minted = [r for r in fake.requests if r["path"].endswith("/access_tokens")]
    assert minted, "tokens were minted, so there was something to leak"
    assert leaked_tokens(fake, texts) == []


def test_the_scan_finds_a_token_where_one_was_written(
    client: RepositoryClient, fake: FakeGitHub, tmp_path: Path
) -> None:
    token = client.git_token()
    config = tmp_path / "clone/.git/config"
    config.parent.mkdir(parents=True)
    config.write_text(f'[remote "origin"]\n\turl = https://x-access-token:{token}@example.com/r\n')
    assert leaked_tokens(fake, {str(config): config.read_text()}) == [
        f"an installation token appears in {config}"
    ]
    config.unlink()  # or this test's own teardown scan fails, as it should
