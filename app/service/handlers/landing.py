"""Check webhooks that wake a landing waiting for a pull request's required checks.

`check_suite` and `check_run` completions and `status` changes poke the head
SHA they are about (`app.gitops.pr_checks.CHECKS_WAKE`); a landing waiting on
that head re-reads its checks at once instead of at its next poll. Nothing is
written: a lost or late delivery only costs the poll interval.
"""

from __future__ import annotations

from app.gitops.pr_checks import CHECKS_WAKE
from app.service.outcome import HandlerContext
from webhooks.payloads import CheckRunEvent, CheckSuiteEvent, StatusEvent
from webhooks.router import Router

router = Router()


@router.register("check_suite", "completed")
def suite_completed(event: CheckSuiteEvent, ctx: HandlerContext) -> None:
    CHECKS_WAKE.poke(event.check_suite.head_sha)


@router.register("check_run", "completed")
def check_completed(event: CheckRunEvent, ctx: HandlerContext) -> None:
    CHECKS_WAKE.poke(event.check_run.head_sha)


@router.register("status")
def status_changed(event: StatusEvent, ctx: HandlerContext) -> None:
    CHECKS_WAKE.poke(event.sha)
