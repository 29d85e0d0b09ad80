"""The fake is strict: what GitHub would refuse is refused and fails the test;
faults and the request log behave as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from app.github import GitHubApp, Unprocessable
from app.github.client import RepositoryClient
from app.github.transport import Transport
from tests.fakegithub import FakeGitHub, faults
from tests.fakegithub.state import Installation


def _token(client: RepositoryClient) -> str:
    return client.git_token(write=True)


@pytest.mark.parametrize(
    ("method", "path", "body", "reason"),
    [
        ("GET", "/repos/octo/demo/no-such-thing", None, "no such route"),
        ("DELETE", "/repos/octo/demo/check-runs", None, "does not take DELETE"),
        ("POST", "/repos/octo/demo/check-runs", {"name": "x"}, "'head_sha' is a required"),
        (
            "PATCH",
            "/repos/octo/demo/check-runs/1",
            {"status": "done"},
            "is not one of",
        ),
        (
            "POST",
            "/repos/octo/demo/actions/workflows/x.yml/dispatches",
            {"ref": "main", "inputs": {str(n): "v" for n in range(26)}},
            "too many properties|has too many",
        ),
    ],
    ids=["unknown-route", "wrong-method", "missing-field", "bad-enum", "26-inputs"],
)
def test_a_request_github_would_refuse_answers_422_and_is_recorded_as_a_violation(
    client: RepositoryClient,
    fake: FakeGitHub,
    method: str,
    path: str,
    body: object,
    reason: str,
) -> None:
    answer = requests.request(
        method,
        fake.api_url + path,
        json=body,
        headers={"Authorization": f"token {_token(client)}"},
        timeout=10,
    )
    assert answer.status_code == 422
    assert len(fake.violations) == 1
    assert any(word in fake.violations[0] for word in reason.split("|"))
    with pytest.raises(AssertionError, match="requests GitHub would refuse"):
        fake.assert_no_violations()
    fake.violations.clear()  # this test sent them on purpose


def test_a_repository_outside_the_installation_gets_no_token_and_no_access(
    client: RepositoryClient, fake: FakeGitHub, installation: Installation
) -> None:
    fake.create_repository("octo/other", {"a": "b"})
    app = GitHubApp(client.context.credentials, fake.api_url, tokens=client.context.tokens)
    with pytest.raises(Unprocessable, match="not accessible to the parent installation"):
        app.repository(installation.id, "octo/other").contents.branch_sha("main")
    answer = requests.get(
        f"{fake.api_url}/repos/octo/other/git/ref/heads/main",
        headers={"Authorization": f"token {_token(client)}"},
        timeout=10,
    )
    assert answer.status_code == 404


def test_faults_must_name_a_real_github_route(fake: FakeGitHub) -> None:
    with pytest.raises(ValueError, match="not a GitHub route"):
        fake.inject("GET", "/repos/{owner}/{repo}/nothing", faults.server_error())


def test_the_request_log_has_one_json_object_per_request(
    client: RepositoryClient,
    fake: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("ODW_FAKE_GITHUB_REQUEST_LOG", str(log))
    client.permissions.permission_of("octo")
    fake.inject("GET", "/repos/{owner}/{repo}/git/ref/{ref}", faults.server_error(502))
    client.contents.branch_sha("main")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["method"], e["path"], e["status"]) for e in lines] == [
        ("POST", f"/app/installations/{client.installation_id}/access_tokens", 201),
        ("GET", "/repos/octo/demo/collaborators/octo/permission", 200),
        ("POST", f"/app/installations/{client.installation_id}/access_tokens", 201),
        ("GET", "/repos/octo/demo/git/ref/heads/main", 502),
        ("GET", "/repos/octo/demo/git/ref/heads/main", 200),
    ]
    assert set(lines[0]) == {"method", "path", "query", "status", "body"}
    assert lines[0]["body"] == {"repositories": ["demo"], "permissions": {"metadata": "read"}}
    assert lines[1]["body"] is None


def test_an_expired_installation_token_is_refused(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    token = _token(client)
    fake.advance(3601)
    answer = requests.get(
        f"{fake.api_url}/repos/octo/demo/git/ref/heads/main",
        headers={"Authorization": f"token {token}"},
        timeout=10,
    )
    assert answer.status_code == 401
    assert answer.json()["message"] == "Bad credentials"


def test_the_storage_host_refuses_a_forwarded_token(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    inputs = {"stage": "plan", "task": "1.1", "token": "t"}
    run = client.dispatch.dispatch("odw-stage.yml", "main", inputs)
    fake.upload_artifact(run.run_id, "odw-verdict", {"v.json": "{}"})
    (artifact,) = client.artifacts.list_artifacts(run.run_id)
    reader = Transport(client.context, client.installation_id, "octo/demo", {"actions": "read"})
    headers = {"Authorization": f"token {reader._token()}"}
    zip_url = f"{fake.api_url}/repos/octo/demo/actions/artifacts/{artifact.id}/zip"
    redirect = requests.get(zip_url, headers=headers, allow_redirects=False, timeout=10)
    assert redirect.status_code == 302
    assert (
        requests.get(redirect.headers["Location"], headers=headers, timeout=10).status_code == 400
    )
    assert "token was sent to the artifact storage host" in fake.violations[0]
    fake.violations.clear()
    assert requests.get(redirect.headers["Location"], timeout=10).status_code == 200
