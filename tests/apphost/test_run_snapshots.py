"""The App reads a run from its snapshot and the newer events, and finds live
attempts by repository; both always agree with the whole log folded from zero."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from app.apphost import api
from app.apphost.runs import OPEN, RunKey, live_attempts
from app.apphost.snapshots import live_rows, snapshot_text
from app.apphost.step import decide_step, effect_of, load_state
from app.core import events as ev
from app.core.config import RunConfig
from app.core.effects import DispatchStage
from app.core.inputs import OperatorMove, StageFinished, StartRun
from app.core.state import RunState, fold
from app.engine.driver import replay
from app.engine.scripted import completion
from app.store import Store
from app.store.schema import live_attempts as live_table
from app.store.schema import runs

ROADMAP = (
    "# Roadmap\n\n- [ ] 1.1. Add a greeting\n- [ ] 1.2. Add a farewell\n  - Requires 1.1.\n"
    "- [ ] 1.3. Add a wave\n"
)
KEY = RunKey(installation=7, repository="octo/hello", base="main")
RUN = "gh-octo-hello-main-1"


def _whole(store: Store) -> RunState:
    return replay(store.events.load(RUN))


def _start(store: Store) -> None:
    start = StartRun(at=api.now(), run_id=RUN, roadmap=ROADMAP, config=RunConfig(maxParallel=2))
    decide_step(store, RUN, start, api.tokens, meta={"key": KEY.to_json(), "sha": "0" * 40})


def _pass_one(store: Store) -> bool:
    """Answer one dispatch as a passing runner would; False when none is waiting."""
    entries = store.outbox.claim("runner", 60, 1, kinds=["dispatch-stage"])
    if not entries:
        return False
    d = effect_of(entries[0].payload)
    assert isinstance(d, DispatchStage)
    c = completion(d, "pass")
    finished = StageFinished(
        at=datetime.now(UTC), task=c.task, stage=c.stage, token=c.token, verdict=c.verdict
    )
    api.submit(store, RUN, finished)
    store.outbox.complete(entries[0].key, "runner", attempt=entries[0].attempts)
    return True


def _indexed(store: Store) -> list[str]:
    return [a.key for a in live_attempts(store, KEY.installation, KEY.repository)]


def test_every_step_reads_the_state_the_whole_log_folds_to(any_store: Store) -> None:
    _start(any_store)
    steps = 0
    while True:
        state = load_state(any_store, RUN)
        assert state == _whole(any_store)
        saved = any_store.projections.snapshot(RUN)
        assert saved is not None and saved.version == state.version
        assert _indexed(any_store) == sorted(r.key for r in live_rows(state))
        if not _pass_one(any_store):
            break
        steps += 1
    assert steps > 5  # stages of three tasks were answered
    assert _indexed(any_store) == []  # nothing live: the tasks wait for their integration


def test_events_after_the_snapshot_are_folded_on(any_store: Store) -> None:
    _start(any_store)
    for _ in range(3):
        _pass_one(any_store)
    events = [ev.event_from_json(r) for r in any_store.events.load(RUN)]
    older = fold(events[:2])
    with any_store.transaction() as tx:
        tx.execute(update(runs).values(state=snapshot_text(older), state_version=2))
    assert load_state(any_store, RUN) == fold(events)
    api.submit(any_store, RUN, OperatorMove(at=api.now(), move="halt", by="ops"))
    assert load_state(any_store, RUN) == _whole(any_store)


def test_a_snapshot_another_core_wrote_or_a_damaged_one_is_not_used(any_store: Store) -> None:
    _start(any_store)
    _pass_one(any_store)
    whole = _whole(any_store)
    saved = any_store.projections.snapshot(RUN)
    assert saved is not None
    digest, _, data = saved.state.partition("\n")
    for text in (f"another-core\n{data}", "garbage", f"{digest}\n{{", f"{digest}\n[]"):
        with any_store.transaction() as tx:
            tx.execute(update(runs).values(state=text))
        assert load_state(any_store, RUN) == whole


def test_a_run_saved_before_snapshots_existed_is_indexed_on_the_first_lookup(
    any_store: Store,
) -> None:
    _start(any_store)
    live = sorted(r.key for r in live_rows(_whole(any_store)))
    assert live and _indexed(any_store) == live
    with any_store.transaction() as tx:
        tx.execute(update(runs).values(state=None, state_version=None))
        tx.execute(live_table.delete())
    assert [v.run_id for v in any_store.projections.unsnapshotted(status=OPEN)] == [RUN]
    assert _indexed(any_store) == live
    assert any_store.projections.unsnapshotted(status=OPEN) == []
    assert live_attempts(any_store, KEY.installation, "octo/other") == []
    assert live_attempts(any_store, KEY.installation + 1, KEY.repository) == []


def test_a_halted_run_waits_and_its_finished_attempts_leave_the_index(any_store: Store) -> None:
    _start(any_store)
    assert _indexed(any_store)
    api.submit(any_store, RUN, OperatorMove(at=api.now(), move="halt", by="ops"))
    stopped = load_state(any_store, RUN)
    assert stopped.stop is not None and not stopped.ended  # a stopped App run waits
    assert _indexed(any_store)
    while _pass_one(any_store):
        pass
    state = load_state(any_store, RUN)
    assert not state.live_attempts() and _indexed(any_store) == []
