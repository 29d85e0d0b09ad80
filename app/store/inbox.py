"""The inbox: every accepted delivery, keyed by `X-GitHub-Delivery`.

A delivery is stored before the webhook is answered, claimed by one worker at
a time under a lease, and finished under that lease: a worker whose lease was
taken over cannot finish (the fence), so a delivery's effects commit once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Connection, and_, bindparam, func, or_, select, update

from app.liveness import HOST, owner_alive, process_alive
from app.metrics import CLAIMS_RECLAIMED
from app.store.base import LeaseLost, Part
from app.store.engine import REPEATABLE
from app.store.schema import deliveries

# `rejected`: a signed payload ODW refuses (the shape, a value no column takes);
# `failed`: ODW could not process an acceptable one.
Status = Literal["received", "processing", "processed", "ignored", "rejected", "failed"]
FINAL_STATUSES: tuple[Status, ...] = ("processed", "ignored", "rejected", "failed")


@dataclass(frozen=True)
class Delivery:
    id: str
    event: str
    action: str | None
    installation_id: int | None
    body: bytes
    status: Status
    attempts: int
    error: str | None
    received_at: float
    finished_at: float | None
    lease_owner: str | None
    processed_by: str | None

    def to_api(self) -> dict[str, object]:
        return {
            "id": self.id,
            "event": self.event,
            "action": self.action,
            "status": self.status,
            "attempts": self.attempts,
            "error": self.error,
        }


@dataclass(frozen=True)
class NewDelivery:
    """A delivery as the edge hands it to the inbox."""

    id: str
    event: str
    action: str | None
    installation_id: int | None
    body: bytes


_COLUMNS = (
    "id, event, action, installation_id, body, received_at, status, attempts, next_attempt_at"
)


_ON_CONFLICT = "ON CONFLICT (id) DO NOTHING RETURNING id"


@functools.lru_cache(maxsize=64)
def _insert_sql(rows: int, mark: str) -> str:
    # Only fixed names and placeholders: the values travel as parameters.
    one = "(" + ", ".join([mark] * 9) + ")"
    values = ", ".join([one] * rows)
    return f"INSERT INTO {deliveries.name} ({_COLUMNS}) VALUES {values} " + _ON_CONFLICT  # noqa: S608


class Inbox(Part):
    def _repeatable(self) -> AbstractContextManager[Connection]:
        """A transaction for the worker's side, which is safe to repeat."""
        return self._write(**REPEATABLE)

    def record(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        installation_id: int | None,
        body: bytes,
        *,
        tx: Connection | None = None,
    ) -> bool:
        """Store a delivery; False when the id was seen before (nothing changes)."""
        new = NewDelivery(delivery_id, event, action, installation_id, body)
        return delivery_id in self.record_many([new], tx=tx)

    def record_many(
        self, batch: Sequence[NewDelivery], *, tx: Connection | None = None
    ) -> set[str]:
        """Store deliveries in one statement and one transaction (one sync);
        the ids that were new. A repeated id, in the batch or already stored,
        changes nothing; within the batch the first one counts.

        One multi-row INSERT straight to the driver: this is the webhook
        path's only write, and per-row statement building dominated it.
        """
        unique: dict[str, NewDelivery] = {}
        for d in batch:
            unique.setdefault(d.id, d)
        if not unique:
            return set()
        now = self.clock()
        params: list[object] = []
        for d in unique.values():
            params += [d.id, d.event, d.action, d.installation_id, d.body]
            params += [now, "received", 0, now]
        sql = _insert_sql(len(unique), "%s" if self.is_postgres else "?")
        with self._tx(tx) as conn:
            return {row[0] for row in conn.exec_driver_sql(sql, tuple(params))}

    def get(self, delivery_id: str, *, tx: Connection | None = None) -> Delivery | None:
        with self._read(tx) as conn:
            row = conn.execute(
                select(deliveries).where(deliveries.c.id == delivery_id)
            ).one_or_none()
        return None if row is None else _delivery(row)

    def claim(self, owner: str, lease_seconds: float, limit: int = 1) -> list[Delivery]:
        """Take up to `limit` due deliveries: new or retrying ones whose time has
        come, and ones whose holder's lease expired (a dead worker's)."""
        now = self.clock()
        waiting = and_(deliveries.c.status == "received", deliveries.c.next_attempt_at <= now)
        abandoned = and_(deliveries.c.status == "processing", deliveries.c.lease_expires_at < now)
        due = or_(waiting, abandoned)
        # Two queries, not one with `OR`: the index on (status, next_attempt_at)
        # gives the waiting ones in order, so taking the first few reads a few
        # rows; under `OR` every due row was sorted first, and a burst's backlog
        # made each claim cost its size.
        queries = [
            select(deliveries.c.id, deliveries.c.next_attempt_at)
            .where(condition)
            .order_by(deliveries.c.next_attempt_at)
            .limit(limit)
            for condition in (waiting, abandoned)
        ]
        if self.is_postgres:
            queries = [q.with_for_update(skip_locked=True) for q in queries]
        with self._repeatable() as conn:
            found = [(row, q is queries[1]) for q in queries for row in conn.execute(q)]
            ids = [row[0] for row, _ in sorted(found, key=lambda f: f[0][1])[:limit]]
            reclaiming = {row[0] for row, was_abandoned in found if was_abandoned}
            if not ids:
                return []
            conn.execute(
                update(deliveries)
                .where(deliveries.c.id.in_(ids), due)
                .values(
                    status="processing",
                    lease_owner=owner,
                    lease_expires_at=now + lease_seconds,
                    attempts=deliveries.c.attempts + 1,
                )
            )
            rows = conn.execute(
                select(deliveries).where(
                    deliveries.c.id.in_(ids), deliveries.c.lease_owner == owner
                )
            ).all()
        if reclaimed := sum(1 for r in rows if r.id in reclaiming):
            CLAIMS_RECLAIMED.labels(queue="inbox").inc(reclaimed)
        return sorted((_delivery(r) for r in rows), key=lambda d: ids.index(d.id))

    def heartbeat(self, delivery_id: str, owner: str, lease_seconds: float) -> bool:
        with self._repeatable() as conn:
            return (
                conn.execute(
                    update(deliveries)
                    .where(_held(delivery_id, owner))
                    .values(lease_expires_at=self.clock() + lease_seconds)
                ).rowcount
                == 1
            )

    @contextmanager
    def finishing(
        self, delivery_id: str, owner: str, status: Status, error: str | None = None
    ) -> Iterator[Connection]:
        """A transaction that first marks the delivery finished under the lease,
        then lets the caller write the delivery's effects; all or nothing.

        Raises LeaseLost (and writes nothing) when the lease was taken over.
        """
        with self._repeatable() as conn:
            self._finish(conn, delivery_id, owner, status, error)
            yield conn

    def finish(
        self, delivery_id: str, owner: str, status: Status, error: str | None = None
    ) -> None:
        with self._repeatable() as conn:
            self._finish(conn, delivery_id, owner, status, error)

    def retry_later(self, delivery_id: str, owner: str, error: str, at: float) -> None:
        """Give the delivery back for another attempt at time `at`."""
        with self._repeatable() as conn:
            n = conn.execute(
                update(deliveries)
                .where(_held(delivery_id, owner))
                .values(
                    status="received",
                    next_attempt_at=at,
                    error=error,
                    lease_owner=None,
                    lease_expires_at=None,
                )
            ).rowcount
        if n != 1:
            raise LeaseLost(delivery_id)

    def release(self, delivery_id: str, owner: str) -> bool:
        """Hand a claimed delivery back untouched (graceful shutdown)."""
        with self._repeatable() as conn:
            return (
                conn.execute(
                    update(deliveries)
                    .where(_held(delivery_id, owner))
                    .values(
                        status="received",
                        attempts=deliveries.c.attempts - 1,
                        lease_owner=None,
                        lease_expires_at=None,
                    )
                ).rowcount
                == 1
            )

    def release_dead(self, alive: Callable[[str, int], bool] = process_alive) -> int:
        """Make due again the deliveries held by workers of this host whose
        process is gone (a worker stopped before it finished, or killed), so a
        restart takes them up at once instead of after their lease; how many.
        A worker's owner is `host:pid:...` (`app.service.worker.new_owner`);
        holders on other hosts are judged by their lease's expiry, as before."""
        with self._read(None) as conn:
            held = conn.execute(
                select(deliveries.c.id, deliveries.c.lease_owner).where(
                    deliveries.c.status == "processing",
                    deliveries.c.lease_owner.startswith(f"{HOST}:", autoescape=True),
                )
            ).all()
        dead = {o for _, o in held if not owner_alive(o, alive)}
        returned = 0
        for delivery_id, owner in held:
            if owner not in dead:
                continue
            with self._repeatable() as conn:
                returned += conn.execute(
                    update(deliveries)
                    .where(_held(delivery_id, owner))
                    .values(
                        status="received",
                        next_attempt_at=self.clock(),
                        lease_owner=None,
                        lease_expires_at=None,
                    )
                ).rowcount
        return returned

    def counts(self) -> dict[tuple[str, str], int]:
        """Deliveries by (event, status)."""
        with self._read(None) as conn:
            q = select(deliveries.c.event, deliveries.c.status, func.count()).group_by(
                deliveries.c.event, deliveries.c.status
            )
            return {(e, s): int(n) for e, s, n in conn.execute(q)}

    def recent(self, limit: int) -> list[Delivery]:
        """The newest `limit` deliveries, newest first, without their bodies (b"")."""
        cols = [c for c in deliveries.c if c.name != "body"]
        q = select(*cols).order_by(deliveries.c.received_at.desc()).limit(limit)
        with self._read(None) as conn:
            return [_delivery(row) for row in conn.execute(q)]

    def waiting(self) -> tuple[dict[str, int], float | None]:
        """Unfinished deliveries by status (`received`, `processing`), and when
        the earliest of them was received (None when there is none)."""
        unfinished = ("received", "processing")
        q = (
            select(deliveries.c.status, func.count(), func.min(deliveries.c.received_at))
            .where(deliveries.c.status.in_(unfinished))
            .group_by(deliveries.c.status)
        )
        with self._read(None) as conn:
            rows = conn.execute(q).all()
        counts = dict.fromkeys(unfinished, 0)
        counts.update({s: int(n) for s, n, _ in rows})
        return counts, min((float(at) for _, _, at in rows), default=None)

    def _finish(
        self,
        conn: Connection,
        delivery_id: str,
        owner: str,
        status: Status,
        error: str | None,
    ) -> None:
        n = conn.execute(
            _FINISH,
            {"b_id": delivery_id, "b_owner": owner, "b_status": status, "b_error": error,
             "b_at": self.clock()},
        ).rowcount  # fmt: skip
        if n != 1:
            raise LeaseLost(delivery_id)


def _held(delivery_id: object, owner: object):  # type: ignore[no-untyped-def]
    """The fence: the delivery is still processing under `owner`'s lease."""
    return and_(
        deliveries.c.id == delivery_id,
        deliveries.c.status == "processing",
        deliveries.c.lease_owner == owner,
    )


# Built once: the worker finishes every delivery with it, and building an
# UPDATE (its values coerced, its cache key made) cost more than running it.
_FINISH = (
    update(deliveries)
    .where(_held(bindparam("b_id"), bindparam("b_owner")))
    .values(
        status=bindparam("b_status"),
        error=bindparam("b_error"),
        finished_at=bindparam("b_at"),
        processed_by=bindparam("b_owner"),
        lease_owner=None,
        lease_expires_at=None,
    )
)


def _delivery(row) -> Delivery:  # type: ignore[no-untyped-def]
    return Delivery(
        id=row.id,
        event=row.event,
        action=row.action,
        installation_id=row.installation_id,
        body=bytes(getattr(row, "body", b"")),
        status=row.status,
        attempts=row.attempts,
        error=row.error,
        received_at=row.received_at,
        finished_at=row.finished_at,
        lease_owner=row.lease_owner,
        processed_by=row.processed_by,
    )
