"""Webhooks that move ODW runs: pushes to the base, finished stage runs, closed task PRs.

Each writes to the store only, inside the delivery's transaction (`ctx.tx`), so
a delivery processed twice changes nothing (they never `Ignore` a delivery,
so the activity handler's record of it stays): a start or an ingestion is an
outbox entry under a key, and a closed PR is a core input the run records once.
The GitHub work happens in the App host's executor (`app/apphost`).
"""

from __future__ import annotations

import logging

from app.apphost import api
from app.apphost.runs import RunKey, find_open
from app.apphost.stage_runs import attempt_of_run, job_noted, note_job
from app.core.naming import task_id_from_branch
from app.core.ownership import PullFacts
from app.github.actions import run_from_json
from app.service.outcome import HandlerContext
from webhooks.payloads import PullRequestEvent, PushEvent, WorkflowJobEvent, WorkflowRunEvent
from webhooks.router import Router

log = logging.getLogger("odw.apphost")
router = Router()

# ODW's own commits on the base (a landing, a tick of a task a person merged)
# carry it; they never start a run.
ODW_TRAILER = "ODW-Run:"


def _where(
    event: PushEvent | PullRequestEvent | WorkflowRunEvent | WorkflowJobEvent,
) -> tuple[int, str] | None:
    if event.installation_id is None or event.repo is None:
        return None  # not sent to the App (the activity handler says so)
    return event.installation_id, event.repo


def _skip(
    event: PushEvent | PullRequestEvent | WorkflowRunEvent | WorkflowJobEvent, why: str
) -> None:
    """Nothing for runs to do; the delivery is still recorded by the activity handler."""
    log.debug("%s: %s", event.subject(), why)


@router.register("push")
def on_push(event: PushEvent, ctx: HandlerContext) -> None:
    """A push to the default branch starts or continues a run when odw.yml says auto."""
    where = _where(event)
    if where is None:
        return
    installation, repo = where
    default = event.repository.default_branch if event.repository else None
    if not default or event.ref != f"refs/heads/{default}" or event.deleted:
        _skip(event, "not a push to the default branch")
        return
    head = event.head_commit.message if event.head_commit else ""
    if head and ODW_TRAILER in head:
        _skip(event, "ODW's own commit")
        return
    by = event.sender.login if event.sender else "push"
    api.request_start(
        ctx.store,
        RunKey(installation, repo, default),
        by=by,
        sha=event.after,
        only_if_auto=True,
        before=event.before,
        tx=ctx.tx,
    )


@router.register("workflow_run", "completed")
def on_workflow_run(event: WorkflowRunEvent, ctx: HandlerContext) -> None:
    """A finished stage run, as the delivery describes it, is judged by the executor
    (once per attempt)."""
    where = _where(event)
    if where is None:
        return
    installation, repo = where
    run = event.workflow_run
    if run.event not in (None, "workflow_dispatch"):
        _skip(event, f"workflow run {run.id} was not dispatched (event {run.event})")
        return
    api.request_ingest(
        ctx.store,
        installation=installation,
        repository=repo,
        workflow_run=run.id,
        attempt=run.run_attempt or 1,
        run=run_from_json(run.model_dump(mode="json")),
        tx=ctx.tx,
    )


@router.register("workflow_job", "completed")
def on_workflow_job(event: WorkflowJobEvent, ctx: HandlerContext) -> None:
    """A stage's job finished: its link is noted for the views now, so judging
    its run (whose delivery follows) reads no job list."""
    where = _where(event)
    job = event.workflow_job
    if where is None or not job.html_url:
        return
    attempt = attempt_of_run(ctx.store, *where, job.run_id)
    if attempt is None:
        _skip(event, f"workflow run {job.run_id} is no live attempt's (yet)")
        return
    if job.conclusion == "failure" or not job_noted(ctx.store, attempt):
        note_job(ctx.store, attempt, job.html_url, tx=ctx.tx)


@router.register("pull_request", "closed")
def on_pull_closed(event: PullRequestEvent, ctx: HandlerContext) -> None:
    """A person merged (landed) or closed (stopped) a task's own pull request;
    any other pull request (a fork's, a stranger's) is ignored with the reason."""
    where = _where(event)
    if where is None:
        return
    installation, repo = where
    pr = event.pull_request
    named = task_id_from_branch(pr.head.ref)
    if named is None:
        _skip(event, f"{pr.head.ref} is not a task branch")
        return
    run_id = find_open(ctx.store, RunKey(installation, repo, pr.base.ref))
    if run_id is None:
        _skip(event, f"no open run for {repo}@{pr.base.ref}")
        return
    by = event.sender.login if event.sender else "someone"
    head_repo = pr.head.repo.full_name if pr.head.repo else None
    facts = PullFacts(pr.number, pr.head.ref, head_repo, pr.user.login if pr.user else None)
    try:
        api.note_pull_closed(
            ctx.store, run_id, named[0], facts, repository=repo, merged=bool(pr.merged),
            sha=pr.merge_commit_sha, by=by, tx=ctx.tx,
        )  # fmt: skip
    except api.ForeignPull as exc:
        log.info("%s ignored: not task %s's own pull request: %s", event.subject(), named[0], exc)
