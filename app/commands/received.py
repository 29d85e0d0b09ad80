"""A command as the App records it: the few facts of a `/odw` comment or a
check-run click that handling it reads, taken from the webhook once.

The webhook handler (`app/service/handlers/commands.py`) records one
`CommandReceived` in the delivery's transaction; the App host performs it
later (`CommandHandler.perform`). Rows recorded before commands were typed
held the whole webhook: they are read through the same two functions.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.commands.host import Where
from webhooks.payloads import CheckRunEvent, IssueCommentEvent, parse_event

COMMAND: Final = "app-command"


class CommentCommand(BaseModel):
    """A new comment with `/odw` lines, on an issue or a pull request."""

    model_config = ConfigDict(frozen=True)
    source: Literal["comment"] = "comment"
    comment_id: int
    body: str
    author: str
    author_type: str | None = None
    number: int  # the issue's or the pull request's
    on_pull_request: bool = False


class ButtonClick(BaseModel):
    """A click on a task check run's button, or GitHub's Re-run (`rerequested`)."""

    model_config = ConfigDict(frozen=True)
    source: Literal["click"] = "click"
    identifier: str
    check_run_id: int
    check_name: str
    check_app_id: int | None = None  # the App that created the check run
    external_id: str | None = None
    by: str
    by_type: str | None = None


class CommandReceived(BaseModel):
    """The outbox's `app-command`: where a command was said, and what was said."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["app-command"] = COMMAND
    installation: int
    repository: str  # OWNER/NAME
    base: str  # the repository's default branch, where ODW's runs live
    said: CommentCommand | ButtonClick = Field(discriminator="source")

    @property
    def where(self) -> Where:
        return Where(self.installation, self.repository, self.base)

    @model_validator(mode="before")
    @classmethod
    def _recorded_webhook(cls, data: Any) -> Any:
        """A row from before commands were typed: `{"event": name, "payload": webhook}`."""
        if not (isinstance(data, dict) and "event" in data and "payload" in data):
            return data
        event = parse_event(str(data["event"]), data["payload"])
        if isinstance(event, IssueCommentEvent):
            found = comment_received(event)
        elif isinstance(event, CheckRunEvent):
            found = click_received(event)
        else:
            found = None
        if found is None:
            raise ValueError(f"the recorded {data['event']} delivery holds no command")
        return found.model_dump()


def comment_received(event: IssueCommentEvent) -> CommandReceived | None:
    """The command of a new comment; None when it reached no installation or repository."""
    if event.installation_id is None or event.repository is None:
        return None
    user = event.comment.user
    said = CommentCommand(
        comment_id=event.comment.id,
        body=event.comment.body or "",
        author=user.login if user else "",
        author_type=user.type if user else None,
        number=event.issue.number,
        on_pull_request=event.on_pull_request,
    )
    return _received(event.installation_id, event.repository.full_name,
                     event.repository.default_branch, said)  # fmt: skip


def click_received(event: CheckRunEvent) -> CommandReceived | None:
    """The click of a check-run event; None when it is no click or reached no repository."""
    if event.action == "requested_action" and event.requested_action is not None:
        identifier = event.requested_action.identifier
    elif event.action == "rerequested":
        identifier = "rerequested"
    else:
        return None
    if event.installation_id is None or event.repository is None:
        return None
    run = event.check_run
    said = ButtonClick(
        identifier=identifier,
        check_run_id=run.id,
        check_name=run.name,
        check_app_id=run.app.id if run.app else None,
        external_id=run.external_id,
        by=event.sender.login if event.sender else "",
        by_type=event.sender.type if event.sender else None,
    )
    return _received(event.installation_id, event.repository.full_name,
                     event.repository.default_branch, said)  # fmt: skip


def _received(
    installation: int, repository: str, default: str | None, said: CommentCommand | ButtonClick
) -> CommandReceived:
    return CommandReceived(
        installation=installation, repository=repository, base=default or "main", said=said
    )
