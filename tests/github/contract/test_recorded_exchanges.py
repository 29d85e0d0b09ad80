"""The client (`app/github`) against GitHub's own answers, not the fake's:
real exchanges recorded by Octokit (`@octokit/fixtures`, see recordings.py),
replayed at github.com's root and at a GitHub Enterprise Server root
(`/api/v3`). Where ODW's routes have no recording, tests/fakegithub/README.md
says so ("Recorded exchanges")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from app.github import GitHubApp
from app.github.auth import AppCredentials, Mint, TokenCache
from app.github.client import RepositoryClient
from app.github.errors import Unprocessable
from app.github.retry import RetryPolicy
from app.github.transport import Transport
from tests.github.contract.recordings import RECORDED_TOKEN, scenario, serve

ROOTS = ["https://api.github.com", "https://ghe.example.com/api/v3"]
ORG = "octokit-fixture-org"
ROOT_IDS = ["github.com", "ghes-api-v3"]


class RecordedToken(TokenCache):
    """The recordings' installation token. Minting one (POST
    /app/installations/{id}/access_tokens) has no recording; the fake GitHub
    covers it (tests/github/test_tokens.py)."""

    def get(
        self,
        api: str,
        installation_id: int,
        repository: str,
        permissions: Mapping[str, str],
        mint: Mint,
    ) -> str:
        return RECORDED_TOKEN


class NoSleep:
    def sleep(self, seconds: float) -> None:
        raise AssertionError(f"a recorded answer made the client wait {seconds}s")


@cache
def _pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture(params=ROOTS, ids=ROOT_IDS)
def root(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def app(root: str) -> GitHubApp:
    return GitHubApp(
        AppCredentials(1, _pem()),
        root,
        tokens=RecordedToken(),
        policy=RetryPolicy(jitter=lambda: 1.0),
        sleeper=NoSleep(),
    )


@pytest.fixture
def github() -> Iterator[responses.RequestsMock]:
    """Every recorded answer registered must be asked for; nothing else is answered."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


def _sent(github: responses.RequestsMock) -> list[tuple[str, str]]:
    """(method, URL) of each request, the port PyGithub spells out dropped."""
    return [
        (str(c.request.method), str(c.request.url).replace(":443/", "/", 1)) for c in github.calls
    ]


def _link(url: str) -> tuple[str, dict[str, list[str]]]:
    """A URL's path and query, the order of its parameters aside."""
    parts = urlsplit(url)
    return parts.path, parse_qs(parts.query)


def _repo(app: GitHubApp, name: str) -> RepositoryClient:
    return app.repository(1, f"{ORG}/{name}")


def test_a_repository_read_gives_its_default_branch(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    (get,) = scenario("get-repository")
    serve(github, root, get)
    assert _repo(app, "hello-world").contents.default_branch() == get.response["default_branch"]


def test_a_renamed_repository_is_read_through_githubs_301_to_its_id(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    """GET on the old name answers 301 to `/repositories/{id}`; the client follows
    it and reads the renamed repository (the 307 answer to a write is item 6's)."""
    _, moved, by_id, _, _ = scenario("rename-repository")
    assert (moved.status, by_id.status) == (301, 200)
    serve(github, root, moved)
    serve(github, root, by_id)
    branch = _repo(app, "rename-repository").contents.default_branch()
    assert branch == by_id.response["default_branch"]
    assert _sent(github) == [
        ("GET", f"{root}/repos/{ORG}/rename-repository"),
        ("GET", f"{root}/repositories/1000"),
    ]


def test_every_page_of_a_listing_is_read_through_githubs_link_by_repository_id(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    pages = scenario("paginate-issues")
    serve(github, root, pages[0], own_page_size=True)
    for page in pages[1:]:
        serve(github, root, page)
    transport = Transport(app.context, 1, f"{ORG}/paginate-issues", {"issues": "read"})
    items = transport.paginate("/issues")
    assert [i["number"] for i in items] == [i["number"] for p in pages for i in p.response]
    assert len(items) == 13
    followed = [_link(url) for _, url in _sent(github)][1:]
    assert followed == [_link(root + p.path) for p in pages[1:]]
    assert all(path == urlsplit(root).path + "/repositories/1000/issues" for path, _ in followed)


def test_commit_statuses_are_a_bare_list_the_client_pages_through(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    listing = scenario("create-status")[2]
    assert listing.path.endswith("/statuses")
    serve(github, root, listing)
    transport = Transport(app.context, 1, f"{ORG}/create-status", {"statuses": "read"})
    sha = listing.path.split("/")[-2]
    statuses = transport.paginate(f"/commits/{sha}/statuses")
    assert [(s["context"], s["state"]) for s in statuses] == [
        (s["context"], s["state"]) for s in listing.response
    ]


def test_a_422_is_a_typed_refusal_with_githubs_message_and_is_not_retried(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    (refused,) = scenario("errors")
    assert refused.status == 422
    serve(github, root, refused)
    transport = Transport(app.context, 1, f"{ORG}/errors", {"issues": "write"})
    with pytest.raises(Unprocessable) as caught:
        transport.call(
            "labels.create",
            lambda: transport.request("POST", "/labels", body=refused.body),
            kind="create",
        )
    assert caught.value.status == 422
    assert "Validation Failed" in caught.value.reason and "invalid" in caught.value.reason
    assert len(github.calls) == 1


def test_a_branch_is_created_moved_and_deleted_as_github_answered(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    _, created, moved, _, deleted = scenario("git-refs")
    assert (created.status, moved.status, deleted.status) == (201, 200, 204)
    for exchange in (created, moved, deleted):
        serve(github, root, exchange)
    refs = _repo(app, "git-refs").refs
    refs.create_branch("test", created.body["sha"])
    refs.move_branch("test", moved.body["sha"], force=True)
    refs.delete_branch("test")
    assert _sent(github) == [
        ("POST", f"{root}/repos/{ORG}/git-refs/git/refs"),
        ("PATCH", f"{root}/repos/{ORG}/git-refs/git/refs/heads/test"),
        ("DELETE", f"{root}/repos/{ORG}/git-refs/git/refs/heads/test"),
    ]


def test_a_directory_is_not_read_as_a_file(
    app: GitHubApp, github: responses.RequestsMock, root: str
) -> None:
    """The recorded directory listing (`contents/`): a list, which `file_at`
    refuses as no file. (The recorded file read asked for the raw media type,
    which ODW does not use.)"""
    listing, raw = scenario("get-content")
    assert isinstance(listing.response, list) and isinstance(raw.response, str)
    serve(github, root, listing)
    assert _repo(app, "hello-world").contents.file_at("", "master") is None
