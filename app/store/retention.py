"""Retention: finished deliveries and what was recorded from them, pruned by age.

GitHub redelivers for at most 3 days, so a finished delivery older than the
retention age (`ODW_RETENTION_DAYS`, default 14) serves no duplicate check,
and its body (comment text, repository metadata) is only a liability. A
delivery not yet finished is never pruned, whatever its age; nor are the run
event logs, projections or leases: those are what a live run reads.

An outbox entry is an idempotency key: while its run is live, a repeated
decision must find it done. So only entries that are done, untouched for the
retention age, and of no run or of a run that has ended (its log holds
`run-ended`) are pruned; pending, in-flight and given-up entries stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, or_, select

from app.store.base import Part
from app.store.inbox import FINAL_STATUSES
from app.store.schema import deliveries, github_events, outbox, run_events


@dataclass(frozen=True)
class Pruned:
    deliveries: int
    recorded_events: int
    outbox: int = 0


class Retention(Part):
    def prune(self, max_age_seconds: float) -> Pruned:
        """Delete finished deliveries (and their recorded events) and done outbox
        entries of ended runs, older than the age."""
        cutoff = self.clock() - max_age_seconds
        old = and_(
            deliveries.c.status.in_(FINAL_STATUSES),
            deliveries.c.finished_at < cutoff,
            deliveries.c.received_at < cutoff,
        )
        with self._write() as conn:
            events = conn.execute(
                delete(github_events).where(
                    github_events.c.delivery_id.in_(select(deliveries.c.id).where(old))
                )
            ).rowcount
            rows = conn.execute(delete(deliveries).where(old)).rowcount
            ended = select(run_events.c.run_id).where(run_events.c.type == "run-ended")
            effects = conn.execute(
                delete(outbox).where(
                    outbox.c.status == "done",
                    outbox.c.updated_at < cutoff,
                    or_(outbox.c.run_id.is_(None), outbox.c.run_id.in_(ended)),
                )
            ).rowcount
        return Pruned(int(rows), int(events), int(effects))
