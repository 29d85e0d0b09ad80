"""How a handler tells the worker what became of a delivery."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from app.store import Store


class Ignore(Exception):
    """The delivery needs nothing from ODW; it is recorded as ignored with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransientError(Exception):
    """A failure worth retrying (a dependency was briefly unavailable)."""


@dataclass(frozen=True)
class HandlerContext:
    """What a handler gets besides the typed event: the delivery's id and the
    transaction that also marks the delivery processed, so its writes commit
    exactly when the delivery does."""

    delivery_id: str
    store: Store
    tx: Connection
