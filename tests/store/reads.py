"""Queries only the tests ask of the store (production has no caller for them)."""

from __future__ import annotations

from collections import Counter

from app.store import Store


def recorded_per_delivery(store: Store) -> Counter[str]:
    """How many typed events each delivery recorded (exactly-once checks)."""
    return Counter(event.delivery_id for event in store.activity.list())
