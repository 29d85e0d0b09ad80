"""Retention: finished deliveries and what was recorded from them, pruned by age.

GitHub redelivers for at most 3 days, so a finished delivery older than the
retention age (`ODW_RETENTION_DAYS`, default 14) serves no duplicate check,
and its body (comment text, repository metadata) is only a liability. A
delivery not yet finished is never pruned, whatever its age; nor are the run
event logs, projections, the outbox or leases: those are what a live run reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, select

from app.store.base import Part
from app.store.inbox import FINAL_STATUSES
from app.store.schema import deliveries, github_events

DAY = 86_400.0


@dataclass(frozen=True)
class Pruned:
    deliveries: int
    recorded_events: int


class Retention(Part):
    def prune(self, max_age_seconds: float) -> Pruned:
        """Delete finished deliveries (and their recorded events) older than the age."""
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
        return Pruned(int(rows), int(events))
