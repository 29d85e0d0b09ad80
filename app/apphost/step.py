"""The decide step: one input into one run, decided by the same core local mode uses.

In one transaction: load the run's event log, fold it, `decide`, append the
events at the version read, put every effect in the outbox under its
idempotency key, ask for the GitHub views to be brought up to date, and save
the run's projection. A writer that lost the race (`ConcurrencyError`) reloads
and decides again. When the run has nothing left running, waiting or stopped,
the step ends it (`EndRun`) in the same transaction, as local mode's driver
does when it goes idle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import Connection

from app.core import events as ev
from app.core.decide import CoreError, decide
from app.core.effects import Effect
from app.core.inputs import EndRun, Input
from app.core.result import run_result
from app.core.state import RunState, apply
from app.engine.driver import replay
from app.engine.ports import ConcurrencyError
from app.store import Store

log = logging.getLogger("odw.apphost")

EFFECTS: TypeAdapter[Effect] = TypeAdapter(Effect)
VIEWS = "app-views"
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


def load_state(store: Store, run_id: str, *, tx: Connection | None = None) -> RunState:
    return replay(store.events.load(run_id, tx=tx))


def idle(s: RunState) -> bool:
    """Nothing runs, nothing is awaited, nothing stops the run: it can end."""
    if not s.started or s.ended or s.stop is not None:
        return False
    return not s.live_attempts() and not any(t.awaiting for t in s.tasks.values())


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
    try:
        events, effects = decide(state, inp, tokens)
    except CoreError as exc:
        step.refused = str(exc)
        log.info("run %s refused %s: %s", run_id, inp.kind, exc)
        return step
    for e in events:
        apply(state, e)
    if idle(state):
        more, extra = decide(state, EndRun(at=inp.at), tokens)
        for e in more:
            apply(state, e)
        events, effects = [*events, *more], [*effects, *extra]
    rows = [ev.event_to_json(e) for e in events]
    if not rows:
        step.state = state
        return step
    store.events.append(run_id, rows, state.version - len(rows), tx=tx)
    for effect in effects:
        store.outbox.enqueue(
            effect.key, effect.kind, effect_payload(run_id, effect), run_id=run_id, tx=tx
        )
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
        run_id, state.version, "finished" if state.ended else "running", data, tx=tx
    )
    step.events, step.effects, step.state = rows, effects, state
    return step
