from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store import ConcurrencyError, Store


def ev(kind: str, **fields: object) -> dict[str, object]:
    return {"type": kind, "version": 1, **fields}


def test_appends_are_numbered_per_run_and_load_back_in_order(store: Store) -> None:
    assert store.events.version("run-a") == 0
    assert store.events.append("run-a", [ev("RunStarted"), ev("TaskQueued", task="1.2")], 0) == 2
    assert store.events.append("run-b", [ev("RunStarted")], 0) == 1
    assert store.events.append("run-a", [ev("TaskLanded", task="1.2", sha="abc")], 2) == 3

    assert [e["type"] for e in store.events.load("run-a")] == [
        "RunStarted",
        "TaskQueued",
        "TaskLanded",
    ]
    assert store.events.load("run-a", after=2) == [ev("TaskLanded", task="1.2", sha="abc")]
    assert store.events.version("run-b") == 1
    assert [store.events.version(r) for r in ("run-a", "run-b", "run-c")] == [3, 1, 0]


def test_a_stale_writer_is_refused_and_writes_nothing(store: Store) -> None:
    store.events.append("run", [ev("A")], 0)
    with pytest.raises(ConcurrencyError) as err:
        store.events.append("run", [ev("B"), ev("C")], 0)
    assert err.value.expected == 0
    assert err.value.actual == 1
    assert [e["type"] for e in store.events.load("run")] == ["A"]


def test_append_in_a_caller_transaction_commits_with_the_outbox(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction() as tx:
        store.events.append("run", [ev("A")], 0, tx=tx)
        store.outbox.enqueue("run:dispatch:1", "dispatch", {"task": "1"}, tx=tx)
        raise RuntimeError("crash before commit")
    assert store.events.load("run") == []
    assert store.outbox.get("run:dispatch:1") is None

    with store.transaction() as tx:
        store.events.append("run", [ev("A")], 0, tx=tx)
        store.outbox.enqueue("run:dispatch:1", "dispatch", {"task": "1"}, tx=tx)
    assert store.events.version("run") == 1
    assert store.outbox.get("run:dispatch:1") is not None


def test_events_must_be_typed_dicts(store: Store) -> None:
    with pytest.raises(ValueError, match="no string 'type'"):
        store.events.append("run", [{"version": 1}], 0)
    assert store.events.version("run") == 0


def test_racing_writers_never_merge(store: Store) -> None:
    """Writers that read the same version: exactly one wins each round."""
    wins: list[int] = []
    refused: list[int] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        for i in range(15):
            version = store.events.version("race")
            try:
                store.events.append("race", [ev("Step", writer=n, i=i)], version)
            except ConcurrencyError:
                with lock:
                    refused.append(n)
            else:
                with lock:
                    wins.append(n)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    log = store.events.load("race")
    assert len(log) == len(wins) == store.events.version("race")
    assert len(wins) + len(refused) == 60


def test_the_log_survives_reopening(db_url: str) -> None:
    first = Store.open(db_url)
    first.events.append("run", [ev("A", payload={"nested": [1, 2, "é"]})], 0)
    first.close()
    second = Store.open(db_url)
    assert second.events.load("run") == [ev("A", payload={"nested": [1, 2, "é"]})]
    second.close()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(
        st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=3), max_size=3),
        max_size=4,
    )
)
def test_any_sequence_of_appends_replays_exactly(store: Store, batches: list[list[dict]]) -> None:
    run = f"prop-{id(batches)}-{store.clock()}"
    store.clock.advance(1)  # type: ignore[attr-defined]
    expected: list[dict] = []
    version = store.events.version(run)
    for batch in batches:
        events = [{**fields, "type": "T", "version": 1} for fields in batch]
        version = store.events.append(run, events, version)
        expected += events
    assert store.events.load(run) == expected
    assert store.events.version(run) == len(expected)
