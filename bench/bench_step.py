"""One App input decided and recorded on the store, at 100 and 10,000 events in its run's log.

The cost of an input must not grow with the run's history: the step reads the
run's snapshot and only the events after it. Each run (SQLite, a 20-task
roadmap, five tasks in flight) gets its history as re-delivered stage results
(the core's own `stale-verdict-ignored` event, copied), so the state is the
same size at both lengths and only the log differs. One untimed input then
saves the snapshot, as the App's last step would have; each timed input is a
live stage passing (judged, the next stage dispatched into the outbox, the
views asked for, the projection and snapshot saved). Median of several, in
CPU time of this process (SQLite works inside it), which hardly moves when
other work shares the machine; the databases live on a RAM disk when there is
one (`/dev/shm`). Goal: ratio at most 1.5.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from app.apphost import api
from app.apphost.runs import RunKey
from app.apphost.step import decide_step, effect_of, load_state
from app.core import events as ev
from app.core.config import RunConfig
from app.core.decide import decide
from app.core.effects import DispatchStage
from app.core.inputs import StageFinished, StartRun
from app.engine.scripted import completion
from app.store import Store, sqlite_url

ROADMAP = "# Roadmap\n\n" + "".join(f"- [ ] 1.{k}. Task {k}\n" for k in range(1, 21))
KEY = RunKey(installation=1, repository="octo/bench", base="main")
LENGTHS = (100, 10_000)
TIMED = 15


def _history(store: Store, run_id: str, length: int) -> None:
    """Fill the run's log up to `length` events with re-delivered stage results."""
    state = load_state(store, run_id)
    task, attempt = state.live_attempts()[0]
    stale = StageFinished(at=api.now(), task=task.id, stage=attempt.stage, token=api.tokens())
    events, _ = decide(state, stale, api.tokens)
    template = ev.event_to_json(events[0])
    rows = [{**template, "token": api.tokens()} for _ in range(length - state.version)]
    store.events.append(run_id, rows, state.version)


def _pass_one(store: Store, run_id: str) -> float:
    """Answer one dispatch as a passing runner would; the seconds its input took."""
    entry = store.outbox.claim("runner", 60, 1, kinds=["dispatch-stage"])[0]
    d = effect_of(entry.payload)
    assert isinstance(d, DispatchStage)
    c = completion(d, "pass")
    finished = StageFinished(
        at=api.now(), task=c.task, stage=c.stage, token=c.token, verdict=c.verdict
    )
    start = time.process_time()
    api.submit(store, run_id, finished)
    took = time.process_time() - start
    store.outbox.complete(entry.key, "runner", attempt=entry.attempts)
    return took


def _prepared(directory: Path, length: int) -> tuple[Store, str]:
    """A store whose run's log holds `length` events, its snapshot saved."""
    store = Store.open(sqlite_url(directory / f"step-{length}.sqlite3"))
    run_id = f"bench-step-{length}"
    start = StartRun(at=api.now(), run_id=run_id, roadmap=ROADMAP, config=RunConfig(maxParallel=5))
    decide_step(store, run_id, start, api.tokens, meta={"key": KEY.to_json()})
    _history(store, run_id, length)
    _pass_one(store, run_id)  # the step after the history saves its snapshot
    return store, run_id


def main() -> None:
    ram = Path("/dev/shm")
    where = str(ram) if ram.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="odw-bench-step-", dir=where) as tmp:
        runs = [_prepared(Path(tmp), n) for n in LENGTHS]
        try:
            # In turns, so that a change in the machine's load falls on both.
            took: list[list[float]] = [[] for _ in runs]
            for _ in range(TIMED):
                for times, (store, run_id) in zip(took, runs, strict=True):
                    times.append(_pass_one(store, run_id))
        finally:
            for store, _ in runs:
                store.close()
    short, long = (statistics.median(times) for times in took)
    print(
        f"step: {LENGTHS[0]} events {short * 1000:.1f} ms, "
        f"{LENGTHS[1]} events {long * 1000:.1f} ms, ratio {long / short:.2f}"
    )
