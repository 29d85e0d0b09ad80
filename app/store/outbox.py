"""The outbox: effects recorded in the same transaction as the decision that
made them, performed later by an executor, each identified by an idempotency
key so a crash between "done" and "recorded" repeats the effect's check, not
the effect."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection, and_, func, or_, select, update

from app.liveness import HOST, owner_alive, process_alive
from app.metrics import CLAIMS_RECLAIMED
from app.store.base import Part, dumps, loads
from app.store.schema import outbox

EffectStatus = Literal["pending", "in_flight", "done", "dead"]


@dataclass(frozen=True)
class Effect:
    key: str
    kind: str
    run_id: str | None
    payload: dict[str, Any]
    status: EffectStatus
    attempts: int
    next_attempt_at: float
    last_error: str | None
    result: Any


class Outbox(Part):
    def enqueue(
        self,
        key: str,
        kind: str,
        payload: dict[str, Any],
        *,
        run_id: str | None = None,
        not_before: float | None = None,
        tx: Connection | None = None,
    ) -> bool:
        """Record an effect; False (and nothing changes) when the key exists."""
        now = self.clock()
        stmt = (
            self._insert(outbox)
            .values(
                key=key,
                kind=kind,
                run_id=run_id,
                payload=dumps(payload),
                status="pending",
                attempts=0,
                next_attempt_at=now if not_before is None else not_before,
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_nothing(index_elements=["key"])
        )
        with self._tx(tx) as conn:
            return conn.execute(stmt.returning(stmt.table.c.key)).first() is not None

    def claim(
        self,
        owner: str,
        lease_seconds: float,
        limit: int = 1,
        *,
        kinds: Collection[str] | None = None,
    ) -> list[Effect]:
        """Take due effects, and in-flight ones whose executor's lease expired;
        with `kinds`, only effects of those kinds (a lane that never waits behind others)."""
        now = self.clock()
        due = or_(
            and_(outbox.c.status == "pending", outbox.c.next_attempt_at <= now),
            and_(outbox.c.status == "in_flight", outbox.c.lease_expires_at < now),
        )
        if kinds is not None:
            due = and_(due, outbox.c.kind.in_(list(kinds)))
        q = (
            select(outbox.c.key, outbox.c.status)
            .where(due)
            .order_by(outbox.c.next_attempt_at)
            .limit(limit)
        )
        if self.is_postgres:
            q = q.with_for_update(skip_locked=True)
        with self._write() as conn:
            found = conn.execute(q).all()
            keys = [k for k, _ in found]
            if not keys:
                return []
            conn.execute(
                update(outbox)
                .where(outbox.c.key.in_(keys), due)
                .values(
                    status="in_flight",
                    lease_owner=owner,
                    lease_expires_at=now + lease_seconds,
                    attempts=outbox.c.attempts + 1,
                    updated_at=now,
                )
            )
            rows = conn.execute(
                select(outbox).where(outbox.c.key.in_(keys), outbox.c.lease_owner == owner)
            ).all()
        abandoned = {k for k, status in found if status == "in_flight"}
        if reclaimed := sum(1 for r in rows if r.key in abandoned):
            CLAIMS_RECLAIMED.labels(queue="outbox").inc(reclaimed)
        return [_effect(r) for r in rows]

    def complete(
        self,
        key: str,
        owner: str,
        result: Any = None,
        *,
        attempt: int,
        tx: Connection | None = None,
    ) -> bool:
        """Mark done; False when the effect is no longer held by `owner` under the
        claim that returned it with `attempts == attempt` (see `_settle`)."""
        values = {"status": "done", "result": dumps(result)}
        return self._settle(key, owner, attempt, values, tx)

    def fail(
        self,
        key: str,
        owner: str,
        error: str,
        *,
        attempt: int,
        retry_at: float | None,
        tx: Connection | None = None,
    ) -> bool:
        """Record a failed attempt: back to pending at `retry_at`, or dead if None."""
        values: dict[str, Any] = {"last_error": error}
        if retry_at is None:
            values["status"] = "dead"
        else:
            values.update(status="pending", next_attempt_at=retry_at)
        return self._settle(key, owner, attempt, values, tx)

    def extend(self, key: str, owner: str, *, attempt: int, lease_seconds: float) -> bool:
        """Keep a claim while its effect is being performed (the executor's
        heartbeat); False once the claim is no longer `owner`'s at `attempt`."""
        now = self.clock()
        with self._write() as conn:
            n = conn.execute(
                update(outbox)
                .where(*_held_by(key, owner, attempt))
                .values(lease_expires_at=now + lease_seconds, updated_at=now)
            ).rowcount
        return n == 1

    def get(self, key: str, *, tx: Connection | None = None) -> Effect | None:
        with self._read(tx) as conn:
            row = conn.execute(select(outbox).where(outbox.c.key == key)).one_or_none()
        return None if row is None else _effect(row)

    def list(self, *, run_id: str | None = None, tx: Connection | None = None) -> list[Effect]:
        q = select(outbox).order_by(outbox.c.created_at, outbox.c.key)
        if run_id is not None:
            q = q.where(outbox.c.run_id == run_id)
        with self._read(tx) as conn:
            return [_effect(r) for r in conn.execute(q)]

    def release_dead(self, alive: Callable[[str, int], bool] = process_alive) -> int:
        """Make due again the effects held by executors of this host whose
        process is gone (stopped mid-effect, or killed), so a restart performs
        them at once instead of after their lease; how many. The attempt
        stays counted, so the performer knows it may have run before."""
        with self._read(None) as conn:
            held = conn.execute(
                select(outbox.c.key, outbox.c.lease_owner, outbox.c.attempts).where(
                    outbox.c.status == "in_flight",
                    outbox.c.lease_owner.startswith(f"{HOST}:", autoescape=True),
                )
            ).all()
        gone = [(k, o, n) for k, o, n in held if not owner_alive(o, alive)]
        now = self.clock()
        return sum(
            self._settle(key, owner, n, {"status": "pending", "next_attempt_at": now}, None)
            for key, owner, n in gone
        )

    def backlog(self) -> dict[str, int]:
        """Effects by status."""
        with self._read(None) as conn:
            q = select(outbox.c.status, func.count()).group_by(outbox.c.status)
            return {s: int(n) for s, n in conn.execute(q)}

    def waiting(self) -> tuple[dict[tuple[str, str], int], float | None]:
        """Effects not done, by (kind, status) over `pending`, `in_flight` and
        `dead`, and when the earliest unperformed one (not dead) was recorded."""
        q = (
            select(outbox.c.kind, outbox.c.status, func.count(), func.min(outbox.c.created_at))
            .where(outbox.c.status.in_(("pending", "in_flight", "dead")))
            .group_by(outbox.c.kind, outbox.c.status)
        )
        with self._read(None) as conn:
            rows = conn.execute(q).all()
        oldest = min((float(at) for _, s, _, at in rows if s != "dead"), default=None)
        return {(k, s): int(n) for k, s, n, _ in rows}, oldest

    def _settle(
        self, key: str, owner: str, attempt: int, values: dict[str, Any], tx: Connection | None
    ) -> bool:
        """The fenced settlement. Every claim counts `attempts` up, so the attempt a
        claim returned is its fencing token: a claimant whose lease expired and was
        claimed again, even by the same owner (another thread of one executor),
        settles nothing, refused by the UPDATE's own WHERE clause."""
        with self._tx(tx) as conn:
            n = conn.execute(
                update(outbox)
                .where(*_held_by(key, owner, attempt))
                .values(**values, lease_owner=None, lease_expires_at=None, updated_at=self.clock())
            ).rowcount
        return n == 1


def _held_by(key: str, owner: str, attempt: int) -> tuple[Any, ...]:
    """The claim's fence: `key` is in flight, claimed by `owner` at `attempt`."""
    return (
        outbox.c.key == key,
        outbox.c.status == "in_flight",
        outbox.c.lease_owner == owner,
        outbox.c.attempts == attempt,
    )


def _effect(row) -> Effect:  # type: ignore[no-untyped-def]
    return Effect(
        key=row.key,
        kind=row.kind,
        run_id=row.run_id,
        payload=loads(row.payload),
        status=row.status,
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        result=loads(row.result),
    )
