"""What webhook handlers and operators call: store-only, no GitHub request.

Every function takes `tx=` so a webhook handler's writes commit with its
delivery (`HandlerContext.tx`): a delivery processed twice changes nothing,
because each request is an outbox entry under a key or a decide step whose
input the core recognises as already answered. The outbox executor
(`executor.py`) does the GitHub and git work later, each request typed
(`app_effects.py`).
"""

from __future__ import annotations

import secrets
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from app.apphost.app_effects import INGEST as INGEST
from app.apphost.app_effects import START as START
from app.apphost.app_effects import TICK as TICK
from app.apphost.app_effects import IngestRequested, StartRequested, TickRequested, enqueue
from app.apphost.runs import RunKey, find_open
from app.apphost.step import Step, decide_step, load_state
from app.commands.host import Launch, NoOpenRun
from app.core.discovery import SurvivorEvidence
from app.core.inputs import Input, MoveName, OperatorMove, PullClosed
from app.core.ownership import PullFacts, foreign_pull_event
from app.github.protocols import WorkflowRun
from app.store import Store

# A start's `RunKey.base` when none was named: the repository's default branch,
# read from GitHub when the executor performs the start.
DEFAULT_BASE = ""
MERGED = "~merged"  # run_tasks row: the tasks a person merged in this run (the evidence)


class ForeignPull(ValueError):
    """A pull request event about a pull request other than the task's own."""


def tokens() -> str:
    """A fresh attempt token (the core asks for one per dispatch)."""
    return secrets.token_hex(16)


def now() -> datetime:
    return datetime.now(UTC)


def request_start(
    store: Store,
    key: RunKey,
    *,
    by: str,
    sha: str | None = None,
    only_if_auto: bool = False,
    before: str | None = None,
    launch: Launch | None = None,
    nonce: str | None = None,
    tx: Connection | None = None,
) -> bool:
    """Ask for a run of `key` to start or continue; False when already asked.

    The executor reads `.github/odw.yml` and the roadmap at the base's SHA
    (`sha`, else the base's head when it performs this), reports an invalid
    file as a failing `ODW · config` check, and otherwise starts a run unless
    one is open. `only_if_auto`: start only when the file says `auto: true`
    (a push to the base), and only when the roadmap differs from `before`'s.
    A key whose base is `DEFAULT_BASE` starts on the repository's default branch.
    """
    nonce = nonce or sha or secrets.token_hex(8)
    # A command's launch (`/odw run --task 1.2`, `/odw recover continue`, ...)
    # is applied by `app.commands.launch.start_for` when the run starts.
    start = StartRequested(
        key=key, by=by, sha=sha, only_if_auto=only_if_auto, before=before, launch=launch
    )
    return enqueue(
        store, f"start/{key.installation}/{key.repository}/{key.base}/{nonce}", start, tx=tx
    )


def request_ingest(
    store: Store,
    *,
    installation: int,
    repository: str,
    workflow_run: int,
    attempt: int,
    run: WorkflowRun | None = None,
    tx: Connection | None = None,
) -> bool:
    """Ask for a completed workflow run to be fed to its run (once per attempt).

    `run` is the completed run as already known (the delivery, the reconciler's
    read): the executor judges that and reads the run again only without it.
    """
    ingest = IngestRequested(
        installation=installation,
        repository=repository,
        workflow_run=workflow_run,
        run=asdict(run) if run is not None else None,
    )
    return enqueue(
        store, f"ingest/{installation}/{repository}/{workflow_run}/{attempt}", ingest, tx=tx
    )


def submit(store: Store, run_id: str, inp: Input, *, tx: Connection | None = None) -> Step:
    """Decide `inp` in run `run_id` now; its effects go to the outbox."""
    return decide_step(store, run_id, inp, tokens, tx=tx)


def submit_move(
    store: Store,
    key: RunKey,
    move: MoveName,
    *,
    by: str,
    task: str | None = None,
    reason: str = "",
    overrides: dict[str, Any] | None = None,
    evidence: SurvivorEvidence | None = None,
    tx: Connection | None = None,
) -> Step:
    """An operator move into the open run of `key` (raises NoOpenRun when none is open).

    The step's `events` include a `move-rejected` event, with the reason, when
    the move does not fit; `refused` is set when the run cannot take input.
    """
    run_id = find_open(store, key)
    if run_id is None:
        raise NoOpenRun(f"no open ODW run for {key.label()}")
    inp = OperatorMove(
        at=now(), move=move, task=task, by=by, reason=reason,
        overrides=dict(overrides or {}), evidence=evidence,
    )  # fmt: skip
    return submit(store, run_id, inp, tx=tx)


def note_pull_closed(
    store: Store,
    run_id: str,
    task: str,
    pull: PullFacts,
    *,
    repository: str,
    merged: bool,
    sha: str | None,
    by: str,
    tx: Connection | None = None,
) -> Step:
    """A task PR closed on GitHub: merged by a person lands the task, closed stops it.

    Only the pull request ODW recorded for the task, with its head on the task
    branch of `repository` itself, counts; any other (a fork's, a stranger's,
    another number) raises ForeignPull with the reason and changes nothing.
    A merge the run takes as the task's landing is remembered (`MERGED`: later
    runs of the base count the task done even before its box is ticked) and
    asks for the box to be ticked on the base (`TICK`), in the same transaction.
    """
    t = load_state(store, run_id, tx=tx).tasks.get(task)
    if t is None:
        raise ForeignPull(f"run {run_id} has no task {task}")
    recorded = store.projections.tasks(run_id, tx=tx).get(task, {}).get("pull")
    why = foreign_pull_event(
        pull,
        repository=repository,
        task_branch=t.branch,
        recorded=int(recorded) if recorded else None,
    )
    if why is not None:
        raise ForeignPull(why)
    number = pull.number
    store.projections.merge_task(run_id, task, {"closed": True}, status="closed", tx=tx)
    inp = PullClosed(at=now(), task=task, number=number, merged=merged, sha=sha, by=by)
    step = submit(store, run_id, inp, tx=tx)
    if any(e.get("type") == "task-merged-by-person" for e in step.events):
        evidence = {task: {"number": number, "sha": sha, "by": by}}
        store.projections.merge_task(run_id, MERGED, evidence, status="noted", tx=tx)
        tick = TickRequested(run_id=run_id, task=task, number=number, sha=sha, by=by)
        enqueue(store, f"tick/{run_id}/{task}", tick, run_id=run_id, tx=tx)
    return step


def merged_by_people(store: Store, key: RunKey) -> dict[str, dict[str, Any]]:
    """Tasks whose pull requests people merged in earlier runs of `key`: landed,
    whether or not their boxes are ticked on the base yet."""
    found: dict[str, dict[str, Any]] = {}
    for view in store.projections.runs():
        if view.data.get("key") == key.to_json():
            found.update(store.projections.tasks(view.run_id).get(MERGED, {}))
    return found
