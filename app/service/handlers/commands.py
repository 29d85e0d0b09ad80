"""Webhooks that carry maintainers' commands: `/odw` comments and check-run clicks.

Store-only, inside the delivery's transaction: a delivery with a command is
recorded as one `app-command` outbox entry keyed by the comment (or the click),
so the same delivery twice, or a comment GitHub redelivers, is performed once.
The App host performs it (`app.commands.lane`). An edited comment has no
handler here: editing never re-runs a command.
"""

from __future__ import annotations

import json

from app.commands.buttons import task_of_check
from app.commands.lane import COMMAND
from app.commands.lines import command_lines
from app.service.outcome import HandlerContext
from webhooks.payloads import CheckRunEvent, GitHubEvent, IssueCommentEvent
from webhooks.router import Router

router = Router()


def _record(event: GitHubEvent, name: str, key: str, ctx: HandlerContext) -> None:
    raw = ctx.store.inbox.get(ctx.delivery_id, tx=ctx.tx)
    payload = json.loads(raw.body) if raw is not None else event.model_dump(mode="json")
    ctx.store.outbox.enqueue(key, COMMAND, {"event": name, "payload": payload}, tx=ctx.tx)


@router.register("issue_comment", "created")
def comment_created(event: IssueCommentEvent, ctx: HandlerContext) -> None:
    if event.installation_id is None or not command_lines(event.comment.body or ""):
        return
    key = f"command/{event.installation_id}/{event.repo}/comment/{event.comment.id}"
    _record(event, "issue_comment", key, ctx)


@router.register("check_run", "requested_action")
@router.register("check_run", "rerequested")
def check_run_clicked(event: CheckRunEvent, ctx: HandlerContext) -> None:
    if event.installation_id is None or task_of_check(event.check_run.name) is None:
        return
    key = f"command/{event.installation_id}/{event.repo}/click/{ctx.delivery_id}"
    _record(event, "check_run", key, ctx)
