"""Durable state: inbox, per-run event log, projections, outbox, leases.

Importable without Flask; open with `Store.open(url)`.
"""

from app.engine.ports import ConcurrencyError
from app.store.base import LeaseLost, StoreError
from app.store.event_log import EventLog
from app.store.inbox import Delivery, Inbox
from app.store.leases import Hold, Leases
from app.store.outbox import Effect, Outbox
from app.store.store import SchemaOutOfDate, Store, sqlite_url

__all__ = [
    "ConcurrencyError",
    "Delivery",
    "Effect",
    "EventLog",
    "Hold",
    "Inbox",
    "LeaseLost",
    "Leases",
    "Outbox",
    "SchemaOutOfDate",
    "Store",
    "StoreError",
    "sqlite_url",
]
