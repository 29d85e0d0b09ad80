"""A command is recorded as the few facts handling it reads, taken from GitHub's
webhook once; a row recorded before commands were typed (the whole webhook)
still reads as the same command."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.commands.received import (
    ButtonClick,
    CommandReceived,
    CommentCommand,
    click_received,
    comment_received,
)
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.state import Installation, Repository
from webhooks.payloads import CheckRunEvent, IssueCommentEvent, parse_event


def _comment(fake: FakeGitHub, repo: Repository, body: str) -> s.Comment:
    now = fake.now()
    return s.Comment(fake.next_id(), repo.full_name, 7, body, "mona", "User", now, now)


def test_a_comment_is_recorded_as_its_command_and_an_old_row_reads_the_same(
    fake: FakeGitHub, repo: Repository, installation: Installation
) -> None:
    comment = _comment(fake, repo, "/odw status 1.2")
    payload = fake.webhooks.payload("issue_comment", "created", comment=comment)
    event = parse_event("issue_comment", payload)
    assert isinstance(event, IssueCommentEvent)

    received = comment_received(event)

    assert received is not None
    assert (received.installation, received.repository) == (installation.id, repo.full_name)
    assert received.base == repo.default_branch
    assert received.said == CommentCommand(
        comment_id=comment.id, body="/odw status 1.2", author="mona", author_type="User",
        number=7, on_pull_request=False,
    )  # fmt: skip
    # The row as written, and as written before commands were typed.
    row = received.model_dump(mode="json", exclude={"kind"})
    assert CommandReceived.model_validate(row) == received
    legacy = {"event": "issue_comment", "payload": payload}
    assert CommandReceived.model_validate(legacy) == received


@pytest.mark.parametrize(
    ("action", "identifier", "said"),
    [
        ("requested_action", "retry", "retry"),
        ("rerequested", None, "rerequested"),
        ("completed", None, None),
    ],
    ids=["a-button", "github-re-run", "a-completion-is-no-click"],
)
def test_a_check_run_click_is_recorded_as_its_button(
    fake: FakeGitHub, repo: Repository, installation: Installation, action: str,
    identifier: str | None, said: str | None,
) -> None:  # fmt: skip
    sha = repo.git.sha("refs/heads/main")
    assert sha is not None
    run = fake.create_check_run_as_app(
        fake.app_id, repo.full_name, "ODW · 1.2", sha, external_id="x-1"
    )
    payload = fake.webhooks.payload("check_run", action, check_run=run, identifier=identifier)
    event = parse_event("check_run", payload)
    assert isinstance(event, CheckRunEvent)

    received = click_received(event)

    if said is None:
        assert received is None
        return
    assert received is not None and isinstance(received.said, ButtonClick)
    assert received.said.identifier == said
    assert (received.said.check_run_id, received.said.check_name) == (run.id, "ODW · 1.2")
    assert (received.said.check_app_id, received.said.external_id) == (fake.app_id, "x-1")
    assert received.where.repository == repo.full_name
    legacy = {"event": "check_run", "payload": payload}
    assert CommandReceived.model_validate(legacy) == received


def test_an_old_row_without_a_command_is_refused_with_the_reason(
    fake: FakeGitHub, repo: Repository, installation: Installation
) -> None:
    sha = repo.git.sha("refs/heads/main")
    assert sha is not None
    run = fake.create_check_run_as_app(fake.app_id, repo.full_name, "ODW · 1.2", sha)
    payload = fake.webhooks.payload("check_run", "completed", check_run=run)
    with pytest.raises(ValidationError, match="holds no command"):
        CommandReceived.model_validate({"event": "check_run", "payload": payload})
