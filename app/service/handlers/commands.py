"""Webhooks that carry maintainers' commands: `/odw` comments and check-run clicks.

Store-only, inside the delivery's transaction: a delivery with a command is
recorded as one `CommandReceived` outbox entry keyed by the comment (or the
click), so the same delivery twice, or a comment GitHub redelivers, is
performed once. The App host performs it (`app.apphost.performers.command`). An edited
comment has no handler here: editing never re-runs a command.
"""

from __future__ import annotations

from app.apphost.app_effects import enqueue
from app.commands.buttons import task_of_check
from app.commands.lines import command_lines
from app.commands.received import click_received, comment_received
from app.service.outcome import HandlerContext
from webhooks.payloads import CheckRunEvent, IssueCommentEvent
from webhooks.router import Router

router = Router()


@router.register("issue_comment", "created")
def comment_created(event: IssueCommentEvent, ctx: HandlerContext) -> None:
    received = comment_received(event)
    if received is None or not command_lines(event.comment.body or ""):
        return
    key = f"command/{received.installation}/{event.repo}/comment/{event.comment.id}"
    enqueue(ctx.store, key, received, tx=ctx.tx)


@router.register("check_run", "requested_action")
@router.register("check_run", "rerequested")
def check_run_clicked(event: CheckRunEvent, ctx: HandlerContext) -> None:
    received = click_received(event)
    if received is None or task_of_check(event.check_run.name) is None:
        return
    key = f"command/{received.installation}/{event.repo}/click/{ctx.delivery_id}"
    enqueue(ctx.store, key, received, tx=ctx.tx)
