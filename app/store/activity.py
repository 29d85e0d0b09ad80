"""Typed GitHub events the worker recorded, ready for the handlers that act on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from app.store.base import Part, dumps, loads
from app.store.schema import github_events


@dataclass(frozen=True)
class RecordedEvent:
    id: int
    delivery_id: str
    event: str
    action: str | None
    installation_id: int | None
    repository: str | None
    subject: str | None
    data: dict[str, Any]


_RECORD = github_events.insert()


class Activity(Part):
    def record(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        *,
        installation_id: int | None,
        repository: str | None,
        subject: str | None,
        data: dict[str, Any],
        tx: Connection,
    ) -> None:
        tx.execute(
            _RECORD,  # built once: building an INSERT per event cost more than running it
            {
                "delivery_id": delivery_id,
                "event": event,
                "action": action,
                "installation_id": installation_id,
                "repository": repository,
                "subject": subject,
                "data": dumps(data),
                "recorded_at": self.clock(),
            },
        )

    def list(
        self, *, event: str | None = None, delivery_id: str | None = None
    ) -> list[RecordedEvent]:
        q = select(github_events).order_by(github_events.c.id)
        if event is not None:
            q = q.where(github_events.c.event == event)
        if delivery_id is not None:
            q = q.where(github_events.c.delivery_id == delivery_id)
        with self._read(None) as conn:
            return [
                RecordedEvent(
                    r.id,
                    r.delivery_id,
                    r.event,
                    r.action,
                    r.installation_id,
                    r.repository,
                    r.subject,
                    loads(r.data),
                )
                for r in conn.execute(q)
            ]
