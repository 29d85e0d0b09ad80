"""Leases: named ownership with expiry and heartbeat (run ownership; the merge lock
across processes, `app.gitops.lock.LeaseMergeLock`, is built on them).

A lease is adopted only when it is absent or expired, and even an expired
lease is not taken from a holder whose process is still running on this host:
an old heartbeat alone never displaces a live owner. Holders on other hosts
cannot be checked, so for them expiry is the evidence.

An acquisition is a `Hold`: the owner and the moment it took the lease
(renewals keep that moment; losing the lease and taking it again makes a new
one). A hold is the fencing token: `fence` refuses, inside the writer's own
transaction, a write by a hold that is no longer the lease's, so a holder that
stalled past its expiry cannot overwrite what its successor wrote, even when
the same owner has taken the lease again since.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, delete, select, update

from app.liveness import HOST, process_alive
from app.metrics import LEASES_ADOPTED
from app.store.base import Clock, LeaseLost, Part
from app.store.schema import leases

Liveness = Callable[[str, int], bool]


@dataclass(frozen=True)
class Hold:
    name: str
    owner: str
    acquired_at: float


@dataclass(frozen=True)
class Lease:
    name: str
    owner: str
    host: str
    pid: int
    acquired_at: float
    heartbeat_at: float
    expires_at: float


class Leases(Part):
    def __init__(
        self, engine: Engine, clock: Clock = time.time, alive: Liveness = process_alive
    ) -> None:
        super().__init__(engine, clock)
        self.alive = alive

    def acquire(self, name: str, owner: str, ttl: float) -> Hold | None:
        """Take the lease, or renew it when `owner` holds it already; None while
        another owner holds it. An owner names one holder: two holders that must
        exclude each other need two owners (as `LeaseMergeLock` gives each hold).
        """
        now = self.clock()
        with self._write() as conn:
            current = self._get(conn, name, lock=True)
            if current is None:
                stmt = (
                    self._insert(leases)
                    .values(
                        name=name,
                        owner=owner,
                        host=HOST,
                        pid=os.getpid(),
                        acquired_at=now,
                        heartbeat_at=now,
                        expires_at=now + ttl,
                    )
                    .on_conflict_do_nothing(index_elements=["name"])
                )
                taken = conn.execute(stmt.returning(stmt.table.c.name)).first() is not None
                return Hold(name, owner, now) if taken else None
            live = current.expires_at >= now or self.alive(current.host, current.pid)
            if current.owner != owner and live:
                return None
            acquired_at = current.acquired_at if current.owner == owner else now
            n = conn.execute(
                update(leases)
                .where(
                    leases.c.name == name,
                    leases.c.owner == current.owner,
                    leases.c.expires_at == current.expires_at,
                )
                .values(
                    owner=owner,
                    host=HOST,
                    pid=os.getpid(),
                    acquired_at=acquired_at,
                    heartbeat_at=now,
                    expires_at=now + ttl,
                )
            ).rowcount
        if n == 1 and current.owner != owner:
            LEASES_ADOPTED.labels(lease=name.split(":", 1)[0]).inc()
        return Hold(name, owner, acquired_at) if n == 1 else None

    def renew(self, hold: Hold, ttl: float) -> bool:
        """Extend `hold`'s lease; False when the lease is no longer this hold's."""
        now = self.clock()
        with self._write() as conn:
            n = conn.execute(
                update(leases).where(*_is(hold)).values(heartbeat_at=now, expires_at=now + ttl)
            ).rowcount
        return n == 1

    def fence(self, hold: Hold, *, tx: Connection | None = None) -> None:
        """Raise `LeaseLost` unless the lease is still `hold`'s. In the writer's
        transaction the row stays locked (PostgreSQL) or the database's one
        writer is this one (SQLite) until it commits, so no adoption slips in
        between this check and the write it guards."""
        with self._tx(tx) as conn:
            n = conn.execute(
                update(leases).where(*_is(hold)).values(heartbeat_at=self.clock())
            ).rowcount
        if n != 1:
            raise LeaseLost(hold.name)

    def heartbeat(self, name: str, owner: str, ttl: float) -> bool:
        """Extend the lease; False when `owner` no longer holds it."""
        now = self.clock()
        with self._write() as conn:
            n = conn.execute(
                update(leases)
                .where(leases.c.name == name, leases.c.owner == owner)
                .values(heartbeat_at=now, expires_at=now + ttl)
            ).rowcount
        return n == 1

    def release(self, name: str, owner: str) -> bool:
        with self._write() as conn:
            n = conn.execute(
                delete(leases).where(leases.c.name == name, leases.c.owner == owner)
            ).rowcount
        return n == 1

    def holder(self, name: str) -> Lease | None:
        with self._read(None) as conn:
            return self._get(conn, name, lock=False)

    def _get(self, conn: Connection, name: str, *, lock: bool) -> Lease | None:
        q = select(leases).where(leases.c.name == name)
        if lock and self.is_postgres:
            q = q.with_for_update()
        row = conn.execute(q).one_or_none()
        if row is None:
            return None
        return Lease(
            name=row.name,
            owner=row.owner,
            host=row.host,
            pid=row.pid,
            acquired_at=row.acquired_at,
            heartbeat_at=row.heartbeat_at,
            expires_at=row.expires_at,
        )


def _is(hold: Hold) -> tuple[Any, ...]:
    return (
        leases.c.name == hold.name,
        leases.c.owner == hold.owner,
        leases.c.acquired_at == hold.acquired_at,
    )
