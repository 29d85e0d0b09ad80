"""The decide step: one input into one run, through the step local mode takes too.

In one transaction: read the run's state (its snapshot and the events after
it, `snapshots.load_state`), take the engine's step (`step.advance`: decide,
append the events at the version read, hand over the effects) with every
effect put in the outbox under its idempotency key, ask for the GitHub views to
be brought up to date, and save the run's projection with the new snapshot and
its live attempts. A writer that lost the race (`ConcurrencyError`) reads again
and decides again. When the core finds the run over (`run_over`; a stopped run
waits for `/odw resume`), the step ends it (`EndRun`) in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import Connection

from app.apphost.app_effects import VIEWS
from app.apphost.snapshots import index_attempts, live_rows, snapshot_text
from app.apphost.snapshots import load_state as load_state
from app.core.decide import CoreError
from app.core.effects import Effect
from app.core.inputs import Input
from app.core.result import run_result
from app.core.state import RunState
from app.engine.ports import ConcurrencyError
from app.engine.step import advance
from app.store import Store

log = logging.getLogger("odw.apphost")

EFFECTS: TypeAdapter[Effect] = TypeAdapter(Effect)
VIEWS_DELAY = 0.1
MAX_RACES = 20
TokenSource = Callable[[], str]


@dataclass
class Step:
    """What one decide step recorded."""

    run_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    refused: str | None = None
    state: RunState | None = None


def effect_payload(run_id: str, effect: Effect) -> dict[str, Any]:
    return {"run_id": run_id, "effect": effect.model_dump(mode="json")}


def effect_of(payload: dict[str, Any]) -> Effect:
    return EFFECTS.validate_python(payload["effect"])


def views_key(run_id: str, version: int) -> str:
    return f"{run_id}/views/{version}"


def decide_step(
    store: Store,
    run_id: str,
    inp: Input,
    tokens: TokenSource,
    *,
    meta: dict[str, Any] | None = None,
    tx: Connection | None = None,
) -> Step:
    """Decide `inp` for `run_id` and record the outcome; see the module docstring.

    `meta` (the run key and what it started from) is merged into the projection.
    An input the run cannot take (it ended, it has not started) is refused with
    the reason and changes nothing.
    """
    for _ in range(MAX_RACES):
        try:
            if tx is not None:
                return _step(store, run_id, inp, tokens, meta, tx)
            with store.transaction() as conn:
                return _step(store, run_id, inp, tokens, meta, conn)
        except ConcurrencyError:
            if tx is not None:
                raise
            log.info("run %s moved on while deciding; deciding again", run_id)
    raise ConcurrencyError(-1, None, run_id=run_id)


def _step(
    store: Store,
    run_id: str,
    inp: Input,
    tokens: TokenSource,
    meta: dict[str, Any] | None,
    tx: Connection,
) -> Step:
    state = load_state(store, run_id, tx=tx)
    step = Step(run_id)

    def outbox(effect: Effect) -> None:
        store.outbox.enqueue(
            effect.key, effect.kind, effect_payload(run_id, effect), run_id=run_id, tx=tx
        )

    log_of_run = _RunLog(store, run_id, tx)
    try:
        done = advance(state, inp, tokens, log_of_run, outbox, stopped_waits=True)
    except CoreError as exc:
        step.refused = str(exc)
        log.info("run %s refused %s: %s", run_id, inp.kind, exc)
        return step
    step.state = state
    if not done.rows:
        return step
    # Views a moment later: the effects (a dispatch above all) are claimed first.
    store.outbox.enqueue(
        views_key(run_id, state.version),
        VIEWS,
        {"run_id": run_id},
        run_id=run_id,
        not_before=store.clock() + VIEWS_DELAY,
        tx=tx,
    )
    view = store.projections.run(run_id, tx=tx)
    data = {**(view.data if view is not None else {}), **(meta or {})}
    data["result"] = run_result(state)
    store.projections.put_run(
        run_id,
        state.version,
        "finished" if state.ended else "running",
        data,
        state=snapshot_text(state),
        tx=tx,
    )
    if "key" in data:
        index_attempts(store, run_id, data["key"], live_rows(state), tx)
    step.events, step.effects = done.rows, done.effects
    for row in done.rows:
        _log_milestone(run_id, row, state)
    return step


def _log_milestone(run_id: str, row: dict[str, Any], state: RunState) -> None:
    """An INFO line for what an operator reads the log for: a task that failed,
    stopped or landed, and a run that stopped or halted."""
    kind, task = row.get("type"), row.get("task")
    if kind == "task-failed":
        log.info(
            "run %s: task %s %s at %s: %s",
            run_id, task, row.get("status"), row.get("stage"), row.get("detail"),
        )  # fmt: skip
    elif kind == "task-deferred":
        log.info("run %s: task %s deferred at %s: %s", run_id, task, row.get("stage"),
                 row.get("detail"))  # fmt: skip
    elif kind in ("task-landed", "task-merged-by-person"):
        t = state.tasks.get(str(task))
        sha = (t.landed_sha if t is not None else None) or row.get("sha") or "?"
        log.info("run %s: task %s landed as %s", run_id, task, str(sha)[:12])
    elif kind == "run-stopped":
        log.info("run %s halted (%s): %s", run_id, row.get("kind"), row.get("reason"))
    elif kind == "run-halted":
        log.info("run %s halted by %s: %s", run_id, row.get("by"), row.get("reason") or "-")


class _RunLog:
    """The store's event log of one run, in the step's transaction."""

    def __init__(self, store: Store, run_id: str, tx: Connection) -> None:
        self.store, self.run_id, self.tx = store, run_id, tx

    def append(self, events: Sequence[dict[str, Any]], expected_version: int) -> int:
        return self.store.events.append(self.run_id, events, expected_version, tx=self.tx)
