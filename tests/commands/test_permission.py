"""Who may command: collaborator permission through the fake GitHub, cached briefly."""

from __future__ import annotations

import pytest

from app.commands.answers import Line, reply_body
from app.commands.permission import Decision, PermissionCache, ignored_author, level_of, reaches
from app.core.repo_config import ConfigProblem, parse_repo_config
from app.github.client import RepositoryClient
from app.github.protocols import Permission
from tests.fakegithub import FakeGitHub
from tests.github.conftest import REPO


def _permission_reads(fake: FakeGitHub) -> int:
    return sum(1 for r in fake.requests if r["path"].endswith("/permission"))


@pytest.mark.parametrize(
    ("role", "need", "allowed"),
    [
        ("read", "write", False),
        ("triage", "write", False),
        ("write", "write", True),
        ("write", "maintain", False),
        ("maintain", "maintain", True),
        ("maintain", "admin", False),
        ("admin", "admin", True),
    ],
    ids=[
        "read-below-write",
        "triage-below-write",
        "write-reaches-write",
        "write-below-maintain",
        "maintain-reaches-maintain",
        "maintain-below-admin",
        "admin-reaches-admin",
    ],
)
def test_the_configured_level_decides(
    fake: FakeGitHub, client: RepositoryClient, role: str, need: str, allowed: bool
) -> None:
    fake.add_collaborator(REPO, "mona", role)
    decision = PermissionCache().check(REPO, "mona", need, client.permissions.permission_of)
    assert decision.allowed is allowed
    assert decision.have == role
    if not allowed:
        text = decision.refusal()
        assert f"`{need}`" in text and f"`{role}`" in text and "Nothing was changed" in text


def test_a_stranger_has_no_permission(fake: FakeGitHub, client: RepositoryClient) -> None:
    fake.user_id("stranger")  # known to GitHub, not a collaborator
    decision = PermissionCache().check(REPO, "stranger", "write", client.permissions.permission_of)
    assert not decision.allowed and decision.have == "none"


def test_a_login_github_does_not_know_has_none(client: RepositoryClient) -> None:
    decision = PermissionCache().check(REPO, "ghost-x", "write", client.permissions.permission_of)
    assert not decision.allowed and decision.have == "none"


def test_permission_is_cached_briefly(fake: FakeGitHub, client: RepositoryClient) -> None:
    now = [0.0]
    cache = PermissionCache(ttl=60, clock=lambda: now[0])
    fake.add_collaborator(REPO, "mona", "write")
    lookup = client.permissions.permission_of
    assert cache.check(REPO, "mona", "write", lookup).allowed
    assert cache.check(REPO, "Mona", "write", lookup).allowed
    assert _permission_reads(fake) == 1
    fake.add_collaborator(REPO, "mona", "read")  # demoted
    now[0] = 61.0
    assert not cache.check(REPO, "mona", "write", lookup).allowed
    assert _permission_reads(fake) == 2


@pytest.mark.parametrize(
    ("login", "kind", "bots", "ignored"),
    [
        ("odw[bot]", "Bot", ["odw[bot]"], "the App's own comment"),
        ("renovate[bot]", "Bot", [], "renovate[bot] is a bot not listed in allowedBots"),
        ("renovate[bot]", "Bot", ["renovate[bot]"], None),
        ("mona", "User", [], None),
        ("ODW[bot]", "Bot", [], "the App's own comment"),
        ("ci-robot", "Bot", [], "ci-robot is a bot not listed in allowedBots"),
        ("renovate[bot]", None, [], "renovate[bot] is a bot not listed in allowedBots"),
        ("mona", None, [], None),
    ],
    ids=[
        "own-comment-even-if-listed",
        "unlisted-bot",
        "listed-bot",
        "person",
        "own-comment-any-case",
        "bot-by-type-alone",
        "bot-by-login-alone",
        "person-without-type",
    ],
)
def test_who_is_heard(login: str, kind: str, bots: list[str], ignored: str | None) -> None:
    config = parse_repo_config({"allowedBots": bots})
    why = ignored_author(login, kind, config, "odw[bot]")
    assert why == ignored


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"commandPermission": "read"}, "commandPermission"),
        ({"commandPermission": "triage"}, "commandPermission"),
        ({"allowedBots": ["mona"]}, "not a bot login"),
        ({"integration": "rebase"}, "integration"),
    ],
    ids=["read-too-low", "triage-too-low", "bot-list-of-people", "unknown-integration"],
)
def test_odw_yml_rejects_bad_command_settings(data: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigProblem, match=says):
        parse_repo_config(data)


def test_odw_yml_command_defaults() -> None:
    config = parse_repo_config({})
    assert config.command_permission == "write"
    assert config.allowed_bots == ()
    assert config.integration == "push"
    picked = parse_repo_config({"commandPermission": "maintain", "integration": "pull-request"})
    assert picked.command_permission == "maintain" and picked.integration == "pull-request"


@pytest.mark.parametrize(
    ("have", "need", "allowed"),
    [
        ("write", "write", True),
        ("admin", "write", True),
        ("maintain", "admin", False),
        ("triage", "write", False),
        ("read", "read", True),
        ("none", "read", False),
        ("custom-role", "read", False),
    ],
    ids=["same", "above", "below-admin", "triage-below-write", "read", "none", "unknown-role"],
)
def test_levels_rank_lowest_first(have: str, need: str, allowed: bool) -> None:
    assert reaches(have, need) is allowed


def test_a_custom_role_counts_as_its_base_permission() -> None:
    assert level_of(Permission(permission="write", role_name="release-manager")) == "write"
    assert level_of(Permission(permission="write", role_name="maintain")) == "maintain"


def test_a_refusal_names_what_they_have_and_what_is_needed_and_mentions_them_once() -> None:
    text = Decision(False, "read", "write").refusal()
    assert text.startswith("this account has `read` permission on this repository;")
    reply = reply_body("<!-- m -->", "mona", [Line("/odw run", False, text, refusal=True)])
    assert reply.count("@mona") == 1
    assert "needs `write` or above" in text
    assert "Nothing was changed. Anyone who can read may use `/odw status`" in text


def test_the_cache_keeps_each_login_of_each_repository_apart(
    fake: FakeGitHub, client: RepositoryClient
) -> None:
    cache = PermissionCache(ttl=60, clock=lambda: 0.0)
    fake.add_collaborator(REPO, "mona", "write")
    fake.add_collaborator(REPO, "bob", "read")
    lookup = client.permissions.permission_of
    assert cache.level(REPO, "mona", lookup) == "write"
    assert cache.level(REPO, "bob", lookup) == "read"
    assert cache.level("octo/other", "mona", lambda _: Permission("admin", "admin")) == "admin"
    assert cache.level(REPO, "mona", lookup) == "write"
