"""GitHub's size limits, end to end over HTTP: the fake refuses an over-long
comment, pull request body or check run output with 422 as GitHub does, and
every ODW writer fits (`app/core/github_limits.py`), cut with a visible note."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.github_limits import BODY_LIMIT, CHECK_OUTPUT_LIMIT, fit
from app.github import Unprocessable
from app.github.client import RepositoryClient
from app.github.protocols import CheckRunFields
from app.github.transport import Transport
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository

REPO = "octo/demo"
NOTE = "cut by ODW"
# The 90,388-character reply a stranger once produced, with multi-byte text.
LONG = "é @x " * 18_078


def _send(client: RepositoryClient, verb: str, suffix: str, body: dict[str, Any]) -> None:
    """`body` sent as given, no ODW writer in between (errors typed as the adapters' are)."""
    raw = Transport(client.context, client.installation_id, client.full_name, {
        "issues": "write", "pull_requests": "write", "checks": "write",
    })  # fmt: skip
    raw.call("raw", lambda: raw.request(verb, suffix, body=body), kind="update")


def _pull(client: RepositoryClient, repo: Repository) -> int:
    base = repo.git.sha("refs/heads/main")
    repo.git.commit_files("roadmap-1-1", {"x.txt": "x"}, "x", parent=base)
    return client.pulls.create_pull("roadmap-1-1", "main", "1.1", "body").number


def test_the_fake_refuses_over_long_bodies_as_github_does(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = _pull(client, repo)
    comments = f"/issues/{number}/comments"
    before = dict(fake.comments)
    with pytest.raises(Unprocessable, match="body is too long"):
        _send(client, "POST", comments, {"body": "x" * (BODY_LIMIT + 1)})
    assert fake.comments == before
    _send(client, "POST", comments, {"body": "x" * BODY_LIMIT})
    assert len(fake.comments) == len(before) + 1
    with pytest.raises(Unprocessable, match="body is too long"):
        _send(client, "PATCH", f"/pulls/{number}", {"body": "x" * (BODY_LIMIT + 1)})
    assert fake.pulls[(REPO, number)].body == "body"
    sha = repo.git.sha("refs/heads/main")
    # Bytes, not characters: 40,000 two-byte characters are 80,000 bytes.
    output = {"title": "t", "summary": "é" * 40_000}
    with pytest.raises(Unprocessable, match="maximum bytesize"):
        _send(client, "POST", "/check-runs", {"name": "n", "head_sha": sha, "output": output})
    assert fake.check_runs == {}


def test_every_writer_fits_githubs_limits_with_a_visible_note(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = _pull(client, repo)
    comment = client.comments.create_comment(number, LONG)
    held = fake.comments[comment.id].body
    assert len(held) <= BODY_LIMIT and held.endswith(
        f"({NOTE}: GitHub takes at most 65,536 bytes here)"
    )
    client.comments.edit_comment(comment.id, LONG + LONG)
    assert len(fake.comments[comment.id].body) <= BODY_LIMIT
    client.pulls.update_pull(number, body=LONG)
    assert NOTE in fake.pulls[(REPO, number)].body
    sha = repo.git.sha("refs/heads/main")
    assert sha
    run = client.checks.create_check_run(
        "ODW · 1.1", sha, CheckRunFields(title="t", summary=LONG, text=LONG)
    )
    output = fake.check_runs[run.id].output
    assert len(output["summary"].encode()) <= CHECK_OUTPUT_LIMIT and NOTE in output["summary"]
    assert len(output["text"].encode()) <= CHECK_OUTPUT_LIMIT and NOTE in output["text"]


@pytest.mark.parametrize("limit", [100, 65_535, 65_536], ids=["small", "check-output", "body"])
def test_fit_cuts_to_the_byte_and_never_splits_a_character(limit: int) -> None:
    text = "aé€😀" * 40_000
    cut = fit(text, limit)
    assert limit - 4 < len(cut.encode()) <= limit and NOTE in cut
    assert text.startswith(cut[: cut.index("\n\n…")])
    assert fit("short", limit) == "short"
