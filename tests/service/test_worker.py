from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import insert

from app.service.handlers import build_router
from app.service.outcome import HandlerContext, Ignore, TransientError
from app.service.worker import DeliveryWorker, WorkerConfig, WorkerPool
from app.store import Store
from app.store.schema import github_events
from tests.store.reads import recorded_per_delivery
from tests.support import FakeClock
from tests.webhooks import oracle
from webhooks.payloads import GitHubEvent
from webhooks.router import Router

CONFIG = WorkerConfig(
    lease_seconds=30, max_attempts=3, retry_base_seconds=10, retry_max_seconds=100
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}", clock=clock)
    yield s
    s.close()


def deliver(store: Store, delivery_id: str, event: str, payload: dict) -> None:
    import json

    action = payload.get("action")
    inst = (payload.get("installation") or {}).get("id")
    store.inbox.record(delivery_id, event, action, inst, json.dumps(payload).encode())


def drain(worker: DeliveryWorker) -> list[str]:
    out = []
    while (o := worker.process_one()) is not None:
        out.append(o)
    return out


def test_installation_lifecycle_keeps_the_tables_current(store: Store) -> None:
    examples = {
        (e.payload["action"], e.event): e.payload
        for e in oracle.require("installation", "installation_repositories")
    }
    created = examples[("created", "installation")]
    inst_id = created["installation"]["id"]
    worker = DeliveryWorker(store, build_router(), CONFIG)

    deliver(store, "1", "installation", created)
    assert drain(worker) == ["processed"]
    row = store.installations.get(inst_id)
    assert row is not None
    assert row.account_login == created["installation"]["account"]["login"]
    assert row.permissions == created["installation"]["permissions"]
    assert [r.full_name for r in store.installations.repositories(inst_id)] == sorted(
        r["full_name"] for r in created["repositories"]
    )

    added = dict(examples[("added", "installation_repositories")])
    added["installation"] = {**added["installation"], "id": inst_id}
    deliver(store, "2", "installation_repositories", added)
    removed = dict(examples[("removed", "installation_repositories")])
    removed["installation"] = {**removed["installation"], "id": inst_id}
    removed["repositories_removed"] = created["repositories"][:1]
    deliver(store, "3", "installation_repositories", removed)
    assert drain(worker) == ["processed", "processed"]
    expected = {r["full_name"] for r in created["repositories"][1:]} | {
        r["full_name"] for r in added["repositories_added"]
    }
    assert {r.full_name for r in store.installations.repositories(inst_id)} == expected
    assert (
        store.installations.installation_for_repository(added["repositories_added"][0]["full_name"])
        == inst_id
    )

    suspend = {**examples[("suspend", "installation")], "installation": created["installation"]}
    deliver(store, "4", "installation", suspend)
    drain(worker)
    assert store.installations.get(inst_id).suspended  # type: ignore[union-attr]
    unsuspend = {**suspend, "action": "unsuspend"}
    deliver(store, "5", "installation", unsuspend)
    drain(worker)
    assert not store.installations.get(inst_id).suspended  # type: ignore[union-attr]

    deleted = {**examples[("deleted", "installation")], "installation": created["installation"]}
    deliver(store, "6", "installation", deleted)
    drain(worker)
    assert store.installations.get(inst_id).deleted  # type: ignore[union-attr]
    assert store.installations.repositories(inst_id) == []
    assert [e.action for e in store.activity.list()] == [
        "created",
        "added",
        "removed",
        "suspend",
        "unsuspend",
        "deleted",
    ]


def test_recorded_events_are_typed(store: Store) -> None:
    (example, *_) = oracle.require("pull_request")
    payload = example.as_app_delivery()
    deliver(store, "pr", "pull_request", payload)
    assert drain(DeliveryWorker(store, build_router(), CONFIG)) == ["processed"]
    (rec,) = store.activity.list(event="pull_request")
    assert rec.installation_id == oracle.INSTALLATION["id"]
    assert rec.repository == payload["repository"]["full_name"]
    assert rec.data["pull_request"]["head"]["sha"] == payload["pull_request"]["head"]["sha"]
    assert (
        rec.subject
        == f"pull request #{payload['number']} ({payload['pull_request']['head']['ref']})"
    )


def test_unrouted_events_are_ignored_with_the_reason(store: Store) -> None:
    deliver(store, "s", "star", {"action": "created"})
    assert drain(DeliveryWorker(store, build_router(), CONFIG)) == ["ignored"]
    d = store.inbox.get("s")
    assert d is not None and d.error == "no handler for 'star' action 'created'"


def test_a_malformed_payload_is_rejected_with_the_parse_error(store: Store) -> None:
    deliver(store, "bad", "pull_request", {"action": "opened", "installation": {"id": 1}})
    assert drain(DeliveryWorker(store, build_router(), CONFIG)) == ["rejected"]
    d = store.inbox.get("bad")
    assert d is not None
    assert d.error == ("pull_request payload: number: Field required; pull_request: Field required")


def writing_router(behaviour: list[BaseException | None]) -> Router:
    """A handler that writes, then behaves as told for each successive call."""
    router = Router()

    @router.register("star")
    def handler(event: GitHubEvent, ctx: HandlerContext) -> None:
        ctx.tx.execute(
            insert(github_events).values(
                delivery_id=ctx.delivery_id, event="star", data="{}", recorded_at=0
            )
        )
        outcome = behaviour.pop(0)
        if outcome is not None:
            raise outcome

    return router


def test_transient_errors_retry_with_backoff_then_dead_letter(
    store: Store, clock: FakeClock
) -> None:
    router = writing_router([TransientError("502 from GitHub")] * 3)
    worker = DeliveryWorker(store, router, CONFIG, jitter=lambda: 1.0)
    deliver(store, "t", "star", {"action": "created"})
    assert worker.process_one() == "retrying"
    assert worker.process_one() is None  # not due yet
    clock.advance(9.9)
    assert worker.process_one() is None
    clock.advance(0.2)  # first retry after 10 s
    assert worker.process_one() == "retrying"
    clock.advance(19)
    assert worker.process_one() is None  # second retry after 20 s
    clock.advance(1.1)
    assert worker.process_one() == "failed"
    d = store.inbox.get("t")
    assert d is not None
    assert (d.status, d.attempts) == ("failed", 3)
    assert d.error == "gave up after 3 attempts: TransientError: 502 from GitHub"
    assert store.activity.list() == []  # every attempt's writes rolled back


def test_a_retry_that_succeeds_commits_once(store: Store, clock: FakeClock) -> None:
    router = writing_router([TransientError("blip"), None])
    worker = DeliveryWorker(store, router, CONFIG, jitter=lambda: 0.0)
    deliver(store, "t", "star", {"action": "created"})
    assert worker.process_one() == "retrying"
    clock.advance(10)
    assert worker.process_one() == "processed"
    assert recorded_per_delivery(store) == {"t": 1}


@pytest.mark.parametrize(
    ("raised", "status", "error"),
    [
        (Ignore("pushed to a branch ODW does not watch"), "ignored", "pushed to a branch"),
        (KeyError("missing"), "failed", "KeyError: 'missing'"),
    ],
    ids=["ignore", "bug"],
)
def test_ignored_and_failed_deliveries_keep_no_writes(
    store: Store, raised: BaseException, status: str, error: str
) -> None:
    worker = DeliveryWorker(store, writing_router([raised]), CONFIG)
    deliver(store, "x", "star", {"action": "created"})
    assert worker.process_one() == status
    d = store.inbox.get("x")
    assert d is not None and d.status == status and error in (d.error or "")
    assert store.activity.list() == []


def test_a_dead_workers_delivery_is_reclaimed_and_processed_once(
    store: Store, clock: FakeClock
) -> None:
    (example, *_) = oracle.require("push")
    deliver(store, "p", "push", example.as_app_delivery())
    dead = DeliveryWorker(store, build_router(), CONFIG, owner="dead-worker")
    store.inbox.claim(dead.owner, CONFIG.lease_seconds)  # claimed, then the worker died
    survivor = DeliveryWorker(store, build_router(), CONFIG, owner="survivor")
    assert survivor.process_one() is None
    clock.advance(CONFIG.lease_seconds + 1)
    assert survivor.process_one() == "processed"
    d = store.inbox.get("p")
    assert d is not None and (d.processed_by, d.attempts) == ("survivor", 2)
    assert recorded_per_delivery(store) == {"p": 1}


def test_pool_stops_gracefully_and_releases_what_it_has_not_started(
    store: Store, clock: FakeClock
) -> None:
    started, release = threading.Event(), threading.Event()
    router = Router()

    @router.register("star")
    def slow(event: GitHubEvent, ctx: HandlerContext) -> None:
        started.set()
        assert release.wait(10)

    deliver(store, "a", "star", {"action": "created"})
    clock.advance(1)
    deliver(store, "b", "star", {"action": "created"})
    pool = WorkerPool(store, router, WorkerConfig(poll_seconds=0.01), threads=1).start()
    assert started.wait(10)
    stopper = threading.Thread(target=pool.stop, kwargs={"timeout": 10})
    stopper.start()
    release.set()
    stopper.join(15)
    assert not any(t.is_alive() for t in pool.threads)
    a, b = store.inbox.get("a"), store.inbox.get("b")
    assert a is not None and a.status == "processed"
    assert b is not None and (b.status, b.attempts) == ("received", 0)
