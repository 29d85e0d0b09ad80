"""Leases: named ownership with expiry and heartbeat (run ownership, merge locks).

A lease is adopted only when it is absent or expired, and even an expired
lease is not taken from a holder whose process is still running on this host:
an old heartbeat alone never displaces a live owner. Holders on other hosts
cannot be checked, so for them expiry is the evidence.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, delete, select, update

from app.store.base import Clock, Part
from app.store.schema import leases

Liveness = Callable[[str, int], bool]
HOST = socket.gethostname()


def process_alive(host: str, pid: int) -> bool:
    """True when `pid` is a running process on this host; False when it is
    not, or when the holder is on another host (nothing to check there)."""
    if host != HOST or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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

    def acquire(self, name: str, owner: str, ttl: float) -> bool:
        """Take or renew the lease; False while another owner holds it."""
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
                return conn.execute(stmt.returning(stmt.table.c.name)).first() is not None
            live = current.expires_at >= now or self.alive(current.host, current.pid)
            if current.owner != owner and live:
                return False
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
            return n == 1

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


class LockTimeout(TimeoutError):
    """The merge lock stayed held by someone else for the whole timeout."""


class LeaseMergeLock:
    """A merge lock backed by leases, shaped like the integration's MergeLock:
    `with lock.hold(key, timeout): ...`. The lease is heartbeated while held,
    so a crashed holder's lock frees itself after `ttl` seconds."""

    def __init__(
        self,
        leases_: Leases,
        owner: str,
        *,
        ttl: float = 60.0,
        poll: float = 0.2,
        prefix: str = "merge:",
    ) -> None:
        self.leases = leases_
        self.owner = owner
        self.ttl = ttl
        self.poll = poll
        self.prefix = prefix

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        name = self.prefix + key
        deadline = time.monotonic() + timeout
        while not self.leases.acquire(name, self.owner, self.ttl):
            if time.monotonic() >= deadline:
                holder = self.leases.holder(name)
                who = holder.owner if holder else "nobody"
                raise LockTimeout(f"merge lock {key!r} still held by {who} after {timeout:g}s")
            time.sleep(self.poll)
        stop = threading.Event()
        beat = threading.Thread(target=self._beat, args=(name, stop), daemon=True)
        beat.start()
        try:
            yield
        finally:
            stop.set()
            beat.join()
            self.leases.release(name, self.owner)

    def _beat(self, name: str, stop: threading.Event) -> None:
        while not stop.wait(self.ttl / 3):
            self.leases.heartbeat(name, self.owner, self.ttl)
