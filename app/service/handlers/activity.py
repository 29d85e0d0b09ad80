"""Record the events ODW will act on, typed, for the handlers that act on them."""

from __future__ import annotations

from app.service.outcome import HandlerContext, Ignore
from webhooks.payloads import GitHubEvent
from webhooks.router import Router

router = Router()

RECORDED = (
    "push",
    "pull_request",
    "issue_comment",
    "check_run",
    "check_suite",
    "status",
    "workflow_run",
    "workflow_job",
)


def record(event: GitHubEvent, ctx: HandlerContext) -> None:
    ctx.store.activity.record(
        ctx.delivery_id,
        event.event,
        event.action,
        installation_id=event.installation_id,
        repository=event.repo,
        subject=event.subject(),
        data=event.model_dump(mode="json", exclude_none=True),
        tx=ctx.tx,
    )


def record_app_event(event: GitHubEvent, ctx: HandlerContext) -> None:
    if event.installation_id is None:
        # A repository or organisation webhook, not a delivery to the App.
        raise Ignore(f"{event.event} delivery has no installation: not sent to the App")
    record(event, ctx)


for _name in RECORDED:
    router.register(_name)(record_app_event)
