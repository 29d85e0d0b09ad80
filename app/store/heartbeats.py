"""Service heartbeats: each process that acts on deliveries renews its row every
second while all its threads run, so a command reading the same database
(`odw app run`) can tell whether anything will act on what it records, and
`/healthz` whether a delivery worker is alive."""

from __future__ import annotations

import os
from dataclasses import dataclass

from sqlalchemy import delete, select

from app.liveness import HOST
from app.store.base import Part
from app.store.schema import service_heartbeats

# A row not renewed for this long is a process that is gone.
LIVE_SECONDS = 20.0
# Renewed every second (`app/service/heartbeat.Pulse`): `/healthz` counts a
# worker down after this long without it (hung, or a thread died).
STALE_SECONDS = 5.0
# Rows of processes gone this long are deleted when another beats.
FORGET_SECONDS = 86_400.0


@dataclass(frozen=True)
class Heartbeat:
    process: str
    host: str
    pid: int
    acts_on_runs: bool
    started_at: float
    seen_at: float


class Heartbeats(Part):
    def beat(self, process: str, *, acts_on_runs: bool) -> None:
        """Renew `process`'s row (create it the first time)."""
        now = self.clock()
        stmt = self._insert(service_heartbeats).values(
            process=process, host=HOST, pid=os.getpid(), acts_on_runs=int(acts_on_runs),
            started_at=now, seen_at=now,
        )  # fmt: skip
        stmt = stmt.on_conflict_do_update(
            index_elements=["process"], set_={"seen_at": now, "acts_on_runs": int(acts_on_runs)}
        )
        with self._write() as conn:
            conn.execute(stmt)
            gone = service_heartbeats.c.seen_at < now - FORGET_SECONDS
            conn.execute(delete(service_heartbeats).where(gone))

    def end(self, process: str) -> None:
        """`process` stops: its row goes at once."""
        with self._write() as conn:
            conn.execute(delete(service_heartbeats).where(service_heartbeats.c.process == process))

    def live(self, within: float = LIVE_SECONDS) -> list[Heartbeat]:
        """The processes seen in the last `within` seconds, newest first."""
        q = (
            select(service_heartbeats)
            .where(service_heartbeats.c.seen_at >= self.clock() - within)
            .order_by(service_heartbeats.c.seen_at.desc())
        )
        with self._read(None) as conn:
            return [
                Heartbeat(r.process, r.host, r.pid, bool(r.acts_on_runs), r.started_at, r.seen_at)
                for r in conn.execute(q)
            ]
