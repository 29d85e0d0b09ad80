"""The App manifest asks for exactly what the code uses, at the lowest level.

Every port of `app/github` is driven against the fake GitHub (which enforces
each token's repository and permissions per route); the routes sent must be
exactly `app/github/permissions.ROUTES`, `app.yml` must equal the permissions
they fold to, and its events must be exactly those the service routes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.github import GitHubApp, actions, artifacts, checks, conversation, manifest, permissions
from app.github import pulls as pull_requests
from app.github.client import RepositoryClient
from app.github.errors import GitHubError
from app.service.handlers import build_router
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.github.conftest import REPO
from tests.github.drive import drive_every_port, routes_sent

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_permissions_are_exactly_what_the_routes_the_code_calls_need(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    drive_every_port(client, fake, repo, tmp_path)
    sent = routes_sent(fake) - permissions.APP_ROUTES
    # Optional permissions are not granted, so their routes are never sent.
    assert sent == set(permissions.ROUTES), "a route app/github sends has no permission entry"
    spec = manifest.load()
    assert spec["default_permissions"] == permissions.required(spec["default_events"])


def test_each_port_asks_only_for_permissions_the_manifest_grants() -> None:
    granted = manifest.load()["default_permissions"]
    asked = [
        checks.PERMISSIONS,
        conversation.COMMENT_PERMISSIONS,
        conversation.REACTION_PERMISSIONS,
        conversation.PERMISSION_PERMISSIONS,
        pull_requests.PULL_PERMISSIONS,
        pull_requests.MERGE_PERMISSIONS,
        pull_requests.READ_PERMISSIONS,
        pull_requests.REF_PERMISSIONS,
        actions.DISPATCH_PERMISSIONS,
        actions.RUN_PERMISSIONS,
        artifacts.PERMISSIONS,
    ]
    for needs in asked:
        assert permissions.missing(granted, needs) == {}, needs


def test_manifest_events_are_exactly_the_events_the_router_registers() -> None:
    routed = build_router().events() - permissions.APP_EVENTS - set(permissions.OPTIONAL_EVENTS)
    assert set(manifest.load()["default_events"]) == routed


def test_optional_permissions_are_used_when_granted_and_their_routes_are_known(
    fake: FakeGitHub, repo: Repository, app: GitHubApp, tmp_path: Path
) -> None:
    optional = dict([*permissions.OPTIONAL_ROUTES.values(), *permissions.OPTIONAL_EVENTS.values()])
    installation = fake.install(
        "octo", [REPO], {**manifest.load()["default_permissions"], **optional}
    )
    drive_every_port(app.repository(installation.id, REPO), fake, repo, tmp_path)
    sent = routes_sent(fake) - permissions.APP_ROUTES
    assert sent == set(permissions.ROUTES) | set(permissions.OPTIONAL_ROUTES)
    assert not set(optional) & set(manifest.load()["default_permissions"])


LOWERED = {"write": "read", "read": "none"}


@pytest.mark.parametrize(
    "permission",
    sorted(set(permissions.required()) - set(permissions.ALWAYS)),
    ids=lambda p: f"{p}-one-level-lower",
)
def test_every_manifest_permission_is_at_the_lowest_level_that_works(
    fake: FakeGitHub,
    repo: Repository,
    app: GitHubApp,
    tmp_path: Path,
    permission: str,
) -> None:
    """With any one permission a level lower, some port is refused by GitHub."""
    granted = dict(manifest.load()["default_permissions"])
    granted[permission] = LOWERED[granted[permission]]
    granted = {k: v for k, v in granted.items() if v != "none"}
    installation = fake.install("octo", [REPO], granted)
    with pytest.raises(GitHubError):
        drive_every_port(app.repository(installation.id, REPO), fake, repo, tmp_path)


def test_odw_app_manifest_prints_githubs_manifest_format() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli.main",
            "app",
            "manifest",
            "--url",
            "https://odw.example.org/",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    data = json.loads(out)
    spec = manifest.load()
    assert data["name"] == spec["name"]
    assert data["url"] == "https://odw.example.org"
    assert data["hook_attributes"]["url"] == "https://odw.example.org/webhooks"
    assert data["public"] is False
    assert data["default_permissions"] == spec["default_permissions"]
    assert data["default_events"] == spec["default_events"]


@pytest.mark.parametrize(
    "url",
    [
        "http://odw.example.org",
        "odw.example.org",
        "https://odw.example.org/?x=1",
        "https://u:p@h.org",
    ],
    ids=["plain-http", "no-scheme", "query", "credentials"],
)
def test_odw_app_manifest_refuses_a_url_github_should_not_post_to(url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.main", "app", "manifest", "--url", url],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--url" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_every_contracted_route_has_a_permission_entry() -> None:
    """The PyGithub contract lists every route the adapter may send (its own
    test fails on a new one); each must say what permission it needs."""
    from tests.github.test_pygithub_contract import CONTRACT

    known = set(permissions.ROUTES) | set(permissions.OPTIONAL_ROUTES)
    assert set(CONTRACT.values()) - permissions.APP_ROUTES <= known
