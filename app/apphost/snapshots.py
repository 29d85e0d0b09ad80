"""A run's state for the App: the snapshot in the run's row, then only the newer events.

Each decide step saves the state it decided on, as of its log version, in the
same transaction as the events (`snapshot_text` into `put_run`), and the run's
live attempts with it (`index_attempts`), so an input reads one row and the
events after it instead of folding the whole log, and a completed workflow run
finds its attempt without folding any run. The roadmap, which never changes in
a run, is parsed once per process. A snapshot counts only when this same core
wrote it (`fold_digest`: odw's version and `app/core`'s source), so an upgrade
folds each run once from zero; a run saved before snapshots existed is folded
and indexed on the first lookup (`index_unsnapshotted`). The full fold stays
the check: the tests fold from zero and compare.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

import app
from app.core import events as ev
from app.core import snapshot
from app.core.keys import attempt_key
from app.core.roadmap import Roadmap
from app.core.state import RunState, apply, started_roadmap
from app.engine.driver import replay
from app.store import Store
from app.store.projections import LiveAttemptRow

log = logging.getLogger("odw.apphost")


@functools.cache
def fold_digest() -> str:
    """Which code folded a snapshot: odw's version and a digest of the core's source."""
    digest = hashlib.sha256(app.__version__.encode())
    for path in sorted(Path(snapshot.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:32]


@functools.lru_cache(maxsize=64)
def _roadmap(start: str) -> Roadmap:
    """The parsed roadmap of a run's start event (its JSON text, the cache key)."""
    event = ev.event_from_json(json.loads(start))
    assert isinstance(event, ev.RunStarted)
    return started_roadmap(event)


def snapshot_text(state: RunState) -> str:
    """What `put_run(state=...)` keeps: the digest of the folding code, then the state."""
    return f"{fold_digest()}\n{snapshot.dump_state(state).decode()}"


def load_state(store: Store, run_id: str, *, tx: Connection | None = None) -> RunState:
    """The run's state: its snapshot and the events after it, else the whole log folded."""
    state = _restored(store, run_id, tx)
    if state is None:
        return replay(store.events.load(run_id, tx=tx))
    for row in store.events.load(run_id, after=state.version, tx=tx):
        apply(state, ev.event_from_json(row))
    return state


def _restored(store: Store, run_id: str, tx: Connection | None) -> RunState | None:
    saved = store.projections.snapshot(run_id, tx=tx)
    if saved is None:
        return None
    folded_by, _, data = saved.state.partition("\n")
    start = store.events.load(run_id, until=1, tx=tx)
    if folded_by != fold_digest() or not start or start[0].get("type") != "run-started":
        return None
    try:
        state = snapshot.load_state(data, _roadmap(json.dumps(start[0], sort_keys=True)))
    except snapshot.SnapshotError as exc:
        log.warning("run %s: its snapshot is not used (%s); folding its log", run_id, exc)
        return None
    return state if state.version == saved.version else None


def live_rows(state: RunState) -> list[LiveAttemptRow]:
    """The run's live attempts as the index keeps them (none once it ended)."""
    if state.ended:
        return []
    return [
        LiveAttemptRow(
            key=attempt_key(state.run_id, t.id, a.stage, a.number, a.lane),
            run_id=state.run_id,
            task=t.id,
            stage=a.stage,
            attempt=a.number,
            lane=a.lane,
            token=a.token,
            branch=t.branch,
        )
        for t, a in state.live_attempts()
    ]


def index_attempts(
    store: Store, run_id: str, key: dict[str, Any], rows: list[LiveAttemptRow], tx: Connection
) -> None:
    """Keep the run's live attempts under its repository (`key`: the run key's JSON)."""
    store.projections.put_attempts(
        run_id, int(key["installation"]), str(key["repository"]), rows, tx=tx
    )


def index_unsnapshotted(store: Store, status: str) -> None:
    """Fold, snapshot and index each run of `status` saved before snapshots existed."""
    for view in store.projections.unsnapshotted(status=status):
        if "key" not in view.data:
            continue
        with store.transaction() as tx:
            state = replay(store.events.load(view.run_id, tx=tx))
            if store.events.version(view.run_id, tx=tx) != state.version:
                continue  # a step took an input meanwhile: it saved both itself
            store.projections.put_run(
                view.run_id, state.version, view.status, view.data,
                state=snapshot_text(state), tx=tx,
            )  # fmt: skip
            index_attempts(store, view.run_id, view.data["key"], live_rows(state), tx)
