"""The intake process's loop over a real Unix socket and a real database:
every delivery stored once, its sender told whether it was new, nothing
answered before its commit, and a stopped intake failing loudly rather
than answering."""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event, text

from app.store import Store
from app.store.inbox import NewDelivery
from app.web.intake.batch_writer import BatchWriter
from app.web.intake.client import IntakeClient, IntakeUnavailable
from app.web.intake.listener import PrivateListener, private_listener
from app.web.intake.process import serve_intake
from app.web.intake.wire import NEW, encode


def delivery(delivery_id: str) -> NewDelivery:
    return NewDelivery(delivery_id, "push", None, 7, b'{"ref":"refs/heads/main"}')


class Intake:
    """`serve_intake` in a thread, on a listener that outlives it (as the
    master's does): `start` and `stop` may be called again."""

    def __init__(self, store: Store, listener: PrivateListener) -> None:
        self.store = store
        self.listener = listener
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        writer = BatchWriter(self.store.inbox)
        self._thread = threading.Thread(
            target=serve_intake,
            args=(writer, self.listener.sock, lambda: not self._stop.is_set(), 0.05),
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            assert not self._thread.is_alive()


@contextmanager
def intake_on(store: Store, started: bool = True) -> Iterator[Intake]:
    listener = private_listener()
    intake = Intake(store, listener)
    if started:
        intake.start()
    try:
        yield intake
    finally:
        intake.stop()
        listener.close()


def test_each_delivery_is_stored_once_and_its_sender_told_so(store: Store) -> None:
    store.inbox.record("old", "push", None, 7, b"{}")
    ids = [f"d{i}" for i in range(40)] + ["d1", "d2", "d3", "old"]
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()
    with intake_on(store) as intake:
        client = IntakeClient(intake.listener.path)

        def send(chunk: list[str]) -> None:
            for delivery_id in chunk:
                new = client.record(delivery(delivery_id))
                with lock:
                    results.append((delivery_id, new))

        threads = [threading.Thread(target=send, args=(ids[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert len(results) == len(ids)
    new = sorted(i for i, was_new in results if was_new)
    assert new == sorted(f"d{i}" for i in range(40))
    assert sum(1 for i, was_new in results if not was_new) == 4
    stored = store.inbox.get("d17")
    assert stored is not None and stored.body == b'{"ref":"refs/heads/main"}'
    assert stored.installation_id == 7 and stored.status == "received"


def test_deliveries_waiting_together_share_one_commit(store: Store) -> None:
    commits: list[int] = []
    event.listen(store.engine, "commit", lambda _conn: commits.append(1))
    with intake_on(store, started=False) as intake:
        # Twenty senders have written before the intake reads anything ...
        senders = []
        for i in range(20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(intake.listener.path)
            s.sendall(encode(delivery(f"g{i}")))
            senders.append(s)
        intake.start()
        # ... so one transaction stores them all, and each hears only after it.
        answers = [s.recv(1) for s in senders]
        for s in senders:
            s.close()
    assert answers == [NEW] * 20
    assert len(commits) == 1
    assert all(store.inbox.get(f"g{i}") is not None for i in range(20))


def test_a_malformed_frame_costs_its_own_connection_only(store: Store) -> None:
    with intake_on(store) as intake:
        client = IntakeClient(intake.listener.path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hostile:
            hostile.settimeout(10)
            hostile.connect(intake.listener.path)
            hostile.sendall(struct.pack("!I", 3) + b"abc")
            assert hostile.recv(1) == b""  # dropped, no answer
        assert client.record(delivery("after")) is True
    assert store.inbox.get("after") is not None


def test_a_database_that_refuses_is_reported_not_acknowledged(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE deliveries"))
    with intake_on(store) as intake:
        client = IntakeClient(intake.listener.path)
        with pytest.raises(IntakeUnavailable, match="could not store"):
            client.record(delivery("refused"))


def test_a_restarted_intake_takes_over_the_socket_and_kept_connections_recover(
    store: Store,
) -> None:
    with intake_on(store) as intake:
        client = IntakeClient(intake.listener.path)
        assert client.record(delivery("before")) is True
        intake.stop()  # the intake's connections close; the client still holds its own
        # A delivery sent while no intake runs waits in the socket's backlog:
        # its kept connection found closed, the client connects anew (the
        # listener turns readable: the backlog was empty) and is not refused.
        outcome: list[object] = []
        sender = threading.Thread(target=lambda: outcome.append(client.record(delivery("during"))))
        sender.start()
        waiting, _, _ = select.select([intake.listener.sock], [], [], 30)
        assert waiting, "the sender never connected again"
        assert not IntakeClient(intake.listener.path, ready_seconds=0.2).ready()
        assert sender.is_alive() and store.inbox.get("during") is None
        # ... and is stored, and answered, by the next intake.
        intake.start()
        sender.join(timeout=30)
        assert outcome == [True]
        assert client.record(delivery("before")) is False
        assert IntakeClient(intake.listener.path).ready()


def test_an_intake_that_does_not_answer_in_time_is_unavailable(store: Store) -> None:
    with intake_on(store, started=False) as intake:  # listening, never answering
        client = IntakeClient(intake.listener.path, answer_seconds=0.3)
        started = time.monotonic()
        with pytest.raises(IntakeUnavailable, match="in time"):
            client.record(delivery("late"))
        assert time.monotonic() - started < 30  # gave up, not hung


def test_no_intake_at_all_is_unavailable_at_once(tmp_path: Path) -> None:
    client = IntakeClient(str(tmp_path / "missing.sock"))
    with pytest.raises(IntakeUnavailable, match="cannot reach"):
        client.record(delivery("nowhere"))
    assert not client.ready()
