"""What GitHub answers that the client once did not expect: a completed run
whose artifact list is still empty, an expired artifact, a file over 1 MB,
lists paged by repository id, a triage collaborator's permission. Each case
is the fake answering as GitHub does (tests/fakegithub/README.md cites where
that is written) and the client coping."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from app.commands.permission import PermissionCache
from app.github import artifacts as artifact_listing
from app.github.client import RepositoryClient
from app.github.errors import ArtifactExpired, FileTooLarge
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.state import Installation, Repository
from tests.github.conftest import REPO, RecordingSleeper

INPUTS = {"stage": "plan", "task": "1.1", "token": "tok"}
MANY = 130  # over the 100 a page the client asks for


def _run(client: RepositoryClient, fake: FakeGitHub) -> int:
    run = client.dispatch.dispatch("odw-stage.yml", "main", INPUTS)
    fake.start_run(run.run_id)
    return run.run_id


def _get(fake: FakeGitHub, installation: Installation, url: str) -> requests.Response:
    held = fake.installations[installation.id]
    token = fake.mint_token(held, None, dict(held.permissions))
    return requests.get(url, headers={"Authorization": f"token {token.token}"}, timeout=10)


# -- artifacts ---------------------------------------------------------------------


def test_an_artifact_list_still_empty_after_completion_is_read_again_until_it_appears(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    run_id = _run(client, fake)
    fake.artifact_listing_delay = 1.0  # real seconds: the fake lists it a second late
    fake.upload_artifact(run_id, "odw-verdict", {"verdict.json": "{}"})
    fake.complete_run(run_id)
    assert client.artifacts.list_artifacts(run_id) == []  # GitHub's answer at first

    def real_sleep(seconds: float) -> None:
        sleeper.waits.append(seconds)
        threading_wait(seconds)

    sleeper.sleep = real_sleep  # type: ignore[method-assign]
    found = client.artifacts.find_artifact(run_id, "odw-verdict")
    assert found is not None and found.name == "odw-verdict"
    assert 1 <= len(sleeper.waits) < artifact_listing.LISTING_READS


def threading_wait(seconds: float) -> None:
    import threading

    threading.Event().wait(seconds)


def test_an_artifact_that_never_appears_is_given_up_after_a_bounded_few_reads(
    client: RepositoryClient, fake: FakeGitHub, sleeper: RecordingSleeper
) -> None:
    run_id = _run(client, fake)
    fake.complete_run(run_id)
    before = len(fake.requests)
    assert client.artifacts.find_artifact(run_id, "odw-verdict") is None
    reads = [r for r in fake.requests[before:] if r["path"].endswith("/artifacts")]
    assert len(reads) == artifact_listing.LISTING_READS
    assert sleeper.waits == [artifact_listing.LISTING_PAUSE] * (artifact_listing.LISTING_READS - 1)


def test_an_expired_artifact_is_listed_expired_and_its_download_is_refused_as_expired(
    client: RepositoryClient, fake: FakeGitHub, installation: Installation, tmp_path: Path
) -> None:
    run_id = _run(client, fake)
    fake.upload_artifact(run_id, "odw-verdict", {"verdict.json": "{}"})
    fake.complete_run(run_id)
    (fresh,) = client.artifacts.list_artifacts(run_id)
    fake.expire_artifacts(run_id)
    (listed,) = client.artifacts.list_artifacts(run_id)
    assert listed.expired is True
    raw = _get(fake, installation, f"{fake.api_url}/repos/{REPO}/actions/artifacts/{fresh.id}/zip")
    assert raw.status_code == 410
    # Listed before it expired, downloaded after: GitHub's 410 is a typed error.
    with pytest.raises(ArtifactExpired, match="has expired"):
        client.artifacts.download_artifact(fresh, tmp_path / "out", 10_000)
    assert not (tmp_path / "out").exists()


# -- contents ------------------------------------------------------------------------


def test_a_file_over_one_megabyte_is_a_typed_error_naming_its_size(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, installation: Installation
) -> None:
    big = "x" * (1024 * 1024 + 1)
    sha = repo.git.commit_files(
        "main", {"docs/roadmap.md": big}, "a large roadmap", parent=_head(repo)
    )
    token = fake.mint_token(fake.installations[installation.id], None, {"contents": "read"})
    answer = requests.get(
        f"{fake.api_url}/repos/{REPO}/contents/docs/roadmap.md",
        params={"ref": sha},
        headers={"Authorization": f"token {token.token}"},
        timeout=10,
    ).json()
    assert (answer["encoding"], answer["content"], answer["size"]) == ("none", "", len(big))
    with pytest.raises(FileTooLarge, match=r"docs/roadmap.md is 1048577 bytes, over the 1 MB"):
        client.contents.file_at("docs/roadmap.md", sha)
    small = repo.git.commit_files("main", {"docs/roadmap.md": "# R\n"}, "smaller", parent=sha)
    assert client.contents.file_at("docs/roadmap.md", small) == b"# R\n"


# -- pages -----------------------------------------------------------------------


def _jobs(client: RepositoryClient, fake: FakeGitHub, repo: Repository) -> tuple[int, str]:
    run_id = _run(client, fake)
    run = fake.runs[run_id]
    run.jobs += [s.Job(fake.next_id(), f"job {i}") for i in range(MANY)]
    listed = client.runs.list_jobs(run_id)
    assert len({j.id for j in listed}) == len(run.jobs)
    return len(listed), f"/actions/runs/{run_id}/jobs"


def _artifacts(client: RepositoryClient, fake: FakeGitHub, repo: Repository) -> tuple[int, str]:
    run_id = _run(client, fake)
    for i in range(MANY):
        fake.upload_artifact(run_id, f"part-{i}", {"f": str(i)})
    fake.complete_run(run_id)
    listed = client.artifacts.list_artifacts(run_id)
    assert sorted(a.name for a in listed) == sorted(f"part-{i}" for i in range(MANY))
    assert client.artifacts.find_artifact(run_id, f"part-{MANY - 1}") is not None
    return len(listed), f"/actions/runs/{run_id}/artifacts"


def _head(repo: Repository) -> str:
    return repo.git.sha("refs/heads/main") or ""


def _statuses(client: RepositoryClient, fake: FakeGitHub, repo: Repository) -> tuple[int, str]:
    fake.installations[repo.installation_id or 0].permissions["statuses"] = "read"
    for i in range(MANY):
        fake.set_status(REPO, _head(repo), f"ci/{i}", "success")
    fake.set_status(REPO, _head(repo), "ci/first", "failure")
    states = client.check_states.check_states(_head(repo))
    assert states == {**{f"ci/{i}": "success" for i in range(MANY)}, "ci/first": "failure"}
    return len(states), f"/commits/{_head(repo)}/statuses"


def _check_runs(client: RepositoryClient, fake: FakeGitHub, repo: Repository) -> tuple[int, str]:
    fake.add_app(77, "other-ci")
    for i in range(MANY):
        fake.create_check_run_as_app(77, REPO, f"lint {i}", _head(repo), conclusion="success")
    fake.create_check_run_as_app(77, REPO, "ODW · 1.1", _head(repo), external_id="mine")
    found = client.checks.check_runs_for_ref(_head(repo))
    assert [r.external_id for r in found if r.name == "ODW · 1.1"] == ["mine"]
    assert len(found) == MANY + 1
    return len(found), f"/commits/{_head(repo)}/check-runs"


Lister = Callable[[RepositoryClient, FakeGitHub, Repository], tuple[int, str]]


@pytest.mark.parametrize(
    "lister",
    [_jobs, _artifacts, _statuses, _check_runs],
    ids=["jobs", "artifacts", "statuses", "check-runs"],
)
def test_every_list_the_client_reads_is_followed_through_github_pages_by_repository_id(
    client: RepositoryClient,
    fake: FakeGitHub,
    repo: Repository,
    installation: Installation,
    lister: Lister,
) -> None:
    count, suffix = lister(client, fake, repo)
    assert count > 100
    first = _get(fake, installation, f"{fake.api_url}/repos/{REPO}{suffix}?per_page=100")
    link = first.headers["Link"]
    expected = f'<{fake.api_url}/repositories/{repo.id}{suffix}?per_page=100&page=2>; rel="next"'
    assert link.startswith(expected), link
    pages = [r for r in fake.requests if r["path"].endswith(suffix) and r["query"].get("page")]
    assert pages, "the client read only the first page"


# -- permissions ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "permission", "writes"),
    [
        ("read", "read", False),
        ("triage", "read", False),
        ("write", "write", True),
        ("maintain", "write", True),
        ("admin", "admin", True),
    ],
    ids=["read", "triage", "write", "maintain", "admin"],
)
def test_a_collaborator_permission_is_answered_as_github_maps_roles_and_triage_never_writes(
    client: RepositoryClient,
    fake: FakeGitHub,
    installation: Installation,
    role: str,
    permission: str,
    writes: bool,
) -> None:
    fake.add_collaborator(REPO, "carol", role)
    answer = client.permissions.permission_of("carol")
    assert (answer.permission, answer.role_name) == (permission, role)
    decision = PermissionCache().check(REPO, "carol", "write", client.permissions.permission_of)
    assert decision.allowed is writes
    assert decision.have == role
    triage = PermissionCache().check(REPO, "carol", "triage", client.permissions.permission_of)
    assert triage.allowed is (role != "read")
